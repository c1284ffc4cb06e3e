"""The stress set's short phrases, cut from the real recordings."""

from __future__ import annotations

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.audio.io import load_audio
from engine.eval.stress import SHORT_MAX_WORDS, SHORT_PAUSE_S, SHORT_QUIET_DBFS, rms, short_phrases


def test_short_phrases_are_cut_at_word_boundaries_between_quiet_pauses(speech_manifest, speech_dir) -> None:
    entries = [{**e, "path": speech_dir / e["wav"]} for e in speech_manifest]
    audio = {e["id"]: load_audio(e["path"]) for e in entries}
    samples, text, sources = short_phrases(entries, audio, np.random.default_rng(0), count=6)
    assert sources and all(e.get("word_times") for e in sources)
    words = text.split()
    assert 6 <= len(words) <= 6 * SHORT_MAX_WORDS
    vocabulary = {w[0] for e in sources for w in e["word_times"]}
    assert set(words) <= vocabulary  # the words said are the forced alignment's
    pause = int(SHORT_PAUSE_S * SAMPLE_RATE)
    assert 20 * np.log10(rms(samples[:pause])) < SHORT_QUIET_DBFS + 1  # near-silence before the first phrase
    assert 20 * np.log10(rms(samples[-pause:])) < SHORT_QUIET_DBFS + 1  # and after the last
    speech = samples.size - 7 * pause
    assert 0.1 * len(words) * SAMPLE_RATE < speech < 0.6 * len(words) * SAMPLE_RATE  # the words, not their sentences
    again, same_text, _ = short_phrases(entries, audio, np.random.default_rng(0), count=6)
    assert same_text == text and np.array_equal(again, samples)  # seeded: the same set each time
    assert short_phrases([{**e, "word_times": None} for e in entries], audio, np.random.default_rng(0)) is None
