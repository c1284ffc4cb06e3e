"""Interpreting for real: Spanish and French recordings of ../shared/speech-xx spoken in English through the session."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import replace
from itertools import takewhile
from pathlib import Path

import numpy as np
import pytest
import soundfile
from PySide6.QtGui import QImage

from engine import cli
from engine.asr import whisper_backend
from engine.asr.bench import load_manifest
from engine.asr.speech_filter import without_unaligned_runs
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.eval.interpret import CSV_FIELDS
from engine.metrics import names as m
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import shadow_file
from tests import virtual_audio as va
from tests.live_audio import wait_until_listening

pytestmark = pytest.mark.slow


def _first(folder: Path, lang: str) -> dict:
    return next(e for e in load_manifest(folder / "manifest.jsonl") if e["lang"] == lang)


def _entry(folder: Path, recording_id: str) -> dict:
    return next(e for e in load_manifest(folder / "manifest.jsonl") if e["id"] == recording_id)


def test_spanish_is_committed_and_spoken_in_english(speech_xx_dir: Path) -> None:
    entry = _first(speech_xx_dir, "es")
    report = shadow_file(speech_xx_dir / entry["wav"], ShadowConfig(translate_from="es"), speech_chain=False)
    words = report["committed_text"].lower().split()
    assert len(words) >= 5 and {"each", "right", "limitations"} & set(w.strip(",.") for w in words)
    assert report["spoken_text"] and report[m.EAR_VOICE_LAG_S]["n"] >= 5
    assert report[m.BLEU] > 0 and report[m.CHRF] > 20
    assert report[m.WER_COMMITTED] is None  # the source transcript is not English: no WER
    assert report["spoken_language"] == "es" and report["language_detected"] is None
    # interpreting's steps count as slow against their period, not against shadowing's 0.3 s (``pipeline.pace``)
    config = ShadowConfig(translate_from="es")
    assert report["pace"]["slow_step_s"] == pytest.approx(max(0.45, 0.9 * config.interpret_step_s))


def test_a_pause_ends_an_utterance_and_its_silence_is_not_decoded(speech_xx_dir: Path) -> None:
    """Two Spanish utterances with 6 s of silence between them, through the real recognizer and voice-activity
    detector, a second at a time: the first utterance is all committed soon after the speaker stops, then nothing is
    decoded until the second begins, and the second is heard at its own times."""
    entries = {e["id"]: e for e in load_manifest(speech_xx_dir / "manifest.jsonl")}
    first, second = (load_audio(speech_xx_dir / entries[i]["wav"]) for i in ("cv_es_19599961", "s2st_es_2245"))
    gap_s = 6.0
    audio = np.concatenate([first, np.zeros(int(gap_s * 16000), np.float32), second, np.zeros(32000, np.float32)])
    config = ShadowConfig(translate_from="es")
    recognizer = Models.load(config).recognizer(config)
    # interpreting's la2 agrees with the hypothesis made on 1.5 s less audio, not with the previous one
    assert recognizer.policy.min_gap_s == config.interpret_agreement_gap_s > 0  # type: ignore[attr-defined]
    first_end, second_start = first.size / 16000, first.size / 16000 + gap_s
    steps = []
    for n, block in enumerate(np.array_split(audio, int(np.ceil(audio.size / 16000)))):
        recognizer.insert_audio(block)
        steps.append(((n + 1) * 1.0, recognizer.step((n + 1) * 1.0)))
    recognizer.finish(len(steps) + 1.0)
    committed = recognizer.committed
    during_gap = [now for now, step in steps if first_end + 3.0 <= now <= second_start]
    assert during_gap and not any(step.recognized for now, step in steps if now in during_gap)
    early = [w for w in committed if w.commit_s <= first_end + 3.0]
    # its last word, whatever the words the hold bound took before it ("limitations" is one it may reword away)
    assert {"right", "exemptions"} <= {w.text.lower().strip(",.") for w in early}, [w.text for w in committed]
    assert not [w for w in committed if first_end + 3.0 < w.commit_s <= second_start]
    late = [w for w in committed if w.commit_s > second_start]
    assert "mountains" in {w.text.lower().strip(",.") for w in late}
    assert all(w.start_s >= second_start - 0.5 for w in late)


def test_words_the_hold_bound_commits_are_those_the_hypothesis_before_had(speech_xx_dir: Path) -> None:
    """Real translation hypotheses, which reword from one step to the next: where the previous step's tentative
    words (those the voice made ahead) reach past the hold bound's horizon, the bound commits those, and with the
    option off it commits the newest reading, which is not always theirs. (With la2 comparing consecutive hypotheses
    it never would be: those words would have been agreed on. Interpreting's la2 agrees across 1.5 s, so the previous
    step may share words the one before it did not.) A bound of 1.5 s makes it force often on 8 s."""
    audio = load_audio(_entry(speech_xx_dir, "cv_es_19717026")["path"])
    config = ShadowConfig(translate_from="es")
    models = Models.load(config)
    matches = {}
    for force_previous in (True, False):
        recognizer = models.recognizer(replace(config, interpret_force_previous=force_previous))
        recognizer.config = replace(recognizer.config, max_hold_s=1.5)
        assert recognizer.config.force_previous is force_previous
        tentative, matched, committed = [], [], []
        for n, block in enumerate(np.array_split(audio, int(np.ceil(audio.size / 16000)))):
            recognizer.insert_audio(block)
            horizon = recognizer.audio_in_s - recognizer.config.max_hold_s
            step = recognizer.step(n + 1.0)
            agreed = len(step.committed) - step.forced
            before = list(takewhile(lambda w, horizon=horizon: w.end_s <= horizon, tentative[agreed:]))
            if step.forced and before:  # else the previous step had no word there: the newest reading is taken
                matched.append([w.text for w in step.committed[agreed:]] == [w.text for w in before])
            committed += step.committed
            tentative = step.tentative
        assert [w.start_s for w in committed] == sorted(w.start_s for w in committed)  # in the order said
        matches[force_previous] = matched
    assert matches[True] and all(matches[True]), matches
    assert matches[False] and not all(matches[False]), matches


def test_a_clause_written_at_one_instant_is_not_committed(speech_xx_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whisper base cannot translate Japanese. On fleurs_ja_1837 it writes whole clauses timed to one instant of the
    audio ("the evening of the day of the Liberals, ..."), some of them in decodes that then loop. The backend cuts
    a decode at its third word with no duration, after a loop's cut too: none of those clauses is committed."""
    audio = load_audio(_entry(speech_xx_dir, "fleurs_ja_1837")["path"])
    config = ShadowConfig(translate_from="ja")
    recognizer = Models.load(config).recognizer(config)
    cut_repetition = whisper_backend.cut_repetition
    runs: list[str] = []
    kept: list[list[Word]] = []

    def spy(words: list[Word], *args: int) -> list[Word]:  # what Whisper wrote, before the backend cuts it
        if len(without_unaligned_runs(words)) < len(words):
            runs.append(" ".join(w.text for w in words))
        kept.append(cut_repetition(words, *args))
        return kept[-1]

    monkeypatch.setattr(whisper_backend, "cut_repetition", spy)
    for n, block in enumerate(np.array_split(audio, int(np.ceil(audio.size / 16000)))):
        recognizer.insert_audio(block)
        recognizer.step(n + 1.0)
    recognizer.finish(audio.size / 16000 + 1.0)
    if not runs:
        pytest.skip("on this CPU Whisper timed no run of words to one instant of this recording")
    assert all(without_unaligned_runs(words) == words for words in kept), runs  # the backend cut every run
    committed = [Word(w.text, w.start_s, w.end_s) for w in recognizer.committed]
    assert committed and without_unaligned_runs(committed) == committed, [(w.text, w.start_s) for w in committed]


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


@pytest.mark.parametrize("source", ["es", "auto"])
def test_nothing_is_spoken_on_a_minute_of_silence_or_noise(source: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    minute = 60 * 16000
    for name, audio in {
        "silence": np.zeros(minute, np.float32),
        "noise": (0.01 * rng.standard_normal(minute)).astype(np.float32),
    }.items():
        wav = tmp_path / f"{name}.wav"
        soundfile.write(wav, audio, 16000)
        report = shadow_file(wav, ShadowConfig(translate_from=source), speech_chain=False)
        assert report["committed_text"] == "" and report["spoken_text"] == "", (name, report["committed_text"])
        assert report["audio_s_heard"] == pytest.approx(60, abs=0.1)


def test_eval_on_a_translation_manifest_scores_bleu_and_lagging(speech_xx_dir: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.jsonl"
    entries = [json.loads(line) for line in (speech_xx_dir / "manifest.jsonl").read_text().splitlines() if line]
    ids = ("s2st_es_2245", "cv_fr_17301936")
    two = [{**e, "wav": str(speech_xx_dir / e["wav"])} for e in entries if e["id"] in ids]
    manifest.write_text("".join(json.dumps(e) + "\n" for e in two))
    out = tmp_path / "eval"
    assert cli.main(["eval", str(manifest), "--out", str(out), "--tts-policies", "lookahead-1", "--commit", "la2"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["eval"] == "interpret" and list(report["results"]) == ["lookahead-1+la2"]
    figures = report["results"]["lookahead-1+la2"]
    assert figures[m.BLEU] > 0 and figures[m.CHRF] > 20 and figures[m.BLEU_OFFLINE] > 0
    assert figures[m.AL_CA_S] is not None and figures[m.END_OFFSET_S] is not None
    assert sorted(figures["by_language"]) == ["es", "fr"]
    with open(out / "report.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert tuple(rows[0]) == CSV_FIELDS and sorted(r["lang"] for r in rows) == ["es", "fr"]
    assert all(r["committed_text"] and r["offline_text"] and r[m.GAP_S] != "" for r in rows)
    for name in report["plots"]:
        assert QImage(str(out / name)).width() > 300, name
    assert sorted(report["plots"]) == ["bleu_vs_lagging.png", "lag_over_time.png"]


def test_a_soak_interprets_the_recordings_of_one_language_and_scores_each_play(
    speech_xx_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Half a minute of the Spanish recordings back to back, one interpreting session, through the command line."""
    manifest, out = speech_xx_dir / "manifest.jsonl", tmp_path / "soak"
    assert cli.main(["eval", str(manifest), "--soak", "0.5", "--translate-from", "es", "--out", str(out)]) == 0
    assert "interpreting from es: bleu" in capsys.readouterr().out
    report = json.loads((out / "soak.json").read_text())
    assert report["soak"] == "interpret" and report["config"]["translate_from"] == "es"
    assert report["recordings_scored"] >= 2 and report[m.BLEU] > 10 and report[m.CHRF] > 30
    assert report["config"]["recordings"] == 10 and report["bleu_by_pass"] == []  # the first pass is 111 s
    assert report["words_spoken"] > 20 and report["non_english_words"] == 0 and report["dropped_audio_s"] == 0
    # a translation manifest of several languages: the soak must be told which
    assert cli.main(["eval", str(manifest), "--soak", "0.5", "--out", str(tmp_path / "mixed")]) == cli.EXIT_USAGE
    assert "holds recordings in de, es, fr, ja, pt, zh" in capsys.readouterr().err


@pytest.mark.audio
def test_live_interpreting_from_the_virtual_microphone(speech_xx_dir: Path, tmp_path: Path, virtual_audio) -> None:
    """``shadow --live --translate-from es``: Spanish played into the virtual microphone comes out of the virtual
    speaker in English."""
    entry = _first(speech_xx_dir, "es")
    report_path, heard = tmp_path / "report.json", tmp_path / "speaker.wav"
    command = [
        sys.executable,
        "-m",
        "engine",
        "shadow",
        "--live",
        "--translate-from",
        "es",
        "--seconds",
        "16",
        "--report",
        str(report_path),
    ]
    with virtual_audio.record_speaker(heard, rate=22050):
        process = subprocess.Popen(
            command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=virtual_audio.env()
        )
        try:
            lines = wait_until_listening(process)  # models load first; play once the session listens
            assert process.stderr is not None
            player = virtual_audio.play_into_mic(speech_xx_dir / entry["wav"])
            assert player.wait(timeout=30) == 0
            rest = process.stderr.read()
            assert process.wait(timeout=120) == 0, "".join(lines) + rest
        finally:
            process.kill()
    report = json.loads(report_path.read_text())
    words = {w.strip(",.").lower() for w in report["committed_text"].split()}
    assert len(words) >= 5 and {"each", "right", "limitations"} & words, report["committed_text"]
    assert report["spoken_text"] and report["config"]["translate_from"] == "es"
    recorded, _ = va.read_mono(heard)
    assert np.abs(recorded).max() > 0.05  # the English voice reached the speaker
