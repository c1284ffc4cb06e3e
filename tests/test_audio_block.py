from __future__ import annotations

import numpy as np
import pytest

from engine.audio import AudioBlock


def test_properties() -> None:
    block = AudioBlock(np.zeros(1600, np.float32), 16000, start_s=2.0)
    assert block.n_frames == 1600 and block.channels == 1
    assert block.duration_s == pytest.approx(0.1)
    assert block.end_s == pytest.approx(2.1)


def test_from_array_scales_integer_pcm() -> None:
    block = AudioBlock.from_array(np.array([-32768, 0, 16384], np.int16), 8000)
    assert block.samples.dtype == np.float32
    np.testing.assert_allclose(block.samples, [-1.0, 0.0, 0.5])
    unsigned = AudioBlock.from_array(np.array([0, 128, 255], np.uint8), 8000)
    np.testing.assert_allclose(unsigned.samples, [-1.0, 0.0, 127 / 128], atol=1e-6)


@pytest.mark.parametrize(
    ("samples", "rate", "error"),
    [
        (np.zeros(4, np.float64), 16000, TypeError),
        (np.zeros((2, 2, 2), np.float32), 16000, ValueError),
        (np.zeros(4, np.float32), 0, ValueError),
        (np.zeros(4, np.float32), 16000.5, TypeError),
        ([0.0, 1.0], 16000, TypeError),
    ],
)
def test_rejects_bad_input(samples, rate, error) -> None:
    with pytest.raises(error):
        AudioBlock(samples, rate)


def test_rejects_non_finite_start() -> None:
    with pytest.raises(ValueError):
        AudioBlock(np.zeros(4, np.float32), 16000, float("nan"))


def test_mono_averages_channels() -> None:
    stereo = AudioBlock(np.array([[1.0, 0.0], [0.5, 0.5]], np.float32), 48000, 1.0)
    mono = stereo.mono()
    assert stereo.channels == 2 and mono.channels == 1
    np.testing.assert_allclose(mono.samples, [0.5, 0.5])
    assert mono.start_s == 1.0


def test_slice_time_keeps_source_clock() -> None:
    block = AudioBlock(np.arange(100, dtype=np.float32), 100, start_s=10.0)
    part = block.slice_time(10.25, 10.5)
    assert part.start_s == pytest.approx(10.25)
    np.testing.assert_array_equal(part.samples, np.arange(25, 50, dtype=np.float32))
    assert block.slice_time(0.0, 5.0).n_frames == 0


def test_concat_needs_contiguous_blocks() -> None:
    a = AudioBlock(np.ones(100, np.float32), 100, 0.0)
    b = AudioBlock(np.zeros(50, np.float32), 100, 1.0)
    joined = AudioBlock.concat([a, b])
    assert joined.n_frames == 150 and joined.start_s == 0.0
    with pytest.raises(ValueError, match="contiguous"):
        AudioBlock.concat([a, AudioBlock(np.zeros(50, np.float32), 100, 1.5)])
    with pytest.raises(ValueError):
        AudioBlock.concat([a, AudioBlock(np.zeros(50, np.float32), 200, 1.0)])
    with pytest.raises(ValueError):
        AudioBlock.concat([])
