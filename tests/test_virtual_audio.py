"""Real audio through the PulseAudio virtual devices: sounddevice records the virtual microphone and plays to
the virtual speaker, and what comes out matches what went in."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.devices import default_device, list_devices
from tests import virtual_audio as va

pytestmark = pytest.mark.audio

RATE = 16000
RECORDING = "wav/vctk_p226_001.wav"  # 2.8 s of real speech
PLAYBACK_BLOCK = 1024
PLAYBACK_LATENCY_S = 0.2


def test_virtual_devices_are_the_defaults(virtual_audio: va.VirtualAudio) -> None:
    sources = virtual_audio.pactl("list", "short", "sources")
    sinks = virtual_audio.pactl("list", "short", "sinks")
    assert va.MIC_SOURCE in sources and va.SPEAKER_SINK in sinks
    assert default_device("input").supports("input")
    assert default_device("output").supports("output")
    assert list_devices("input") and list_devices("output")


def test_input_stream_records_what_is_played_into_the_microphone(
    virtual_audio: va.VirtualAudio, speech_dir: Path
) -> None:
    import sounddevice as sd

    wav = speech_dir / RECORDING
    source, rate = va.read_mono(wav)
    assert rate == RATE
    blocks: queue.Queue[np.ndarray] = queue.Queue()

    def callback(indata: np.ndarray, frames: int, time_info: object, status: object) -> None:
        blocks.put(indata[:, 0].copy())  # copy and enqueue, nothing else

    with sd.InputStream(samplerate=RATE, channels=1, dtype="float32", blocksize=800, callback=callback):
        first = blocks.get(timeout=10)  # the stream delivers nothing for its first ~0.4-1.7 s
        player = virtual_audio.play_into_mic(wav)
        assert player.wait(timeout=30) == 0, player.stderr.read()
        time.sleep(0.5)
    recorded = np.concatenate([first, *list(blocks.queue)])
    assert recorded.size >= source.size
    correlation, lag = va.aligned_correlation(recorded, source)
    assert correlation > 0.9, f"correlation {correlation:.3f} at lag {lag / RATE:.3f} s"


def test_output_stream_is_captured_from_the_speaker(
    virtual_audio: va.VirtualAudio, speech_dir: Path, tmp_path: Path
) -> None:
    import sounddevice as sd

    source, _ = va.read_mono(speech_dir / RECORDING)
    out = tmp_path / "speaker.wav"
    with virtual_audio.record_speaker(out, rate=RATE):
        # Through ALSA's pulse plugin a variable block size (PortAudio's default) underruns: gaps in the
        # recording. A fixed block size plays cleanly.
        sd.play(source, samplerate=RATE, blocking=True, blocksize=PLAYBACK_BLOCK, latency=PLAYBACK_LATENCY_S)
    recorded, rate = va.read_mono(out)
    assert rate == RATE
    correlation, lag = va.aligned_correlation(recorded, source)
    assert correlation > 0.9, f"correlation {correlation:.3f} at lag {lag / RATE:.3f} s"


def test_silence_played_is_not_mistaken_for_the_signal(virtual_audio: va.VirtualAudio, tmp_path: Path) -> None:
    """The check above can fail: a recording of silence does not correlate with speech."""
    import sounddevice as sd

    out = tmp_path / "speaker.wav"
    with virtual_audio.record_speaker(out, rate=RATE):
        sd.play(np.zeros(RATE, np.float32), samplerate=RATE, blocking=True, blocksize=PLAYBACK_BLOCK)
    recorded, _ = va.read_mono(out)
    noise = np.random.default_rng(0).standard_normal(RATE // 2).astype(np.float32)
    correlation, _ = va.aligned_correlation(recorded, noise)
    assert correlation < 0.5


def test_recordings_are_valid_wav(virtual_audio: va.VirtualAudio, tmp_path: Path) -> None:
    out = tmp_path / "speaker.wav"
    with virtual_audio.record_speaker(out, rate=22050, channels=2):
        virtual_audio.pactl("list", "short", "sinks")
    info = sf.info(str(out))
    assert info.samplerate == 22050 and info.channels == 2
