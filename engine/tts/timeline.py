"""Playback as it would happen: pieces play back to back as soon as each is ready, and every gap is classified.

A gap is an ``underrun`` when the words the next piece needed had arrived before the gap began (compute was too
slow) and ``starved`` time otherwise (waiting for the speaker). Used by ``speak`` without a device, by the
simulated pipeline and by the evaluation, so all of them measure gaps the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Timeline:
    start_s: list[float] = field(default_factory=list)
    end_s: list[float] = field(default_factory=list)
    time_balance: list[float] = field(default_factory=list)  # for pieces 1..n-1: audio in hand when ready
    underruns: int = 0
    gap_s: float = 0.0
    starved_s: float = 0.0


def simulate_playback(
    ready_s: Sequence[float], audio_s: Sequence[float], inputs_at_s: Sequence[float], epsilon: float = 1e-9
) -> Timeline:
    """``ready_s[i]``: when piece i was ready; ``inputs_at_s[i]``: when everything it needed had arrived."""
    timeline = Timeline()
    end = None
    for ready, duration, inputs_at in zip(ready_s, audio_s, inputs_at_s, strict=True):
        if end is None:
            start = ready
        else:
            timeline.time_balance.append(end - ready)
            start = max(ready, end)
            gap = start - end
            if gap > epsilon:
                if inputs_at <= end:  # the words were there before the gap began: compute was too slow
                    timeline.underruns += 1
                    timeline.gap_s += gap
                else:  # the gap began while waiting for words (the speaker's pace)
                    timeline.starved_s += gap
        end = start + duration
        timeline.start_s.append(start)
        timeline.end_s.append(end)
    return timeline
