"""The non-English guard: the source language copied or a foreign script is not spoken in the English voice."""

from __future__ import annotations

from engine.asr.english_guard import MIN_WORDS, EnglishGuard, foreign_script


def test_foreign_scripts_are_caught_word_by_word() -> None:
    assert foreign_script("東京") and foreign_script("Москва") and foreign_script("です")
    assert not foreign_script("café") and not foreign_script("don't") and not foreign_script("1963,")
    guard = EnglishGuard()
    assert guard.check(["The", "station", "東京"], "ja") == [True, True, False]


def test_a_hypothesis_in_french_is_not_spoken_but_english_is() -> None:
    guard = EnglishGuard()
    french = "je vais vous parler de mon expérience des années passées".split()
    assert guard.check(french, "fr") == [False] * len(french)
    english = "I will tell you about my experience of the past years".split()
    assert all(guard.check(english, "fr"))
    spanish = "cada uno de ellos es un derecho exclusivo".split()
    assert not any(guard.check(spanish, "es"))
    assert all(guard.check("each one of them is an exclusive right".split(), "es"))


def test_short_batches_and_english_sources_pass() -> None:
    guard = EnglishGuard()
    assert all(guard.check(["con", "amor"][: MIN_WORDS - 1], "es"))  # too little to tell
    assert all(guard.check("je vais vous parler".split(), "en"))  # shadowing English: nothing to guard
    assert all(guard.check("je vais vous parler".split(), None))  # language not known yet
