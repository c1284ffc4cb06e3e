from __future__ import annotations

import numpy as np
import pytest

from engine.audio import AudioBlock, StreamResampler, resample


def _tone(rate: int, seconds: float, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_streamed_in_odd_blocks_equals_one_shot() -> None:
    signal = _tone(48000, 1.0)
    stream = StreamResampler(48000, 16000)
    pieces = [stream.process(signal[i : i + 997]) for i in range(0, signal.size, 997)]
    pieces.append(stream.flush())
    streamed = np.concatenate(pieces)
    whole = resample(signal, 48000, 16000)
    assert abs(streamed.size - 16000) <= 1
    n = min(streamed.size, whole.size)
    np.testing.assert_allclose(streamed[:n], whole[:n], atol=1e-3)


def test_resampled_tone_keeps_its_frequency() -> None:
    out = resample(_tone(44100, 1.0, 1000.0), 44100, 16000)
    spectrum = np.abs(np.fft.rfft(out))
    assert np.argmax(spectrum) * 16000 / out.size == pytest.approx(1000.0, abs=2.0)


def test_same_rate_passes_through() -> None:
    stream = StreamResampler(16000, 16000)
    data = _tone(16000, 0.1)
    assert stream.passthrough
    np.testing.assert_array_equal(stream.process(data), data)


def test_blocks_stay_on_the_source_clock() -> None:
    stream = StreamResampler(48000, 16000)
    signal = _tone(48000, 0.5)
    blocks = [
        stream.process_block(AudioBlock(signal[i : i + 4800], 48000, 3.0 + i / 48000))
        for i in range(0, signal.size, 4800)
    ]
    assert blocks[0].start_s == pytest.approx(3.0)
    for before, after in zip(blocks, blocks[1:], strict=False):
        assert after.start_s == pytest.approx(before.end_s)
    with pytest.raises(ValueError):
        stream.process_block(AudioBlock(signal[:10], 44100, 0.0))


def test_stereo_and_bad_arguments() -> None:
    stereo = np.stack([_tone(32000, 0.2), _tone(32000, 0.2, 880.0)], axis=1)
    stream = StreamResampler(32000, 16000, channels=2)
    out = np.concatenate([stream.process(stereo), stream.flush()])
    assert out.shape[1] == 2 and abs(out.shape[0] - 3200) <= 1
    with pytest.raises(RuntimeError, match="flushed"):
        stream.process(stereo)
    for rate in (0, -16000, 44100.5):
        with pytest.raises(ValueError):
            StreamResampler(rate, 16000)
    with pytest.raises(ValueError):
        StreamResampler(16000, 8000, quality="best")
    with pytest.raises(ValueError):
        StreamResampler(48000, 16000).process(stereo)
