"""Playback as it would happen: pieces play back to back as soon as each is ready, and every gap is classified.

A gap is an ``underrun`` when the words the next piece needed had arrived before the gap began (compute was too
slow) and ``starved`` time otherwise (waiting for the speaker). ``GapCounts`` holds that rule; ``speak`` without a
device, the pipeline (computed or device play times) and the evaluation all count gaps through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class GapCounts:
    """Silences between pieces by cause (METRICS.md): compute (underruns), the speaker (starved), a new sentence."""

    underruns: int = 0
    gap_s: float = 0.0  # total length of the underruns
    starved_s: float = 0.0
    pause_s: float = 0.0  # before the first piece of a sentence, when the caller counts those apart
    phrase_pause_s: float = 0.0  # the part of ``starved_s`` before the first piece after a comma (; :)
    # Of the underruns (when the caller gives the piece's compute): those whose words came less than the piece's
    # own compute before the voice ran out, so that no worker starting at once could have made it in time, and
    # those whose piece held a word the recognizer's hold bound committed, which no hypothesis had agreed on (so
    # nothing made ahead could have matched it). What is left is compute that started late or took too long.
    short_notice: int = 0
    forced: int = 0

    def add(
        self,
        gap_s: float,
        gap_start_s: float,
        inputs_at_s: float,
        sentence_start: bool = False,
        phrase_start: bool = False,
        compute_s: float | None = None,
        forced: bool = False,
    ) -> bool:
        """A silence of ``gap_s`` began at ``gap_start_s``; the next piece's words were all in at ``inputs_at_s``;
        ``compute_s``: what that piece took to make, ``forced``: it holds a word the hold bound committed. Returns
        whether it was an underrun."""
        if sentence_start:
            self.pause_s += gap_s
        elif inputs_at_s <= gap_start_s:  # the words were there before the gap began: compute was too slow
            self.underruns += 1
            self.gap_s += gap_s
            if compute_s is not None:
                self.short_notice += gap_start_s - inputs_at_s < compute_s
                self.forced += forced
            return True
        else:  # the gap began while waiting for words (the speaker's pace)
            self.starved_s += gap_s
            if phrase_start:
                self.phrase_pause_s += gap_s
        return False


@dataclass
class Timeline:
    start_s: list[float] = field(default_factory=list)
    end_s: list[float] = field(default_factory=list)
    time_balance: list[float] = field(default_factory=list)  # for pieces 1..n-1: audio in hand when ready
    gaps: GapCounts = field(default_factory=GapCounts)

    @property
    def underruns(self) -> int:
        return self.gaps.underruns

    @property
    def gap_s(self) -> float:
        return self.gaps.gap_s

    @property
    def starved_s(self) -> float:
        return self.gaps.starved_s


class PlaybackTimeline:
    """Incremental form: ``add`` one piece as it becomes ready, get its play start and end at once.

    Keeps only running totals (and, when ``keep`` is set, the per-piece lists of ``Timeline``), so a session of any
    length uses constant memory.
    """

    def __init__(self, keep: bool = True, epsilon: float = 1e-9) -> None:
        self.timeline = Timeline()
        self.keep = keep
        self.epsilon = epsilon
        self.end_s: float | None = None  # when the audio queued so far stops playing

    def add(self, ready_s: float, audio_s: float, inputs_at_s: float) -> tuple[float, float]:
        """``inputs_at_s``: when everything the piece needed had arrived. Returns (play start, play end)."""
        t = self.timeline
        end = self.end_s
        if end is None:
            start = ready_s
        else:
            if self.keep:
                t.time_balance.append(end - ready_s)
            start = max(ready_s, end)
            if start - end > self.epsilon:
                t.gaps.add(start - end, end, inputs_at_s)
        self.end_s = start + audio_s
        if self.keep:
            t.start_s.append(start)
            t.end_s.append(self.end_s)
        return start, self.end_s


def simulate_playback(
    ready_s: Sequence[float], audio_s: Sequence[float], inputs_at_s: Sequence[float], epsilon: float = 1e-9
) -> Timeline:
    """``ready_s[i]``: when piece i was ready; ``inputs_at_s[i]``: when everything it needed had arrived."""
    playback = PlaybackTimeline(epsilon=epsilon)
    for ready, duration, inputs_at in zip(ready_s, audio_s, inputs_at_s, strict=True):
        playback.add(ready, duration, inputs_at)
    return playback.timeline
