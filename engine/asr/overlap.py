"""Where a new hypothesis of the streaming recognizer goes past the words it has committed: found by their text where
the hypothesis repeats them, else by time, and without a repeat of the committed text at the seam."""

from __future__ import annotations

from collections.abc import Sequence

from engine.asr.stream_values import CommittedWord
from engine.asr.words import Word, normalize_token

OVERLAP_TOLERANCE_S = 0.1
# a committed word found again in a hypothesis must end this close to where it ended when it was committed: Whisper
# re-times words by a few tenths of a second from one decode to the next, and an earlier use of the same words is
# seconds away
ALIGN_TOLERANCE_S = 1.0
MAX_OVERLAP_NGRAM = 5


def new_words(
    committed: Sequence[CommittedWord], hypothesis: list[Word], offset_s: float, last_end_s: float
) -> list[Word]:
    """The hypothesis minus what is already ``committed``: after the committed words it repeats, found by their
    text (``after_committed``), else by time; then without a repeat of the committed text at the seam. ``offset_s``:
    where the buffer starts on the source clock; ``last_end_s``: the last committed word's end."""
    after = after_committed(committed, hypothesis, offset_s, last_end_s)
    if after is not None:
        # found by text, a new word may be timed to start before the last committed one (Whisper re-times words
        # from one decode to the next): committed words stay in the order they were said
        first = committed[-1].start_s
        words = [w if w.start_s >= first else Word(w.text, first, max(w.end_s, first)) for w in hypothesis[after:]]
    else:
        words = [w for w in hypothesis if w.start_s > last_end_s - OVERLAP_TOLERANCE_S]
    # Whisper may re-time committed words to later in the buffer (after a long pause, say): whatever repeats the
    # end of the committed text is not new, however it was timed.
    return words[repeated(committed, words) :]


def after_committed(
    committed: Sequence[CommittedWord], hypothesis: Sequence[Word], offset_s: float, last_end_s: float
) -> int | None:
    """Where the hypothesis goes past the committed words still in the buffer: just after the longest run of
    their last words (up to ``MAX_OVERLAP_NGRAM``) that it repeats, ending within ``ALIGN_TOLERANCE_S`` of the last
    one's end (the nearest, if several do); None if it repeats none of them there.

    By time alone, a word was lost whenever Whisper had stretched the last committed word over the start of the
    next one ("I hope that..." with "that" timed across "next"): the next word began before it ended.
    """
    recent = [normalize_token(w.text) for w in committed[-MAX_OVERLAP_NGRAM:] if w.end_s > offset_s]
    if not recent:
        return None
    keys = [w.key for w in hypothesis]
    for n in range(len(recent), 0, -1):
        gram = recent[-n:]
        ends = [
            j
            for j in range(n, len(keys) + 1)
            if keys[j - n : j] == gram and abs(hypothesis[j - 1].end_s - last_end_s) <= ALIGN_TOLERANCE_S
        ]
        if ends:
            return min(ends, key=lambda j: abs(hypothesis[j - 1].end_s - last_end_s))
    return None


def repeated(said: Sequence[Word | CommittedWord], words: Sequence[Word]) -> int:
    """How many leading ``words`` repeat the last of ``said`` (at most ``MAX_OVERLAP_NGRAM``; case and punctuation
    blind)."""
    recent = [normalize_token(w.text) for w in said[-MAX_OVERLAP_NGRAM:]]
    for n in range(min(len(recent), len(words)), 0, -1):
        if recent[-n:] == [w.key for w in words[:n]]:
            return n
    return 0
