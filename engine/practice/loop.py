"""An A-B loop: a stretch of the source (the words from A to B) played again and again, a short gap between passes,
shadowed each time; every pass is scored on its own, and the best and the last are the summary.

The stretch is cut between words (halfway through the pauses around it, as ``sentences`` cuts), so no word is cut
in two. "Until Stop" is ``UNTIL_STOP`` passes queued: Stop ends it, and the passes begun are scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.asr.words import Word
from engine.practice.score import ACCURACY, EVS_S, MISSED_WORDS, score
from engine.practice.sentences import PlayedSentence, Sentence

GAP_S = 1.5  # between two passes: the person finishes the stretch's last words and breathes
UNTIL_STOP = 20  # the passes queued for "until Stop" (20 passes of a 10 s stretch: 4 minutes)
MAX_PASSES = UNTIL_STOP
LOOP_MODE = "loop"  # a report's "mode"


class LoopError(ValueError):
    """A loop that holds no word, or runs backwards."""


@dataclass(frozen=True)
class Loop:
    start_s: float  # A, on the source's own clock
    end_s: float  # B
    passes: int  # how many times it plays (``UNTIL_STOP``: until Stop)


def loop_stretch(words: Sequence[Word], duration_s: float, loop: Loop) -> Sentence:
    """The stretch of the source from A to B: the words that lie mostly within it, cut between words."""
    if loop.end_s <= loop.start_s:
        raise LoopError(f"the loop must end after it starts (A {loop.start_s:.2f} s, B {loop.end_s:.2f} s)")
    if not 1 <= loop.passes <= MAX_PASSES:
        raise LoopError(f"a loop plays 1 to {MAX_PASSES} times, not {loop.passes}")
    inside = [i for i, w in enumerate(words) if loop.start_s <= (w.start_s + w.end_s) / 2 <= loop.end_s]
    if not inside:
        raise LoopError(f"no word of the source lies between {loop.start_s:.2f} s and {loop.end_s:.2f} s")
    first, last = inside[0], inside[-1]
    start = 0.0 if first == 0 else (words[first - 1].end_s + words[first].start_s) / 2
    end = duration_s if last == len(words) - 1 else (words[last].end_s + words[last + 1].start_s) / 2
    return Sentence(tuple(words[first : last + 1]), start, end)


def gap_s(_: Sentence) -> float:
    return GAP_S


def score_passes(
    played: Sequence[PlayedSentence], said: Sequence[Word], heard_s: float, language: str | None = "en"
) -> dict:
    """Each pass begun within the ``heard_s`` recorded scored against what was said from its start to the next
    one's: ``passes`` (one dict each), ``best_pass`` and ``last_pass`` (their numbers; the best: the highest accuracy,
    then the shortest EVS)."""
    rows = []
    for number, one in enumerate(played, 1):
        if one.start_s >= heard_s:
            break  # not played before Stop
        mine = [w for w in said if one.start_s <= w.start_s < one.end_s]
        result = score(list(one.words), mine, 0.0, language).report()
        rows.append(
            {
                "pass": number,
                "start_s": one.start_s,
                "end_s": one.end_s,
                "attempt_text": " ".join(w.text for w in mine),
                ACCURACY: result[ACCURACY],
                MISSED_WORDS: result[MISSED_WORDS],
                EVS_S: result[EVS_S]["median"],
                "missed": [w["source"] for w in result["words"] if w["mark"] == "missed"],
            }
        )
    ranked = [r for r in rows if r[ACCURACY] is not None]
    best = max(ranked, key=lambda r: (r[ACCURACY], -(r[EVS_S] if r[EVS_S] is not None else 1e9)), default=None)
    last = rows[-1]["pass"] if rows else None
    return {"passes": rows, "best_pass": best["pass"] if best else None, "last_pass": last}
