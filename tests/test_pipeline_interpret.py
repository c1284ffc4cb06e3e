"""Interpreting for real: Spanish and French recordings of ../shared/speech-xx spoken in English through the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import cli
from engine.metrics import names as m
from engine.pipeline.config import ShadowConfig
from engine.pipeline.shadow import shadow_file

pytestmark = pytest.mark.slow


def _first(folder: Path, lang: str) -> dict:
    entries = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    return next(e for e in entries if e["lang"] == lang)


def test_spanish_is_committed_and_spoken_in_english(speech_xx_dir: Path) -> None:
    entry = _first(speech_xx_dir, "es")
    report = shadow_file(speech_xx_dir / entry["wav"], ShadowConfig(translate_from="es"), speech_chain=False)
    words = report["committed_text"].lower().split()
    assert len(words) >= 5 and {"each", "right", "limitations"} & set(w.strip(",.") for w in words)
    assert report["spoken_text"] and report[m.EAR_VOICE_LAG_S]["n"] >= 5
    assert report[m.BLEU] > 0 and report[m.CHRF] > 20
    assert report[m.WER_COMMITTED] is None  # the source transcript is not English: no WER
    assert report["spoken_language"] == "es" and report["language_detected"] is None


def test_the_spoken_language_is_detected_from_the_first_seconds(speech_xx_dir: Path) -> None:
    entry = _first(speech_xx_dir, "fr")
    report = shadow_file(speech_xx_dir / entry["wav"], ShadowConfig(translate_from="auto"), speech_chain=False)
    assert report["language_detected"]["language"] == "fr" and report["spoken_language"] == "fr"
    assert report["committed_text"]


def test_the_cli_names_a_bad_language(speech_xx_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wav = str(speech_xx_dir / _first(speech_xx_dir, "es")["wav"])
    assert cli.main(["shadow", wav, "--translate-from", "xx"]) == 1
    assert "unknown language 'xx'" in capsys.readouterr().err
    assert cli.main(["shadow", wav, "--translate-from", "spanish!"]) == 2
    assert "must be a code such as es" in capsys.readouterr().err
    assert cli.main(["shadow", wav, "--translate-from", "es", "--backend", "vosk"]) == 2
