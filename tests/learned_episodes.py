"""Constructed episodes for the learned policy's tests: words arriving at a steady pace, as a recognizer would commit
them."""

from __future__ import annotations

from engine.learned.episodes import ArrivedWord, Episode, Step

SENTENCE = "The quick brown fox jumps over the lazy dog, and then it runs back into the forest again."


def constructed(
    text: str = SENTENCE,
    pace_s: float = 0.3,
    delay_s: float = 0.8,
    episode_id: str = "constructed",
    tail_steps: int = 4,
) -> Episode:
    """A word every ``pace_s``, committed ``delay_s`` after it ends, a recognizer step per word with the next two
    words as the tentative ones, then ``tail_steps`` steps with nothing new."""
    words = text.split()
    said = 0.8 * pace_s
    arrived = [ArrivedWord(w, pace_s * i, pace_s * i + said, pace_s * i + said + delay_s) for i, w in enumerate(words)]
    steps = []
    for n in range(len(words) + tail_steps):
        committed = (arrived[n],) if n < len(words) else ()
        at = arrived[n].commit_s if n < len(words) else arrived[-1].commit_s + pace_s * (n - len(words) + 1)
        steps.append(Step(at, committed, tuple(words[n + 1 : n + 3]), True))
    return Episode(episode_id, pace_s * len(words) + 0.5, steps, text)
