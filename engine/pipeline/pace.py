"""How fast this machine is, measured while a session runs, and what the session sets from it.

The defaults were chosen on one machine; on a slower CPU the recognizer's steps and the voice's pieces take longer,
so words are committed later and each piece is ready later. ``MachinePace`` keeps the recent recognizer step costs
and the voice's compute per second of audio (both on the session's clock: a ``--cpu-slowdown`` run sees them
slowed) and derives:

- the hurry threshold: the voice must have in hand at least what it takes for the next words to come and be
  made: ``HURRY_STEPS`` × (recognizer step period + step cost + a hurried piece's compute), never below the
  configured ``hurry_below_s``;
- when steps cost more than ``STEP_COST_HIGH_S`` (a word is then committed well over a second after it was said; with
  a step period longer than shadowing's, ``HIGH_SHARE`` of the period if that is more) or the voice's compute exceeds
  ``VOICE_RATIO_HIGH`` of the audio it makes, it degrades, one level at a time (at most one change per ``DWELL_S``)
  and in this order (``DEGRADE_ORDER``), instead of falling behind:
  1. a recognizer that decodes a buffer's first seconds with several beams (``StreamConfig.start_beam_size``) decodes
     them with one (``start_beam``): cheaper steps, a few more of a sentence's first words misheard;
  2. the recognizer's buffer is cut sooner (``trim_s`` ``SHORT_TRIM_S``): shorter windows, cheaper steps;
  3. the voice reads less left context (``SHORT_LEFT_CONTEXT`` phonemes): cheaper pieces;
  4. if even then steps cost over ``STEP_COST_LIMIT_S`` or the voice over ``VOICE_RATIO_LIMIT``, nothing more can be
     given: the session says the machine cannot keep up (window, log and report).
  A voice about to run out still makes a piece shorter than a chunk at every level. A level that forbade those (a
  word or two costs nearly as much compute as a whole chunk) held a sentence's last committed word back while the
  voice ran dry: most underruns of a ten-minute session at ``--cpu-slowdown 2`` (docs/RESULTS.md).
  A level is left again when steps cost less than ``STEP_COST_LOW_S`` (or ``LOW_SHARE`` of a longer period; and the
  voice half its limit).

Interpreting steps every 0.75 s. At ``--cpu-slowdown 2`` its steps cost 0.45-0.65 s, inside their period, and the
shorter buffer of the first level cost its translation 2 BLEU and 2 chrF for no earlier commit, so its steps count as
slow only past ``HIGH_SHARE`` of the period.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

from engine.tts.frontend import ends_phrase, ends_sentence

log = logging.getLogger(__name__)

WINDOW = 12  # recent steps / pieces the figures are medians of
MIN_STEPS = 6  # before this many steps the configured values stand
HURRY_STEPS = 2.0
RESTART_PIECES = 2.0
STEP_COST_HIGH_S = 0.45
STEP_COST_LOW_S = 0.25
STEP_COST_LIMIT_S = 1.0  # even degraded: a word is then committed ~2.5 s after it was said, and the lag target is lost
# of a step period longer than shadowing's, the share its steps may cost before they count as slow (more and they
# would soon take the whole period: the recognizer falls behind) and the share below which they are fast again.
# Interpreting's 0.75 s steps cost 0.61-0.65 s at ``--cpu-slowdown 2`` on the AMD EPYC: 0.8 of the period would cut
# their buffer, which costs a translation 2 BLEU, for steps that fit
HIGH_SHARE = 0.9
LOW_SHARE = 0.5
VOICE_RATIO_HIGH = 0.6  # voice compute / audio: above this, cheaper pieces
VOICE_RATIO_LIMIT = 0.9  # even degraded, the voice barely makes its audio as fast as it plays
DWELL_S = 8.0  # at least this long at a level before the next change
SHORT_TRIM_S = 6.0
SHORT_LEFT_CONTEXT = 48
MIN_WORD_S = 0.02  # a word aligned to less time than this has no usable length


@dataclass(frozen=True)
class CatchUp:
    """When the voice speaks faster than its rate to catch up with a speaker faster than itself."""

    from_s: float  # ear-voice lag above which it speeds up
    per_s: float  # rate added per second of lag above that
    # ... only while more voice than this is queued: the lag is then the voice's queue, which a faster voice drains;
    # with less in hand it is the recognizer's commit latency, and speaking faster would only empty the queue sooner
    in_hand_s: float | None
    # under the same gate, at least as fast as the speaker (``SpeakerTempo``): the voice then keeps pace before a
    # queue builds up, instead of draining it once the lag is there. Not when interpreting: the source's word
    # times are those of another language's words
    match_tempo: bool = False


# Shadowing: from the median target, at the default 1.4 cap from about 3.8 s, gated by the queue. Interpreting keeps the
# gentler rule without the gate: there the lag is the
# translation's commit latency, and the queue in hand is what covers its late batches (the steeper rule, or the
# gate alone, gave more underruns in the replay of its recorded steps and no less lag).
SHADOW_CATCH_UP = CatchUp(from_s=2.5, per_s=0.3, in_hand_s=1.0, match_tempo=True)
INTERPRET_CATCH_UP = CatchUp(from_s=3.0, per_s=0.15, in_hand_s=None)

FULL_SETTINGS = "full settings"
ONE_BEAM = "the recognizer decodes a buffer's first seconds with one beam"
SHORT_TRIM = f"the recognizer's buffer is cut after {SHORT_TRIM_S:g} s"
SHORT_CONTEXT = f"the voice reads {SHORT_LEFT_CONTEXT} phonemes of left context"
CANNOT_KEEP_UP_NAME = "cannot keep up"
DEGRADE_ORDER = (FULL_SETTINGS, ONE_BEAM, SHORT_TRIM, SHORT_CONTEXT, CANNOT_KEEP_UP_NAME)


def catch_up_rate(
    lag_s: float | None,
    max_rate: float,
    in_hand_s: float,
    rule: CatchUp = SHADOW_CATCH_UP,
    tempo: float | None = None,
) -> float:
    """How much faster than its own rate the voice speaks when it is ``lag_s`` behind the speaker with ``in_hand_s``
    of voice queued: a speaker faster than the voice (fast conversational speech) would otherwise leave it further
    behind with every sentence. 1 up to ``rule.from_s`` (or with ``rule.in_hand_s`` or less in hand), then
    ``rule.per_s`` more per second of lag, at most ``max_rate``. With ``rule.match_tempo``, at least ``tempo``
    (``SpeakerTempo.ratio``: how much faster than the voice the speaker talks), under the same gate and cap."""
    if max_rate <= 1.0 or (rule.in_hand_s is not None and in_hand_s <= rule.in_hand_s):
        return 1.0
    rate = 1.0 if lag_s is None else 1.0 + rule.per_s * (lag_s - rule.from_s)
    if rule.match_tempo and tempo is not None:
        rate = max(rate, tempo)
    return min(max(rate, 1.0), max_rate)


class SpeakerTempo:
    """How much faster than the voice the speaker talks, over the last ``words`` words the voice spoke: the voice's
    time for them at its configured rate against the speaker's (the recognizer's word times). A shadower keeps the
    speaker's tempo; a voice that waits for the lag to show it is behind has by then a queue to drain (the fast
    conversational recording: two seconds of it).

    Words that end a phrase or a sentence are left out: the speaker's pause after them is often inside the word's
    aligned time, and the voice lengthens them. Fed where the session learns a piece was played (under its lock).
    """

    def __init__(self, words: int = WINDOW) -> None:
        self._words: deque[tuple[float, float]] = deque(maxlen=words)

    def add(self, text: str, speaker_s: float, voice_s: float) -> None:
        """One spoken word: its length in the source and in the voice at its configured rate."""
        if speaker_s > MIN_WORD_S and voice_s > 0 and not (ends_phrase(text) or ends_sentence(text)):
            self._words.append((speaker_s, voice_s))

    def ratio(self) -> float | None:
        """The voice's time over the speaker's for the same words (above 1: the speaker is faster); None until half
        the window has been heard."""
        if len(self._words) < max(self._words.maxlen or 0, 2) // 2:
            return None
        speaker = sum(w[0] for w in self._words)
        return sum(w[1] for w in self._words) / speaker


@dataclass(frozen=True)
class PaceStatus:
    """What the meters and the report show."""

    step_cost_s: float | None  # median of the recent recognizer steps
    voice_ratio: float | None  # compute / audio over the recent pieces
    hurry_below_s: float
    level: int
    level_name: str
    message: str | None  # for the window: set while the machine cannot keep up


class MachinePace:
    """Fed from the recognizer's thread (``step``) and the voice's (``piece``); read from any thread."""

    def __init__(self, min_step_s: float, hurry_below_s: float, adapt: bool = True, start_beam: bool = False) -> None:
        """``start_beam``: the recognizer decodes a buffer's first seconds with several beams, which a slow machine
        gives up first (without it, that level is not one of ``levels``)."""
        self.min_step_s = min_step_s
        self.levels = tuple(name for name in DEGRADE_ORDER if start_beam or name != ONE_BEAM)
        self.cannot_keep_up = len(self.levels) - 1
        self.base_hurry_s = hurry_below_s
        # when a step is slow, and fast again: shadowing's fixed costs, or shares of a longer period (interpreting)
        self.step_cost_high_s = max(STEP_COST_HIGH_S, HIGH_SHARE * min_step_s)
        self.step_cost_low_s = max(STEP_COST_LOW_S, LOW_SHARE * min_step_s)
        self.step_cost_limit_s = max(STEP_COST_LIMIT_S, min_step_s)
        self.adapt = adapt
        self._steps: deque[float] = deque(maxlen=WINDOW)
        self._pieces: deque[tuple[float, float]] = deque(maxlen=WINDOW)  # (compute, audio)
        self._lock = threading.Lock()
        self.level = 0
        self._level_since_s = 0.0
        self.changes: list[tuple[float, int]] = []  # (session time, new level); few: bounded by the dwell time
        self.cannot_keep_up_s = 0.0
        self._last_step_at: float | None = None

    def step(self, compute_s: float, at_s: float) -> None:
        """A recognizer step that recognized (``compute_s`` on the session clock) ended at ``at_s``."""
        with self._lock:
            self._steps.append(compute_s)
            if self.level == self.cannot_keep_up and self._last_step_at is not None:
                self.cannot_keep_up_s += at_s - self._last_step_at
            self._last_step_at = at_s
            if self.adapt and len(self._steps) >= MIN_STEPS and at_s - self._level_since_s >= DWELL_S:
                self._reconsider(at_s)

    def piece(self, compute_s: float, audio_s: float) -> None:
        with self._lock:
            if audio_s > 0:
                self._pieces.append((compute_s, audio_s))

    def _reconsider(self, at_s: float) -> None:
        cost = float(np.median(self._steps))
        measured = self._voice_ratio()  # None before the voice's first piece
        ratio = measured or 0.0
        over = cost > self.step_cost_high_s or ratio > VOICE_RATIO_HIGH
        beyond = cost > self.step_cost_limit_s or ratio > VOICE_RATIO_LIMIT
        level, last = self.level, self.cannot_keep_up
        if level < last - 1 and over or level == last - 1 and beyond:
            level += 1
        elif level == last and not beyond or cost < self.step_cost_low_s and ratio < VOICE_RATIO_HIGH / 2:
            level = max(level - 1, 0)
        if level != self.level:
            log.info(
                "machine pace: recognizer step %.2f s, voice compute/audio %s: %s",
                cost,
                "-" if measured is None else f"{measured:.2f}",
                self.levels[level],
            )
            self.level = level
            self._level_since_s = at_s
            if len(self.changes) < 1000:
                self.changes.append((at_s, level))

    def _piece_compute_s(self) -> float:
        """A recent piece's compute, median (0 before any piece); call with the lock held."""
        return float(np.median([c for c, _ in self._pieces])) if self._pieces else 0.0

    def _voice_ratio(self) -> float | None:
        if not self._pieces:
            return None
        return sum(c for c, _ in self._pieces) / sum(a for _, a in self._pieces)

    def _given_up(self, name: str) -> bool:
        """Whether the level named ``name`` has been reached."""
        return name in self.levels[1 : self.level + 1]

    @property
    def start_beam(self) -> bool:
        """The recognizer keeps decoding a buffer's first seconds with several beams at this level."""
        return not self._given_up(ONE_BEAM)

    @property
    def trim_s(self) -> float | None:
        """The recognizer's trim length at this level (None: its own)."""
        return SHORT_TRIM_S if self._given_up(SHORT_TRIM) else None

    @property
    def left_context(self) -> int | None:
        """The voice's left context at this level (None: the policy's own)."""
        return SHORT_LEFT_CONTEXT if self._given_up(SHORT_CONTEXT) else None

    def restart_min_s(self) -> float:
        """The least audio a piece that starts the voice from silence should bring: ``RESTART_PIECES`` × a recent
        piece's compute (median), so that the next piece is ready before it ends (0 before any piece, or without
        ``adapt``)."""
        with self._lock:
            return RESTART_PIECES * self._piece_compute_s() if self.adapt else 0.0

    def hurry_below_s(self) -> float:
        """The voice must hold what it takes for the next words to be committed and made: ``HURRY_STEPS`` ×
        (step period + step cost + a piece's compute). Before ``MIN_STEPS`` steps only the period is known, and it
        counts already: interpreting steps every 0.75 s (once a second when this was written), and with the
        configured 1 s alone the voice's first piece of a recording (about a second) never hurried, nothing was made
        ahead, and the next batch of words came just as it ran out (every underrun of four traced interpreting
        runs)."""
        if not self.adapt:
            return self.base_hurry_s
        with self._lock:
            measured = len(self._steps) >= MIN_STEPS
            cost = float(np.median(self._steps)) if measured else 0.0
            piece = self._piece_compute_s() if measured else 0.0
        period = max(self.min_step_s, cost)
        return max(self.base_hurry_s, HURRY_STEPS * (period + cost + piece))

    def status(self) -> PaceStatus:
        hurry = self.hurry_below_s()
        with self._lock:
            cost = float(np.median(self._steps)) if self._steps else None
            ratio = self._voice_ratio()
            level = self.level
        message = None
        if level == self.cannot_keep_up:
            message = (
                f"This computer is too slow to keep up: each recognizer step takes {cost or 0:.2f} s and the "
                f"voice needs {ratio or 0:.1f} s of compute per second of speech. The voice will fall behind; "
                "close other programs."
            )
        return PaceStatus(cost, ratio, hurry, level, self.levels[level], message)

    def report(self) -> dict:
        status = self.status()
        return {
            "step_cost_s": status.step_cost_s,
            "slow_step_s": self.step_cost_high_s,  # steps costing more (median) degrade the session
            "voice_compute_ratio": status.voice_ratio,
            "hurry_below_s": status.hurry_below_s,
            "level": status.level,
            "level_name": status.level_name,
            "highest_level": max((lvl for _, lvl in self.changes), default=0),
            "changes": [{"at_s": at, "level": lvl, "name": self.levels[lvl]} for at, lvl in self.changes],
            "cannot_keep_up_s": self.cannot_keep_up_s,
            "degrade_order": list(self.levels),
        }
