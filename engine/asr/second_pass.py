"""A second decode of the streaming buffer that rewrites committed words the voice has not spoken yet.

The first pass (``StreamingRecognizer``) commits words from a greedy decode of a short window. After each step
while a committed word may still be rewritten, the same model decodes the step's buffer again with more beams (on
the other core: its compute is not charged to the first pass) and its words replace committed ones where the two
differ, but only words the voice cannot have spoken yet: committed less than ``speak_after_s`` before the second
decode ends. The transcript then holds the second pass's words; the first pass goes on aligning against its own.
Measured in ``bench asr --second-pass`` and not used by a session: most differences it finds come too late
(docs/RESULTS.md, the short window).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher

import numpy as np

from engine.asr.backend import SAMPLE_RATE, StepDecode
from engine.asr.stream_values import CommittedWord
from engine.asr.words import Word, normalize_token

log = logging.getLogger(__name__)

# The voice speaks a committed word about this long after it is committed (the "about a second"): a
# revision that lands later would rewrite a word already said.
SPEAK_AFTER_S = 1.0
END_TOLERANCE_S = 0.1  # a second-pass word starting this close after the last committed word's end is not yet one


@dataclass(frozen=True, slots=True)
class Revision:
    """Committed words ``start`` up to ``stop`` of the transcript (indices before it was applied) became ``words``."""

    start: int
    stop: int
    words: tuple[CommittedWord, ...]
    at_s: float  # when the second decode that found it ended (the first pass's clock)


@dataclass
class SecondPass:
    """The final transcript: committed words as the first pass gives them, rewritten by the second decode.

    ``decode(audio)`` is the second decode (buffer-relative word times); ``timer`` measures its compute.
    A request that comes while the previous decode still runs is skipped: the next step's will hear more.
    """

    decode: Callable[[np.ndarray], list[Word]]
    speak_after_s: float = SPEAK_AFTER_S
    timer: Callable[[], float] = time.perf_counter
    words: list[CommittedWord] = field(default_factory=list)
    revisions: list[Revision] = field(default_factory=list)
    late: int = 0  # differences found only after the voice would have spoken the words (not applied)
    decodes: int = 0
    compute_s: float = 0.0
    busy_until_s: float = 0.0

    @property
    def words_revised(self) -> int:
        """Words changed: per revision, the more of the words it replaced and the words it put in their place."""
        return sum(max(r.stop - r.start, len(r.words)) for r in self.revisions)

    def add(self, committed: Sequence[CommittedWord]) -> None:
        self.words.extend(committed)

    def revise(self, buffer: np.ndarray, offset_s: float, now_s: float) -> list[Revision]:
        """Decode ``buffer`` (source audio from ``offset_s``) again and apply what differs in the committed words
        still revisable when the decode ends (``now_s`` is when it starts, the first pass's step just done)."""
        if now_s < self.busy_until_s or buffer.size < SAMPLE_RATE // 10:
            return []
        if not self.words or now_s >= self.words[-1].commit_s + self.speak_after_s:
            return []
        first = len(self.words)  # the first committed word in the buffer, found from the end (a session is long)
        while first > 0 and self.words[first - 1].end_s > offset_s:
            first -= 1
        if first == len(self.words):
            return []
        start = self.timer()
        heard = [Word(w.text, w.start_s + offset_s, w.end_s + offset_s) for w in self.decode(buffer)]
        elapsed = self.timer() - start
        self.decodes += 1
        self.compute_s += elapsed
        landed = now_s + elapsed
        self.busy_until_s = landed
        found = align(self.words[first:], heard, first)
        heard_s = offset_s + buffer.size / SAMPLE_RATE
        applied = []
        for start_i, stop_i, new in reversed(found):  # from the end, so earlier indices stay valid
            if not self._revisable(start_i, stop_i, landed):
                self.late += 1
                continue
            commit_s = min(w.commit_s for w in self.words[start_i:stop_i]) if stop_i > start_i else landed
            words = tuple(CommittedWord(w.text, w.start_s, w.end_s, commit_s, heard_s=heard_s) for w in new)
            if words and stop_i > start_i:
                words = words[:-1] + (replace(words[-1], pause_after=self.words[stop_i - 1].pause_after),)
            revision = Revision(start_i, stop_i, words, landed)
            log.debug(
                "second pass: %r -> %r",
                " ".join(w.text for w in self.words[start_i:stop_i]),
                " ".join(w.text for w in words),
            )
            self.words[start_i:stop_i] = list(words)
            applied.append(revision)
        self.revisions.extend(reversed(applied))
        return list(reversed(applied))

    def _revisable(self, start: int, stop: int, landed_s: float) -> bool:
        """Words ``start``..``stop`` (or, for an insertion, the word after it) not yet spoken when the revision
        lands."""
        span = self.words[start:stop] if stop > start else self.words[start : start + 1]
        return bool(span) and all(w.commit_s + self.speak_after_s > landed_s for w in span)


def align(
    committed: Sequence[CommittedWord], heard: Sequence[Word], first: int = 0
) -> list[tuple[int, int, list[Word]]]:
    """Where the second decode's words differ from the committed ones (both in the buffer): (start, stop, words)
    with indices offset by ``first``, only between words both decodes heard alike. At either end of the span the
    two decodes differ by what they are given, not by what they hear: the second may hear a cut word at the
    buffer's start as a word of its own ("And then this ...") and time the last word later than the first did,
    or have words past it that are not committed yet. Differences of punctuation or case alone are none."""
    if not committed:
        return []
    last_end = committed[-1].end_s
    heard = [w for w in heard if w.start_s < last_end + END_TOLERANCE_S]
    a = [normalize_token(w.text) for w in committed]
    b = [w.key for w in heard]
    opcodes = SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    found = []
    for k, (op, i1, i2, j1, j2) in enumerate(opcodes):
        anchored = 0 < k < len(opcodes) - 1 and opcodes[k - 1][0] == "equal" and opcodes[k + 1][0] == "equal"
        if op != "equal" and anchored:
            found.append((first + i1, first + i2, list(heard[j1:j2])))
    return found


def second_decode(backend: object, beam_size: int = 5) -> Callable[[np.ndarray], list[Word]]:
    """The second decode: the backend's step decode of the whole buffer with ``beam_size`` beams, no prompt (as
    the first pass decodes)."""

    def decode(audio: np.ndarray) -> list[Word]:
        return backend.transcribe(audio, None, StepDecode(beam_size))  # type: ignore[attr-defined]

    return decode
