"""``liveshadow self-test`` with the real models: all pass here; a removed model file is named and fails the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import cli
from engine.asr import whisper_backend
from engine.selftest import checks, run_checks
from engine.tts import voice as voice_module

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def test_the_self_test_passes_on_this_installation() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-m", "engine", "self-test"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    results = [line for line in lines if line.startswith(("PASS", "FAIL"))]
    names = [line.split(":", 1)[0].split(None, 1)[1] for line in results]
    assert names == [name for name, _ in checks(window=lambda: "")]
    assert all(line.startswith("PASS") for line in results)
    assert lines[-1] == f"{len(results)} passed, 0 failed"
    assert "heard it back" in done.stdout


def _copy_without(folder: Path, missing: str, into: Path) -> Path:
    into.mkdir()
    for item in folder.iterdir():
        if item.name != missing:
            (into / item.name).symlink_to(item)
    return into


def test_a_removed_recognizer_file_is_named_and_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _copy_without(whisper_backend.bundled_model_path(), "tokenizer.json", tmp_path / "model")
    monkeypatch.setattr(whisper_backend, "bundled_model_path", lambda: broken)
    assert cli.main(["self-test", "--no-window"]) == 1
    out = capsys.readouterr().out
    recognizer = next(line for line in out.splitlines() if line.startswith(("PASS  recognizer", "FAIL  recognizer")))
    assert recognizer.startswith("FAIL") and "tokenizer.json" in recognizer and str(broken) in recognizer
    assert "FAIL  speak and recognize back" in out  # it needs the recognizer
    assert "PASS  voice, Stage II" in out  # the others still ran
    assert "PASS  interpreting model" in out  # Whisper base hears the voice without tiny.en
    assert out.splitlines()[-1] == "7 passed, 2 failed"


def test_a_removed_voice_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model, config = voice_module.bundled_voice_paths()
    gone = tmp_path / model.name
    monkeypatch.setattr(voice_module, "bundled_voice_paths", lambda: (gone, config))
    results = {r.name: r for r in run_checks(checks())}
    stage1 = results["voice, Stage I (text to latent)"]
    assert not stage1.ok and str(gone) in stage1.detail
    assert not results["voice, Stage II (latent to audio)"].ok
    assert results["recognizer"].ok and results["phonemizer"].ok


def test_missing_espeak_data_is_named_not_a_silent_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``phontab`` espeak-ng ends the process with exit code 1 and no message; the check comes first."""
    from piper import phonemize_espeak

    data = Path(phonemize_espeak.ESPEAK_DATA_DIR)
    broken = tmp_path / "espeak-ng-data"
    shutil.copytree(data, broken, ignore=shutil.ignore_patterns("phontab"))
    monkeypatch.setattr(phonemize_espeak, "ESPEAK_DATA_DIR", broken)
    result = next(run_checks(checks()[:1]))
    assert not result.ok and str(broken / "phontab") in result.detail


def _interpreting_check() -> list:
    return [check for check in checks() if check[0] in ("voice, Stage I (text to latent)", "interpreting model")]


def test_the_packaged_app_without_the_interpreting_model_says_so_and_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.asr import whisper_base_model

    monkeypatch.delenv(whisper_base_model.ENV_MODEL_DIR, raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "liveshadow"))
    result = list(run_checks(_interpreting_check()))[-1]
    assert result.ok and whisper_base_model.ADDON_PACKAGE in result.detail and "not installed" in result.detail


def test_a_damaged_interpreting_model_fails_naming_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.asr import whisper_base_model

    folder = tmp_path / "whisper-base"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (folder / name).write_text("{}")
    (folder / "model.bin").write_bytes(b"not a model")
    monkeypatch.setenv(whisper_base_model.ENV_MODEL_DIR, str(folder))
    result = list(run_checks(_interpreting_check()))[-1]
    assert not result.ok and str(folder) in result.detail and "damaged" in result.detail
