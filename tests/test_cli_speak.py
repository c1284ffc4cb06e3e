"""``liveshadow speak`` for real: the voice, the report, typed input, playback on the virtual speaker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.metrics import names as m
from tests import virtual_audio as va

pytestmark = pytest.mark.slow

TEXT = "The voice starts speaking before the sentence is over, which is the whole point."


def speak(*args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", "speak", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def test_speak_writes_audio_and_a_report(tmp_path: Path) -> None:
    out, report_path = tmp_path / "out.wav", tmp_path / "report.json"
    result = speak(TEXT, "--out", str(out), "--report", str(report_path))
    assert result.returncode == 0, result.stderr
    audio, rate = sf.read(str(out))
    assert rate == 22050 and audio.size / rate > 2.0 and np.abs(audio).max() > 0.05
    report = json.loads(report_path.read_text())
    for name in (m.FIRST_AUDIO_S, m.GEN_S, m.AUDIO_S, m.COMPUTE_RATIO, m.TIME_BALANCE, m.UNDERRUNS, m.SEAM_SNR_DB):
        assert name in report
    assert len(report[m.GEN_S]) == len(report[m.AUDIO_S]) > 2
    assert sum(report[m.AUDIO_S]) == pytest.approx(audio.size / rate, abs=1e-3)
    assert [w["text"] for w in report["words"]] == TEXT.split()
    assert report[m.FIRST_AUDIO_S] > 0 and report["config"]["policy"] == "lookahead-1"
    assert report["machine"]["cores"] >= 1


def test_speak_from_stdin_and_policies(tmp_path: Path) -> None:
    out = tmp_path / "typed.wav"
    result = speak("--stdin", "--policy", "full", "--out", str(out), stdin="Typed words\narrive line by line.\n")
    assert result.returncode == 0, result.stderr
    assert sf.info(str(out)).frames > 22050


def test_speak_reports_bad_input_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In this process (``cli.main``): the exit codes and messages of the command; the voice is loaded for each."""
    from engine import cli

    def said(*args: str) -> tuple[int, str, str]:
        code = cli.main(["speak", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    assert said()[0] == cli.EXIT_USAGE
    assert said("hi", "--words-per-second", "0")[0] == cli.EXIT_USAGE
    code, _, err = said("hi", "--voice", str(tmp_path / "nope.onnx"))
    assert code == cli.EXIT_ERROR and "voice model not found" in err and "Traceback" not in err
    for odd in ("🙂 🎉", "!!!", "*** ..."):  # espeak would say "exclamation", "asterisk asterisk asterisk"
        code, _, err = said(odd)
        assert code == cli.EXIT_OK and "nothing to say" in err, odd
    code, out, _ = said("Hi.")
    assert code == cli.EXIT_OK and "nan" not in out, out
    assert said("hi", "--out", str(tmp_path / "no" / "such" / "dir.wav"))[0] == cli.EXIT_USAGE


@pytest.mark.audio
def test_speak_plays_into_the_speaker(tmp_path: Path, virtual_audio: va.VirtualAudio) -> None:
    out, recording, report_path = tmp_path / "out.wav", tmp_path / "rec.wav", tmp_path / "report.json"
    with virtual_audio.record_speaker(recording, rate=22050):
        result = speak(TEXT, "--play", "--out", str(out), "--report", str(report_path))
    assert result.returncode == 0, result.stderr
    report = json.loads(report_path.read_text())
    assert report["played"]["underruns"] == 0
    synthesized, _ = va.read_mono(out)
    recorded, _ = va.read_mono(recording)
    correlation, _ = va.aligned_correlation(recorded, synthesized)
    assert correlation > 0.9
