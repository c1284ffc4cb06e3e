"""The one WER normalizer: parentheses, numbers, contractions, hyphens, fillers and tags."""

from __future__ import annotations

import pytest

from engine.metrics.wer import corpus_wer, normalize_for_wer, wer, word_errors


def test_words_in_parentheses_are_spoken_words_and_kept() -> None:
    reference = "He came in (as he always did when the bell rang twice) and sat down."
    assert "bell rang twice" in normalize_for_wer(reference)
    assert wer(reference, "he came in as he always did when the bell rang twice and sat down") == 0.0


def test_tags_in_square_or_angle_brackets_are_dropped() -> None:
    assert normalize_for_wer("THE [noise] cat <unk> sat") == "the cat sat"


def test_numbers_spelled_or_written_compare_equal() -> None:
    assert wer("In fourteen sixty-two the city fell.", "in 1462 the city fell") == 0.0
    assert wer("twenty five people", "25 people") == 0.0


def test_contractions_hyphens_case_and_punctuation() -> None:
    assert wer("It isn't well-known, is it?", "it is not well known is it") == 0.0
    assert wer("MR. SMITH", "Mister Smith.") == 0.0


def test_an_ellipsis_or_a_lone_symbol_is_not_a_word() -> None:
    # Whisper ends a hypothesis with "..." where the speaker trails off; its normalizer kept a "." for it
    assert wer("slow", "Slow...") == 0.0
    assert normalize_for_wer("So...? Wait… $ it costs $5, 50%.") == "so wait it costs $5 50%"


def test_fillers_are_not_words() -> None:
    assert normalize_for_wer("Uh, so, um, yes") == "so yes"


def test_a_real_error_still_counts() -> None:
    assert wer("the cat sat on the mat", "the cat sat on a mat") == pytest.approx(1 / 6)


def test_corpus_wer_pools_errors_and_counts_words_said_over_silence() -> None:
    counts = word_errors(["a b c d", ""], ["a b c", "thank you"])
    assert (counts.reference_words, counts.deletions, counts.insertions) == (4, 1, 2)
    assert corpus_wer(["a b c d", ""], ["a b c", "thank you"]) == pytest.approx(3 / 4)
    assert corpus_wer([""], [""]) == 0.0
    assert wer("", "thank you") == 1.0
    with pytest.raises(ValueError):
        word_errors(["a"], [])
