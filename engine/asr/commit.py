"""Commit policies: which leading words of the uncommitted hypothesis tail become final at this step.

Each step the recognizer hypothesizes the whole buffer; the words already committed are stripped, leaving the
tail. A policy looks at the tail (and its own memory of earlier tails) and answers how many of its leading words to
commit now. Committed words never change. Pure classes over word lists, so they are tested on hand-made
hypothesis sequences (Liu et al. 2020, section 2).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Protocol

from engine.asr.words import Word


class CommitPolicy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def streaming(self) -> bool:
        """False for a policy that waits for the end of an utterance (offline): no hold bound."""
        ...

    def update(self, tail: Sequence[Word], heard_s: float | None = None, limit: int | None = None) -> int:
        """Words of ``tail`` (a prefix) to commit now, given the hypothesis of this step (made on ``heard_s`` of
        audio, for a policy that spaces the hypotheses it compares by time), at most ``limit`` of them (the
        recognizer's: a last word that may still grow)."""
        ...

    def finish(self, tail: Sequence[Word]) -> int:
        """The input ended: how many words of the last tail to commit (all of them)."""
        ...

    def reset(self) -> None: ...

    def advance(self, count: int) -> None:
        """The recognizer committed ``count`` more leading words of the last tail than the policy chose (they were
        held too long): forget them."""
        ...


def common_prefix_length(*tails: Sequence[Word]) -> int:
    """Length of the longest prefix on which every tail agrees (compared case- and punctuation-blind)."""
    if not tails:
        return 0
    n = 0
    for words in zip(*tails, strict=False):
        if len({w.key for w in words}) != 1:
            break
        n += 1
    return n


def _at_most(count: int, limit: int | None) -> int:
    return count if limit is None else max(min(count, limit), 0)


# Agreement across a gap: the audio heard by two steps a gap apart differs by a few samples from the gap itself
GAP_TOLERANCE_S = 0.05
GAP_HISTORY = 8  # tails remembered for it: enough for a gap of several steps


class LocalAgreement:
    """LA-n: commit the longest common prefix of the last ``n`` tails (n = 2: two consecutive hypotheses).

    With ``min_gap_s`` (LA-2 only), a tail is compared with the newest earlier one made on at least that much less
    audio, instead of the previous one: interpreting steps every 0.75 s and agrees across 1.5 s of new speech, since
    two translations a step apart agree on words the next second of speech changes. A remembered tail that does not
    begin with the words just committed is forgotten.
    """

    streaming = True

    def __init__(self, n: int = 2, min_gap_s: float = 0.0) -> None:
        if n < 2:
            raise ValueError(f"local agreement needs n >= 2 hypotheses, not {n}")
        if min_gap_s < 0 or (min_gap_s > 0 and n != 2):
            raise ValueError(f"agreement across a gap is for la2 and a gap >= 0 (got la{n}, {min_gap_s} s)")
        self.n = n
        self.min_gap_s = min_gap_s
        self._previous: deque[list[Word]] = deque(maxlen=n - 1)
        # with ``min_gap_s``: (audio heard, what stays uncommitted of the tail) of the last steps, and the last tail
        self._heard: deque[tuple[float, list[Word]]] = deque(maxlen=GAP_HISTORY)
        self._last: list[Word] = []

    @property
    def name(self) -> str:
        return f"la{self.n}"

    def update(self, tail: Sequence[Word], heard_s: float | None = None, limit: int | None = None) -> int:
        current = list(tail)
        if self._across_gap():
            return self._update_across_gap(current, heard_s, limit)
        count = common_prefix_length(*self._previous, current) if len(self._previous) == self.n - 1 else 0
        count = _at_most(count, limit)
        # what stays undisplayed of every remembered tail, for the next comparison
        self._previous = deque((t[count:] for t in self._previous), maxlen=self.n - 1)
        self._previous.append(current[count:])
        return count

    def _update_across_gap(self, current: list[Word], heard_s: float | None, limit: int | None) -> int:
        if heard_s is None:
            raise ValueError("agreement across a gap needs the audio each hypothesis was made on")
        count = _at_most(self._agreed(heard_s, current), limit)
        self._forget(current[:count])
        self._heard.append((heard_s, current[count:]))
        self._last = current[count:]
        return count

    # What a variant may change (scripts/interpret_asr_sweep.py has some): whether tails are remembered with the
    # audio they were made on, how far back the one agreed with lies, and how the agreement is counted.
    def _across_gap(self) -> bool:
        return self.min_gap_s > 0

    def _gap_s(self) -> float:
        return self.min_gap_s

    def _agreed(self, heard_s: float, current: list[Word]) -> int:
        """How many leading words of ``current`` the newest tail made on ``_gap_s()`` less audio agrees with."""
        made_by = heard_s - self._gap_s() + GAP_TOLERANCE_S
        older = next((t for at, t in reversed(self._heard) if at <= made_by), None)
        return common_prefix_length(older, current) if older is not None else 0

    def _forget(self, words: Sequence[Word]) -> None:
        """Strip committed ``words`` from the remembered tails; forget those that do not begin with them."""
        keys = [w.key for w in words]
        kept = ((at, t[len(keys) :]) for at, t in self._heard if [w.key for w in t[: len(keys)]] == keys)
        self._heard = deque(kept, maxlen=GAP_HISTORY)

    def finish(self, tail: Sequence[Word]) -> int:
        self.reset()
        return len(tail)

    def reset(self) -> None:
        self._previous.clear()
        self._heard.clear()
        self._last = []

    def advance(self, count: int) -> None:
        self._previous = deque((t[count:] for t in self._previous), maxlen=self.n - 1)
        self._forget(self._last[:count])
        self._last = self._last[count:]


class HoldN:
    """hold-n: commit all but the last ``n`` words of every tail."""

    streaming = True

    def __init__(self, n: int = 2) -> None:
        if n < 0:
            raise ValueError(f"hold-n needs n >= 0, not {n}")
        self.n = n

    @property
    def name(self) -> str:
        return f"hold{self.n}"

    def update(self, tail: Sequence[Word], heard_s: float | None = None, limit: int | None = None) -> int:
        return _at_most(max(len(tail) - self.n, 0), limit)

    def finish(self, tail: Sequence[Word]) -> int:
        return len(tail)

    def reset(self) -> None:
        pass

    def advance(self, count: int) -> None:
        pass


class WaitK:
    """wait-k: commit nothing for the first ``k`` steps, then at most ``rate`` words per step."""

    streaming = True

    def __init__(self, k: int = 2, rate: int = 2) -> None:
        if k < 0 or rate < 1:
            raise ValueError(f"wait-k needs k >= 0 and rate >= 1 (got k={k}, rate={rate})")
        self.k = k
        self.rate = rate
        self._steps = 0

    @property
    def name(self) -> str:
        return "waitk"

    def update(self, tail: Sequence[Word], heard_s: float | None = None, limit: int | None = None) -> int:
        self._steps += 1
        if self._steps <= self.k:
            return 0
        return _at_most(min(len(tail), self.rate), limit)

    def finish(self, tail: Sequence[Word]) -> int:
        self.reset()
        return len(tail)

    def reset(self) -> None:
        self._steps = 0

    def advance(self, count: int) -> None:
        pass


class Offline:
    """Commit only at the end of the utterance: the accuracy reference."""

    name = "offline"
    streaming = False

    def update(self, tail: Sequence[Word], heard_s: float | None = None, limit: int | None = None) -> int:
        return 0

    def finish(self, tail: Sequence[Word]) -> int:
        return len(tail)

    def reset(self) -> None:
        pass

    def advance(self, count: int) -> None:
        pass


def make_commit_policy(name: str, agreement_gap_s: float = 0.0) -> CommitPolicy:
    """``la2`` (or ``laN``), ``hold2`` (or ``holdN``), ``waitk``, ``offline``. ``agreement_gap_s``: la2 agrees
    with the hypothesis made on that much less audio (the other policies do not compare hypotheses that way)."""
    if name.startswith("la") and name[2:].isdigit():
        n = int(name[2:])
        return LocalAgreement(n, agreement_gap_s if n == 2 else 0.0)
    if name.startswith("hold") and name[4:].isdigit():
        return HoldN(int(name[4:]))
    if name == "waitk":
        return WaitK()
    if name == "offline":
        return Offline()
    raise ValueError(f"unknown commit policy {name!r}: use la2, hold2, waitk or offline")
