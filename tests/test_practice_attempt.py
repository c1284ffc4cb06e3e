"""Scoring recorded attempts for real (tiny.en, the bundled voice), against truth that is known: the machine is a
shadower whose every word's play time is recorded, and its recording edited (cut, delayed, paused) is an attempt
whose EVS and missed words are known too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile

from engine.asr.words import normalize_token
from engine.audio.io import load_audio
from engine.metrics.wer import wer
from engine.practice.attempt import SAMPLE_RATE, load_recognizer, practice_file

pytestmark = pytest.mark.slow
RECORDING = "ls_2412-153948-0000"  # 11.7 s, a reference transcript, no forced alignment
# The machine's attempt at RECORDING with "antecedents. Nor of the" cut out (a CI run's, 2026-12-07): 1.4 s of silence
# after "my", at which the scorer's whole-window decode stopped
PAUSED_ATTEMPT = Path(__file__).parent / "data" / "attempt_with_a_pause.flac"
MAX_EVS_ERROR_S = 0.15  # median absolute error of a word's EVS against its recorded play-time lag (issue 57)
# The EVS median against the session's ear_voice_lag_s median: the scorer's word ends (Whisper's, on the voice)
# come later than the voice's played ends, by 0.00-0.08 s in eight runs of the fixture and 0.11 s in a ninth (AMD EPYC
# VM, 2026-12-07): the bound is issue 57's per-word bound.
MAX_MEDIAN_ERROR_S = MAX_EVS_ERROR_S


@pytest.fixture(scope="module")
def machine_attempt(tmp_path_factory: pytest.TempPathFactory, shadow_models, speech_dir, speech_manifest) -> dict:
    """The machine shadows the recording; its output.wav, played-word lags and the attempt's score."""
    from engine.pipeline.config import ShadowConfig
    from engine.pipeline.shadow import shadow_file

    entry = next(e for e in speech_manifest if e["id"] == RECORDING)
    folder = tmp_path_factory.mktemp("machine")
    source = speech_dir / entry["wav"]
    session = shadow_file(source, ShadowConfig(), shadow_models, record_dir=folder, entry=entry, speech_chain=False)
    attempt = folder / "output.wav"
    backend = load_recognizer("en")  # what the command uses (the session's own decodes stop at 96 tokens)
    report = practice_file(source, attempt, backend=backend)
    return {"source": source, "attempt": attempt, "session": session, "report": report, "backend": backend}


def _save(path: Path, audio: np.ndarray, rate: int) -> None:
    soundfile.write(str(path), audio, rate, subtype="FLOAT")


def _scored(word: dict, report: dict) -> str | None:
    """The mark the scorer gave the session word (same key, nearest source time within 0.5 s)."""
    same = [w for w in report["words"] if w["source"] and normalize_token(w["source"]) == normalize_token(word["text"])]
    if not same:
        return None
    nearest = min(same, key=lambda w: abs(w["source_end_s"] - word["source_end_s"]))
    return nearest["mark"] if abs(nearest["source_end_s"] - word["source_end_s"]) < 0.5 else None


def _recorded_lag(word: dict, session: dict) -> float | None:
    """The machine's play-time lag of the session word that this scored word is (same key, nearest in time)."""
    key = normalize_token(word["word"])
    same = [w for w in session["words"] if normalize_token(w["text"]) == key]
    if not same:
        return None
    nearest = min(same, key=lambda w: abs(w["source_end_s"] - word["source_end_s"]))
    return nearest["ear_voice_lag_s"] if abs(nearest["source_end_s"] - word["source_end_s"]) < 0.5 else None


def test_the_machines_own_shadowing_scores_its_recorded_lag(machine_attempt) -> None:
    report, session = machine_attempt["report"], machine_attempt["session"]
    errors = []
    for word in report["evs_s"]["per_word"]:
        lag = _recorded_lag(word, session)
        if lag is not None:
            errors.append(abs(word["evs_s"] - lag))
    assert len(errors) >= 0.8 * report["source_words"], (len(errors), report["source_words"])
    assert float(np.median(errors)) <= MAX_EVS_ERROR_S, errors
    lags = [w["ear_voice_lag_s"] for w in session["words"]]
    assert abs(report["evs_s"]["median"] - float(np.median(lags))) <= MAX_MEDIAN_ERROR_S
    # the accuracy is the WER's, counted on the alignment in time (the voice's words as tiny.en hears them)
    assert report["accuracy"] == pytest.approx(1 - wer(report["source_text"], report["attempt_text"]), abs=0.06)
    assert report["accuracy"] >= 0.6 and report["source_words_from"].startswith("reference transcript")


def test_a_delayed_attempt_has_every_evs_one_second_later(machine_attempt, tmp_path: Path) -> None:
    audio = load_audio(machine_attempt["attempt"])
    delayed = tmp_path / "delayed.wav"
    _save(delayed, np.concatenate([np.zeros(SAMPLE_RATE, np.float32), audio]), SAMPLE_RATE)
    report = practice_file(machine_attempt["source"], delayed, backend=machine_attempt["backend"])
    before = {round(w["source_end_s"], 3): w["evs_s"] for w in machine_attempt["report"]["evs_s"]["per_word"]}
    moved = [
        w["evs_s"] - before[round(w["source_end_s"], 3)]
        for w in report["evs_s"]["per_word"]
        if round(w["source_end_s"], 3) in before
    ]
    assert len(moved) >= 0.9 * len(before) and float(np.median(moved)) == pytest.approx(1.0, abs=0.05)
    # told when it began, the same attempt scores as the undelayed one
    told = practice_file(machine_attempt["source"], delayed, offset_s=-1.0, backend=machine_attempt["backend"])
    assert told["evs_s"]["median"] == pytest.approx(machine_attempt["report"]["evs_s"]["median"], abs=0.05)


def test_an_attempt_at_the_source_slowed_is_timed_on_the_source_as_played(machine_attempt, tmp_path: Path) -> None:
    """The machine's shadowing slowed by 0.75 (as the source was: every time 1/0.75 later) is the attempt of a person
    who shadowed the source at 0.75x: each word's EVS is its recorded lag / 0.75."""
    from engine.audio.stretch import stretch

    speed = 0.75
    slowed = tmp_path / "slowed.wav"
    _save(slowed, stretch(load_audio(machine_attempt["attempt"]), SAMPLE_RATE, speed), SAMPLE_RATE)
    report = practice_file(machine_attempt["source"], slowed, backend=machine_attempt["backend"], speed=speed)
    session = machine_attempt["session"]
    errors = []
    for word in report["evs_s"]["per_word"]:
        lag = _recorded_lag({**word, "source_end_s": word["source_end_s"] * speed}, session)
        if lag is not None:
            errors.append(abs(word["evs_s"] - lag / speed))
    assert len(errors) >= 0.8 * report["source_words"], (len(errors), report["source_words"])
    assert float(np.median(errors)) <= MAX_EVS_ERROR_S, errors
    assert report["speed"] == speed and report["source_s"] == pytest.approx(11.7 / speed, abs=0.1)
    assert report["accuracy"] >= 0.6


def _cut(audio: np.ndarray, start_s: float, end_s: float) -> np.ndarray:
    """The stretch silenced (not removed: the words after it keep their times)."""
    out = audio.copy()
    out[int(start_s * SAMPLE_RATE) : int(end_s * SAMPLE_RATE)] = 0.0
    return out


def test_words_cut_out_of_the_attempt_are_missed(machine_attempt, tmp_path: Path) -> None:
    words = machine_attempt["session"]["words"]
    said = [_scored(w, machine_attempt["report"]) == "said" for w in words]
    first = next(i for i in range(len(words) // 3, len(words) - 4) if all(said[i : i + 4]))
    middle = words[first : first + 4]  # four words the machine spoke and the scorer heard, cut by their play times
    audio = _cut(
        load_audio(machine_attempt["attempt"]), middle[0]["speak_start_s"] - 0.02, middle[-1]["speak_end_s"] + 0.02
    )
    cut = tmp_path / "cut.wav"
    _save(cut, audio, SAMPLE_RATE)
    report = practice_file(machine_attempt["source"], cut, backend=machine_attempt["backend"])
    said_before = {w["source_end_s"] for w in machine_attempt["report"]["words"] if w["mark"] == "said"}
    lost = [
        w["source"]
        for w in report["words"]
        if w["mark"] in ("missed", "substituted") and w["source_end_s"] in said_before
    ]
    # the cut words are lost; a cut mid-sentence can also cost the recognizer a neighbour or two ("antecedents. Nor"
    # came out "and to sedence. Or" once)
    cut_keys = [normalize_token(w["text"]) for w in middle]
    assert sum(k in {normalize_token(t) for t in lost} for k in cut_keys) >= 3, (lost, cut_keys)
    assert len(lost) <= len(middle) + 3, (lost, cut_keys, report["attempt_text"])
    # the stretch cut is lost (not compared with the whole attempt's longest: a word said between two cut ones, "of"
    # in "nor of the circumstances", split it in one CI run, while the whole attempt had lost 0.86 s elsewhere)
    assert report["longest_lost_s"] >= 0.4, lost


def test_an_attempt_paused_mid_sentence_is_heard_past_the_pause(machine_attempt) -> None:
    """Whisper's whole-window decode wrote "to my..." and timed "my..." over the last 8.3 s: the 24 words after the
    pause were scored missed. The stock decode (moving on past each segment) hears them."""
    from engine.asr.offline import transcribe_long
    from engine.asr.whisper_backend import STOPPED_WORD_S

    backend = machine_attempt["backend"]
    audio = load_audio(PAUSED_ATTEMPT)
    alone = backend.transcribe(audio, full_window=True)
    assert any(w.end_s - w.start_s > STOPPED_WORD_S for w in alone), alone  # the trap this is for
    heard = [normalize_token(w.text) for w in transcribe_long(backend, audio)]
    assert len(heard) >= len(alone) + 15 and "circumstances" in heard and heard[-1] == "myself"
    report = practice_file(machine_attempt["source"], PAUSED_ATTEMPT, backend=backend)
    assert report["missed_words"] <= 5, report["attempt_text"]  # the four words cut, and a neighbour


def test_a_pause_inserted_in_the_attempt_adds_its_length_to_the_evs_after_it(machine_attempt, tmp_path: Path) -> None:
    words = machine_attempt["session"]["words"]
    at = words[len(words) // 2]
    gap_s = 1.5
    audio = load_audio(machine_attempt["attempt"])
    split = int((at["speak_end_s"] + 0.01) * SAMPLE_RATE)
    paused = tmp_path / "paused.wav"
    _save(
        paused,
        np.concatenate([audio[:split], np.zeros(int(gap_s * SAMPLE_RATE), np.float32), audio[split:]]),
        SAMPLE_RATE,
    )
    report = practice_file(machine_attempt["source"], paused, backend=machine_attempt["backend"])
    before = {round(w["source_end_s"], 3): w["evs_s"] for w in machine_attempt["report"]["evs_s"]["per_word"]}
    after_pause = [
        w["evs_s"] - before[round(w["source_end_s"], 3)]
        for w in report["evs_s"]["per_word"]
        if w["source_end_s"] > at["source_end_s"] + 0.05 and round(w["source_end_s"], 3) in before
    ]
    early = [
        w["evs_s"] - before[round(w["source_end_s"], 3)]
        for w in report["evs_s"]["per_word"]
        if w["source_end_s"] < at["source_end_s"] - 0.05 and round(w["source_end_s"], 3) in before
    ]
    assert after_pause and float(np.median(after_pause)) == pytest.approx(gap_s, abs=0.1)
    assert early and float(np.median(early)) == pytest.approx(0.0, abs=0.1)


def test_another_recordings_words_spliced_in_are_added(machine_attempt, tmp_path: Path, speech_dir) -> None:
    other = load_audio(speech_dir / "wav" / "ls_61-70968-0000.wav")  # "he began a confused complaint ..."
    audio = load_audio(machine_attempt["attempt"])
    end = int((machine_attempt["session"]["words"][-1]["speak_end_s"] + 0.3) * SAMPLE_RATE)
    spliced = tmp_path / "spliced.wav"
    _save(spliced, np.concatenate([audio[:end], np.zeros(SAMPLE_RATE // 2, np.float32), other]), SAMPLE_RATE)
    report = practice_file(machine_attempt["source"], spliced, backend=machine_attempt["backend"])
    added = report["added_words"] - machine_attempt["report"]["added_words"]
    assert added >= 12, (added, report["attempt_text"])
    assert report["evs_s"]["n"] >= machine_attempt["report"]["evs_s"]["n"] - 1


def test_the_command_prints_the_score_and_writes_the_report(
    machine_attempt, tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture
) -> None:
    from engine.cli import main

    out = tmp_path / "practice.json"
    code = main(
        ["practice", str(machine_attempt["source"]), "--voice", str(machine_attempt["attempt"]), "--report", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    for key in (
        "evs_s",
        "accuracy",
        "missed_words",
        "added_words",
        "substituted_words",
        "rate_ratio",
        "longest_lost_s",
    ):
        assert key in report
    assert "ear-voice span: median" in capsys.readouterr().out
    assert main(["practice", str(machine_attempt["source"]), "--history"]) == 0  # the attempt was kept
    assert "EVS median" in capsys.readouterr().out
    assert main(["practice", str(machine_attempt["source"])]) == 2  # neither an attempt nor --history
    assert main(["practice", str(machine_attempt["source"]), "--voice", str(tmp_path / "none.wav")]) == 2
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF not a wave")
    assert main(["practice", str(machine_attempt["source"]), "--voice", str(broken)]) == 1


def test_an_attempt_in_another_language_is_scored_in_it(speech_xx_dir: Path, tmp_path: Path) -> None:
    """A Spanish recording, delayed 1.5 s and with a stretch silenced, as the attempt at itself (Whisper base
    transcribing Spanish; the manifest's Spanish transcript is the source's words): EVS is the delay, the silenced
    words are lost."""
    source = speech_xx_dir / "wav" / "cv_es_19980264.wav"
    backend = load_recognizer("es")
    delay_s = 1.5
    audio = np.concatenate([np.zeros(int(delay_s * SAMPLE_RATE), np.float32), load_audio(source)])
    delayed = tmp_path / "delayed.wav"
    _save(delayed, audio, SAMPLE_RATE)
    whole = practice_file(source, delayed, "es", backend=backend)
    assert whole["source_words_from"].startswith("reference transcript") and whole["accuracy"] >= 0.7
    assert whole["evs_s"]["median"] == pytest.approx(delay_s, abs=0.05)
    words = [w for w in whole["words"] if w["source"]]
    before, last = words[len(words) // 3 - 1], words[len(words) // 3 + 2]  # three words cut after ``before``
    cut = audio.copy()
    cut[
        int((before["source_end_s"] + delay_s + 0.02) * SAMPLE_RATE) : int(
            (last["source_end_s"] + delay_s) * SAMPLE_RATE
        )
    ] = 0
    silenced = tmp_path / "cut.wav"
    _save(silenced, cut, SAMPLE_RATE)
    report = practice_file(source, silenced, "es", backend=backend)
    lost = report["missed_words"] + report["substituted_words"] - whole["missed_words"] - whole["substituted_words"]
    assert 2 <= lost <= 5, (lost, report["attempt_text"])
    assert report["evs_s"]["median"] == pytest.approx(delay_s, abs=0.05)


def test_an_interpreting_attempt_is_timed_per_sentence_and_scored_with_chrf(
    speech_xx_dir: Path, tmp_path: Path
) -> None:
    """The source in Spanish; the attempt is the English voice saying the reference translation, starting 1 s after
    the source ends: its one sentence's lag is that 1 s plus the voice's own length, and its chrF is high."""
    from engine.asr.vad import SileroVad, speech_flags
    from engine.cli import main
    from engine.practice.interpreting import interpret_practice_file, load_translator

    source = speech_xx_dir / "wav" / "cv_es_19599961.wav"
    entry = next(
        json.loads(line)
        for line in (speech_xx_dir / "manifest.jsonl").read_text().splitlines()
        if '"cv_es_19599961"' in line
    )
    spoken = tmp_path / "spoken.wav"
    assert main(["speak", entry["translation"].lower(), "--out", str(spoken)]) == 0
    voice, source_audio = load_audio(spoken), load_audio(source)
    flags = speech_flags(source_audio, SileroVad())
    speech_end_s = (int(np.flatnonzero(flags)[-1]) + 1) * 512 / SAMPLE_RATE
    voice_end_s = (int(np.flatnonzero(speech_flags(voice, SileroVad()))[-1]) + 1) * 512 / SAMPLE_RATE
    lead = np.zeros(source_audio.size + SAMPLE_RATE, np.float32)  # the person waits 1 s after the source ends
    attempt = tmp_path / "attempt.wav"
    _save(attempt, np.concatenate([lead, voice]), SAMPLE_RATE)
    report = interpret_practice_file(
        source, attempt, "es", translator=load_translator("es"), english=load_recognizer("en")
    )
    expected = source_audio.size / SAMPLE_RATE + 1.0 + voice_end_s - speech_end_s
    lag = report["sentence_lag_s"]
    assert report["chrf_against"] == "reference translation" and report["chrf"] >= 60, report["attempt_text"]
    assert lag["n"] == report["sentences"] >= 1
    assert lag["per_sentence"][-1]["lag_s"] == pytest.approx(expected, abs=0.4), (lag, expected)
