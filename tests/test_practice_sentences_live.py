"""Sentence by sentence through the virtual devices: each sentence plays on the virtual speaker, the "person" (the
same sentence, said again half a second after it ended) is heard on the virtual microphone, and every sentence is
scored: all repeated, how soon the person started as the copy was placed, the same figures as the kept files
scored offline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import load_audio
from engine.practice.live import ATTEMPT_FILE, PracticeSession
from engine.practice.live_common import SOURCE_FILE
from tests import virtual_audio as va

pytestmark = [pytest.mark.audio, pytest.mark.slow]

SOURCE_ID = "ls_2412-153948-0000"  # 11.7 s, 36 words: its transcript has no punctuation, the pauses cut it
# from "nor of the circumstances" on (7.3 s, two sentences of about 3 s, cut at the pause before "the narrative"):
# the whole passage's first sentence of 7.6 s made the played program 26 s long, this one 16 s
CUT_S = 4.43  # in the pause after "antecedents" (4.26-4.60 s)
REPEAT_AFTER_S = 0.5  # the person starts each sentence's copy this long after the sentence's last word
RATE = 16000
# the person's copy reaches the recording 0.0-0.3 s after it was meant to (paplay's start), found by correlation; the
# bound is then the recognizer's time of a sentence's first word in two placements of the same audio: -0.035 to
# +0.011 s over three runs (Intel Xeon, 2 cores), with room for a slower machine's decoding windows
MAX_STARTED_ERROR_S = 0.1


def _person(session: PracticeSession) -> np.ndarray:
    """Each sentence of the program said again, ``REPEAT_AFTER_S`` after its last word, on the program's clock."""
    program = session._audio
    out = np.zeros(program.size, np.float32)
    for sentence in session.program.played if session.program else ():
        clip = program[round(sentence.start_s * RATE) : round(sentence.speech_end_s * RATE) + RATE // 10]
        at = round((sentence.speech_end_s + REPEAT_AFTER_S) * RATE)
        out[at : at + clip.size] = clip[: out.size - at]
    return out


def test_each_sentence_played_is_repeated_in_its_pause_and_scored(
    virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    from engine.practice.attempt import load_recognizer, practice_file

    backend = load_recognizer("en")
    passage = load_audio(speech_dir / next(e for e in speech_manifest if e["id"] == SOURCE_ID)["wav"])
    source = tmp_path / "source.wav"
    sf.write(str(source), passage[round(CUT_S * RATE) :], RATE, subtype="FLOAT")
    session = PracticeSession(source, record_dir=tmp_path / "rec", backend=backend, sentence_by_sentence=True)
    session.prepare()
    sentences = session.program.played if session.program else None
    assert sentences is not None and len(sentences) >= 2 and session.pace_setter is False
    person_audio = _person(session)
    person = tmp_path / "person.wav"
    sf.write(str(person), person_audio, RATE, subtype="FLOAT")
    va.practise_with(session, virtual_audio, person, timeout_s=120)
    report = session.report
    assert report is not None and report["mode"] == "sentence by sentence"
    recorded = load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    score, lag = va.aligned_correlation(recorded, person_audio)
    assert score > 0.8
    rows = report["sentences"]
    assert len(rows) == len(sentences) and report["sentences_said"] == len(rows)
    # the truth: the person's file itself scored (not through the devices), moved by the delay it arrived with
    alone = practice_file(source, person, backend=backend, sentence_by_sentence=True)["sentences"]
    for row, truth in zip(rows, alone, strict=True):
        assert row["accuracy"] >= 0.8, row
        expected = truth["started_after_s"] + lag / RATE
        assert abs(row["started_after_s"] - expected) < MAX_STARTED_ERROR_S, (row, truth, lag / RATE)
        assert 0.0 < truth["started_after_s"] < REPEAT_AFTER_S + 1.0  # in the pause, after the sentence
    # what it played is kept beside the attempt, and the kept files score the same offline: the session scored the
    # attempt as kept (16-bit), which moved a sentence's first word 0.02-0.06 s against the float it heard
    assert load_audio(tmp_path / "rec" / SOURCE_FILE).size == session._audio.size
    saved = json.loads((tmp_path / "rec" / "practice.json").read_text(encoding="utf-8"))
    assert saved["played_source"] == str(tmp_path / "rec" / SOURCE_FILE) and saved["mode"] == report["mode"]
    offline = practice_file(source, tmp_path / "rec" / ATTEMPT_FILE, backend=backend, sentence_by_sentence=True)
    assert [r["text"] for r in offline["sentences"]] == [r["text"] for r in rows]
    for live, kept in zip(rows, offline["sentences"], strict=True):
        assert live["started_after_s"] == pytest.approx(kept["started_after_s"], abs=1e-9), (live, kept)
        assert live["accuracy"] == kept["accuracy"]
