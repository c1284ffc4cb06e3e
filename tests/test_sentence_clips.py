"""Sentence clips cut from the development sets, and the held-back fifth."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from engine.asr.vad import FRAME_S, SileroVad
from engine.asr.words import Word, match_times
from engine.eval import devsplit
from engine.eval.sentence_clips import Span, build, sentence_spans, split_sentences, tighten
from engine.metrics.wer import wer

pytestmark = pytest.mark.untimed  # the slow tests' results do not depend on the machine's speed


def test_sentences_end_at_full_stops_question_and_exclamation_marks_not_after_abbreviations() -> None:
    text = 'Mr. Peck came. Did he? Yes! He said "go." T. V. room'
    assert [" ".join(s) for s in split_sentences(text)] == [
        "Mr. Peck came.",
        "Did he?",
        "Yes!",
        'He said "go."',
        "T. V. room",
    ]
    assert split_sentences("NO PUNCTUATION AT ALL") == [["NO", "PUNCTUATION", "AT", "ALL"]]


def test_reference_words_take_the_times_of_the_words_matched_to_them() -> None:
    timed = [Word("the", 0.0, 0.2), Word("cat,", 0.2, 0.5), Word("sat", 0.6, 0.9), Word("down.", 0.9, 1.2)]
    times = match_times(["The", "cat", "sad", "down"], timed)
    assert [t.start_s if t else None for t in times] == [0.0, 0.2, 0.6, 0.9]  # "sad" for "sat": a substitution
    assert match_times(["one", "two"], []) == [None, None]


def test_each_sentence_spans_its_words_and_a_paused_one_gives_its_phrases_too() -> None:
    timed = [
        Word("One", 0.5, 0.8),
        Word("two.", 0.8, 1.1),
        Word("Three", 2.0, 2.3),
        Word("four", 2.3, 2.6),
        Word("five.", 3.5, 3.9),
    ]
    spans = sentence_spans("One two. Three four five.", timed, 5.0)
    assert [(s.text, s.kind, s.start_s, s.end_s) for s in spans] == [
        ("One two.", "sentence", 0.5, 1.1),
        ("Three four five.", "sentence", 2.0, 3.9),
        ("Three four", "phrase", 2.0, 2.6),  # the speaker paused 0.9 s before "five."
        ("five.", "phrase", 3.5, 3.9),
    ]
    assert (spans[1].low_s, spans[1].high_s) == (1.1, 5.0)  # a cut may reach back to "two." and on to the end
    # a first word nobody timed: the sentence reaches back to the timed word before it
    spans = sentence_spans("One two. Xylophone four five.", [*timed[:2], *timed[3:]], 5.0)
    assert spans[1].start_s == 1.1 and spans[1].timed == pytest.approx(2 / 3)


def test_a_span_is_tightened_to_the_speech_near_it_and_never_into_its_neighbours() -> None:
    probabilities = np.zeros(200, np.float32)
    probabilities[30:60] = 0.9  # speech 0.96-1.92 s
    probabilities[64:70] = 0.9  # the next sentence's speech, 2.05-2.24 s
    span = Span("a b", 1.05, 1.8, 1.0, 0.5, 2.0)
    start, end = tighten(span, probabilities)
    assert start == pytest.approx(29 * FRAME_S) and end == pytest.approx(61 * FRAME_S)
    assert tighten(Span("a b", 4.0, 5.0, 1.0, 3.5, 5.5), probabilities) is None  # no speech there
    start, end = tighten(Span("a b", 1.0, 1.9, 1.0, 0.0, 1.95), probabilities)
    assert end <= 1.95


def test_the_held_back_fifth_goes_by_the_recording_a_clip_was_cut_from() -> None:
    entries = [{"id": f"rec{i}"} for i in range(200)]
    held = devsplit.select(entries, "confirm")
    assert 25 <= len(held) <= 55  # about a fifth
    assert len(devsplit.select(entries, "choose")) + len(held) == 200
    assert devsplit.select(entries, "all") == entries
    clip = {"id": "anything_s03", "source_id": held[0]["id"]}
    assert devsplit.held_back(clip)
    with pytest.raises(ValueError, match="unknown part"):
        devsplit.select(entries, "some")


@pytest.mark.slow
def test_clips_of_real_recordings_start_and_end_with_their_sentence(speech_dir, tmp_path) -> None:
    rows = [json.loads(line) for line in (speech_dir / "manifest.jsonl").read_text().splitlines() if line.strip()]
    chosen = [r for r in rows if r["id"] in ("librivox_sonnet002", "jfk_inaugural", "vctk_p225_002")]
    manifest = tmp_path / "in" / "manifest.jsonl"
    manifest.parent.mkdir()
    manifest.write_text("".join(json.dumps({**r, "wav": str(speech_dir / r["wav"])}) + "\n" for r in chosen))
    counts = build([manifest], tmp_path / "clips")
    clips = [json.loads(line) for line in (tmp_path / "clips" / "manifest.jsonl").read_text().splitlines()]
    assert counts["clips"] == len(clips) >= 5  # three sentences of the sonnet, their phrases, the other two
    from engine.asr.whisper_backend import WhisperBackend

    backend = WhisperBackend()
    vad = SileroVad()
    for clip in clips:
        audio, rate = sf.read(tmp_path / "clips" / clip["wav"], dtype="float32")
        assert rate == 16000 and audio.size / rate == pytest.approx(clip["duration_s"], abs=0.01)
        assert clip["end_s"] - clip["start_s"] == pytest.approx(clip["duration_s"], abs=0.01)
        vad.reset()
        speech = np.flatnonzero(vad.probabilities(audio) >= 0.5) * FRAME_S
        assert speech[0] <= 0.1 and audio.size / rate - speech[-1] <= 0.15, clip  # tight: no silence either side
        # a sentence's clip holds its own words: the stock decode of it gets most of them (its phrases are cut at the
        # same word times)
        if clip["kind"] == "sentence":
            assert wer(clip["text"], backend.transcribe_stock(audio, beam_size=5)) < 0.35, clip


def test_a_part_manifest_holds_its_part_of_the_recordings_with_their_paths(tmp_path) -> None:
    from engine.asr.bench import load_manifest
    from engine.cli.common import part_manifest

    entries = [{"id": f"rec{i}", "wav": f"wav/rec{i}.wav", "text": "words"} for i in range(20)]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    assert part_manifest(manifest, "all") == manifest
    parts = {part: load_manifest(part_manifest(manifest, part)) for part in ("choose", "confirm")}
    assert sorted(e["id"] for p in parts.values() for e in p) == sorted(e["id"] for e in entries)
    assert [e["id"] for e in parts["confirm"]] == [e["id"] for e in devsplit.select(entries, "confirm")]
    assert all(e["path"] == (tmp_path / "wav" / f"{e['id']}.wav").resolve() for p in parts.values() for e in p)
