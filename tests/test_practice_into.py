"""Interpreting into a language other than English (``--into es``): the person's words recognized in it, each source
sentence's rendering found in time, chrF against a reference beside the source. Fakes for the timing rule; for real:
an English "talk" (two FLEURS sentences' English, spoken by the bundled voice) interpreted by the Spanish
recordings of the same sentences, each begun 0.6 s after its English sentence ended (or after the last one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.asr.words import Word
from engine.practice.interpret_into import renderings, sentence_renderings

IDS = ("fleurs_es_1770", "fleurs_es_1799")  # two sentences (a third cost CI 15 s and showed nothing more)
RATE = 16000
LATE_S = 0.6  # each Spanish sentence begins this long after its English one ended
BREATH_S = 1.0  # between two of the person's sentences
GAP_S = 3.0  # between two English sentences (the Spanish take longer to say: the person falls behind less)
MAX_LAG_ERROR_S = 0.3  # a sentence's lag against its rendering's end as heard in its recording alone


def _timed(text: str, start_s: float, step_s: float = 0.4) -> list[Word]:
    return [Word(t, start_s + i * step_s, start_s + i * step_s + 0.3) for i, t in enumerate(text.split())]


def test_a_rendering_is_cut_at_its_sentence_ends_and_its_pauses() -> None:
    said = [
        Word("hola", 1.0, 1.3),
        Word("amigos.", 1.4, 1.8),
        Word("esto", 2.0, 2.2),
        Word("es.", 2.3, 2.4),
        Word("todo", 3.5, 3.9),
        Word("bien", 4.0, 4.2),
    ]
    assert [[w.text for w in r] for r in renderings(said)] == [["hola", "amigos."], ["esto", "es."], ["todo", "bien"]]
    unpunctuated = [Word(w.text.strip("."), w.start_s, w.end_s) for w in said]  # cut at its pauses only
    assert [[w.text for w in r] for r in renderings(unpunctuated)] == [
        ["hola", "amigos", "esto", "es"],
        ["todo", "bien"],
    ]


def test_renderings_are_matched_with_the_sentences_in_order_by_length_and_after_them() -> None:
    source = [
        _timed("this seems sensible, does it not?", 0.0),
        _timed("he ran two races.", 3.0),
        _timed("people write on screens.", 5.0),
    ]
    # the first sentence rendered in two, its tail after the second sentence's end; "¿no?" alone would be far too
    # short for the second, which is rendered next
    said = _timed("esto parece tener sentido verdad.", 2.6) + _timed("¿no?", 5.6)
    said += _timed("corrió dos carreras.", 6.2) + _timed("la gente escribe en pantallas.", 7.8)
    rows = sentence_renderings(source, said)
    assert rows[0]["rendering"] == "esto parece tener sentido verdad. ¿no?"
    assert rows[0]["lag_s"] == pytest.approx(5.9 - 2.3)
    assert rows[1]["rendering"] == "corrió dos carreras." and rows[1]["lag_s"] == pytest.approx(7.3 - 4.5)
    assert rows[2]["lag_s"] == pytest.approx(9.7 - 6.5)
    # a rendering ends after its sentence: one said before the second sentence ended is the first's
    early = _timed("esto parece tener sentido verdad.", 0.5) + _timed("corrió dos carreras.", 3.2)
    assert [r["rendering"] for r in sentence_renderings(source[:2], early)][1] == "corrió dos carreras."
    assert [r["lag_s"] for r in sentence_renderings(source, [])] == [None, None, None]


def _trimmed(audio: np.ndarray) -> np.ndarray:
    """The recording from its first speech to its last (silero's VAD; 0.1 s kept each side): a person starts at
    once, and the speech's end is known."""
    from engine.asr.vad import SileroVad, speech_span

    span = speech_span(audio, SileroVad(), keep_s=0.1)
    assert span is not None
    return audio[span[0] : span[1]]


@pytest.fixture(scope="module")
def talk(tmp_path_factory: pytest.TempPathFactory, speech_xx_dir: Path) -> dict:
    from engine.audio.resample import resample
    from engine.tts.policies import make_policy
    from engine.tts.synthesizer import IncrementalSynthesizer, synthesize_text
    from engine.tts.voice import TwoStageVoice

    entries = {e["id"]: e for e in map(json.loads, (speech_xx_dir / "manifest.jsonl").read_text().splitlines())}
    voice = TwoStageVoice()
    folder = tmp_path_factory.mktemp("talk")
    source, person, placed = [], np.zeros(0, np.float32), []
    at = 0.0
    for sentence_id in IDS:
        text = entries[sentence_id]["translation"]
        english, _ = synthesize_text(IncrementalSynthesizer(voice, make_policy("full")), text)
        english = resample(english.astype(np.float32), voice.sample_rate, RATE)
        source += [english, np.zeros(int(GAP_S * RATE), np.float32)]
        spanish = _trimmed(sf.read(str(speech_xx_dir / entries[sentence_id]["wav"]), dtype="float32")[0])
        # after the English sentence's audio ends, and a breath after the person's last sentence (Spanish takes longer)
        begin = max(at + english.size / RATE + LATE_S, person.size / RATE + BREATH_S)
        placed.append((sentence_id, begin, spanish))
        end = int(begin * RATE) + spanish.size
        person = np.concatenate([person, np.zeros(max(end - person.size, 0), np.float32)])
        person[int(begin * RATE) : end] = spanish
        at += english.size / RATE + GAP_S
    sf.write(str(folder / "talk.wav"), np.concatenate(source), RATE, subtype="PCM_16")
    sf.write(str(folder / "rendering.wav"), np.concatenate([person, np.zeros(RATE, np.float32)]), RATE)
    (folder / "talk.es.txt").write_text(" ".join(entries[i]["text"] for i in IDS), encoding="utf-8")
    return {"folder": folder, "placed": placed, "entries": entries}


@pytest.mark.slow
def test_an_english_talk_interpreted_into_spanish_is_timed_per_sentence_and_scored_with_chrf(talk: dict) -> None:
    from engine.asr.offline import transcribe_long
    from engine.practice.attempt import load_recognizer
    from engine.practice.interpret_into import interpret_into_file

    folder = talk["folder"]
    spanish = load_recognizer("es")
    report = interpret_into_file(folder / "talk.wav", folder / "rendering.wav", "es", person_recognizer=spanish)
    rows = report["sentence_lag_s"]["per_sentence"]
    assert report["sentences"] == len(IDS) and report["sentences_said"] == len(IDS), rows
    for row, (_, begin, clip) in zip(rows, talk["placed"], strict=True):
        truth = begin + transcribe_long(spanish, clip)[-1].end_s - row["source_end_s"]  # as heard alone
        assert abs(row["lag_s"] - truth) < MAX_LAG_ERROR_S, (row, truth)
        assert row["lag_s"] > LATE_S
    assert report["chrf"] > 50 and report["chrf_against"] == "the reference translation (es)"
    # without the reference beside it: the lags, no quality figure, and the summary says so
    (folder / "talk.es.txt").unlink()
    command = [
        sys.executable,
        "-m",
        "engine",
        "practice",
        str(folder / "talk.wav"),
        "--interpret",
        "--into",
        "es",
        "--voice",
        str(folder / "rendering.wav"),
        "--no-history",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "you (es):" in done.stdout and "no reference translation in es" in done.stdout
    assert f"({len(IDS)} of {len(IDS)} sentences)" in done.stdout
    bad = subprocess.run(
        command[:-3] + ["--into", "xx", "--voice", str(folder / "rendering.wav")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "does not transcribe 'xx'" in bad.stderr


@pytest.mark.slow
@pytest.mark.audio
def test_interpreting_the_talk_into_spanish_live_scores_as_the_kept_files_offline(
    talk: dict, virtual_audio, tmp_path: Path
) -> None:
    """The talk plays on the virtual speaker, the Spanish rendering is heard on the virtual microphone: every
    sentence found, the lags those of the kept recording scored offline, and of the rendering alone moved by the
    delay it arrived with."""

    from engine.audio.io import load_audio
    from engine.practice.attempt import load_recognizer
    from engine.practice.interpret_into import interpret_into_file
    from engine.practice.live import ATTEMPT_FILE, PracticeSession
    from tests import virtual_audio as va

    folder = talk["folder"]
    if not (folder / "talk.es.txt").is_file():  # the test above took it away
        (folder / "talk.es.txt").write_text(" ".join(talk["entries"][i]["text"] for i in IDS), encoding="utf-8")
    spanish = load_recognizer("es")
    session = PracticeSession(
        folder / "talk.wav",
        "en",
        record_dir=tmp_path / "rec",
        backend=spanish,
        pace_setter=False,
        interpret=True,
        into="es",
    )
    session.prepare()
    va.practise_with(session, virtual_audio, folder / "rendering.wav", timeout_s=150)
    report = session.report
    assert report is not None and report["into"] == "es" and report["sentences_said"] == len(IDS), report
    kept = interpret_into_file(folder / "talk.wav", tmp_path / "rec" / ATTEMPT_FILE, "es", person_recognizer=spanish)
    alone = interpret_into_file(folder / "talk.wav", folder / "rendering.wav", "es", person_recognizer=spanish)
    _, lag = va.aligned_correlation(load_audio(tmp_path / "rec" / ATTEMPT_FILE), load_audio(folder / "rendering.wav"))
    rows = zip(
        report["sentence_lag_s"]["per_sentence"],
        kept["sentence_lag_s"]["per_sentence"],
        alone["sentence_lag_s"]["per_sentence"],
        strict=True,
    )
    for live, offline, file in rows:
        assert abs(live["lag_s"] - offline["lag_s"]) < 0.05, (live, offline)
        assert abs(live["lag_s"] - (file["lag_s"] + lag / RATE)) < MAX_LAG_ERROR_S, (live, file, lag / RATE)
    assert report["chrf"] > 50
