"""The voice-activity gate on real speech, silence and noise (the real silero-vad model)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.asr.vad import FRAME, FRAME_S, RATE, SileroVad, SpeechGate, VadError, speech_seconds
from tests import virtual_audio as va

pytestmark = pytest.mark.untimed  # the slow tests' results do not depend on the machine's speed


@pytest.fixture(scope="module")
def vad() -> SileroVad:
    return SileroVad()


@pytest.mark.slow
def test_real_speech_is_speech(vad: SileroVad, speech_dir: Path) -> None:
    audio, rate = va.read_mono(speech_dir / "wav" / "ls_61-70968-0000.wav")
    assert rate == RATE
    assert speech_seconds(audio, vad) > 0.6 * audio.size / RATE


@pytest.mark.slow
def test_ten_seconds_of_silence_and_of_noise_hold_no_speech(vad: SileroVad) -> None:
    rng = np.random.default_rng(0)
    assert speech_seconds(np.zeros(10 * RATE, np.float32), vad) == 0.0
    noise = (0.05 * rng.standard_normal(10 * RATE)).astype(np.float32)
    assert speech_seconds(noise, vad) == 0.0


@pytest.mark.slow
def test_streaming_in_odd_blocks_gives_the_same_probabilities(vad: SileroVad, speech_dir: Path) -> None:
    audio, _ = va.read_mono(speech_dir / "wav" / "vctk_p226_001.wav")
    vad.reset()
    whole = vad.probabilities(audio)
    vad.reset()
    pieces = [vad.probabilities(audio[i : i + 777]) for i in range(0, audio.size, 777)]
    np.testing.assert_allclose(np.concatenate(pieces), whole, atol=1e-6)
    assert whole.size == audio.size // FRAME


@pytest.mark.slow
def test_a_quiet_first_word_at_a_streams_first_sample_is_speech(vad: SileroVad, speech_hard_dir: Path) -> None:
    """A video call at -37 dBFS opens with "We are" (0.13-0.80 s): from a zero state the detector scored it 0.47 at
    most."""
    audio, _ = va.read_mono(speech_hard_dir / "wav" / "earnings22_4482311_003_063.wav")
    vad.reset()
    speech = SpeechGate().decide(vad.probabilities(audio[:RATE]))
    assert speech[int(0.2 / FRAME_S) : int(0.8 / FRAME_S)].any()


def test_gate_hysteresis() -> None:
    gate = SpeechGate()
    probs = np.array([0.1, 0.9, 0.4, 0.4, 0.1] + [0.1] * 20, np.float32)
    flags = gate.decide(probs)
    assert not flags[0] and flags[1] and flags[2] and flags[3]  # stays on above the release level
    assert not flags[-1]  # and ends after the hangover


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VadError, match="not found"):
        SileroVad(tmp_path / "missing.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(VadError, match="cannot load"):
        SileroVad(broken)


def test_finding_the_bundled_model_does_not_import_torch() -> None:
    """silero-vad's package imports torch (~200 MB, a second of start-up); only its ONNX file is used."""
    code = (
        "import sys; from engine.asr.vad import SileroVad; vad = SileroVad(); "
        "print(vad.probabilities(__import__('numpy').zeros(16000, 'float32')).size, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["31", "False"]
