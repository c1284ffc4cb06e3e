"""The learned policy's moves: at each recognizer step, lookahead-1's own move, or speaking sooner, or waiting longer.

The lookahead-1 rule (``SynthesisWorker``: lookahead-1 windows, the hurry when the voice runs low, speculation, the
pause at commas, a short restart held back) stays in charge. Before it handles a recognizer step that brings words
(or while fed words wait), the policy chooses one of three moves, each one the rule makes in some situation:

- ``RULE``: the step is handled as lookahead-1 handles it;
- ``NOW``: and then every fed word still waiting is spoken at once with the lookahead there is (lookahead 0, the
  tentative words as context), as the rule does when the voice is about to run out (``IncrementalSynthesizer.hurry``,
  urgent), here with the whole left context;
- ``WAIT``: the step's chunks wait for one more chunk of lookahead (lookahead-2) unless the voice runs low (the
  rule's hurry still applies): with voice in hand to play, waiting can cost no lag and brings a closer voice.

A policy that always answers ``RULE`` is lookahead-1 exactly, so training starts there and can only move away
where that pays. ``MoveAdvisor`` keeps what the features need between steps (recent commits, the last word fed,
whether a tentative word ends a phrase) and builds a ``MoveObservation`` for each decision. How long the tentative
words had been stable was a feature too, and changed nothing in the ablations (docs/learned_policy.md).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from engine.tts.frontend import ends_phrase, ends_sentence

RULE, NOW, WAIT = 0, 1, 2
MOVES = ("rule", "now", "wait")
RATE_WINDOW_S = 3.0  # the speaker's recent rate is over this long
MOVE_FEATURES = (
    "pending_phonemes",
    "new_words",
    "new_letters",
    "hint_words",
    "in_hand_s",
    "in_hand_over_hurry",
    "input_rate_wps",
    "ends_clause",
    "hint_ends_clause",
    "sentence_started",
    "since_commit_s",
    "waiting_s",
    "next_step_s",
)
N_MOVE_FEATURES = len(MOVE_FEATURES)
# the ablations of docs/learned_policy.md: each group replaced by its training mean in the trained policy's input
FEATURE_GROUPS = {
    "recognizer's next step": ("next_step_s",),
    "speaker's rate": ("input_rate_wps",),
    "voice in hand": ("in_hand_s", "in_hand_over_hurry"),
    "phrase or sentence end near": ("ends_clause", "hint_ends_clause"),
    "words waiting": (
        "pending_phonemes",
        "new_words",
        "new_letters",
        "hint_words",
        "since_commit_s",
        "waiting_s",
        "sentence_started",
    ),
}


@dataclass(frozen=True)
class MoveObservation:
    pending_phonemes: int  # words fed before this step that no piece holds yet
    new_words: int  # words this step brings
    new_letters: int  # their letters (a cheap measure of their length before they are phonemized)
    hint_words: int  # the recognizer's tentative words after them
    in_hand_s: float  # voice made and not yet played
    hurry_below_s: float  # the rule hurries with less than this in hand (``MachinePace.hurry_below_s``)
    input_rate_wps: float  # words committed per second over the last ``RATE_WINDOW_S``
    ends_clause: bool  # the last word fed (with this step's) ends a phrase or sentence (a pause counts as a comma)
    hint_ends_clause: bool  # a tentative word ends a phrase or sentence (an end is near)
    sentence_started: bool  # the current sentence already has a piece
    since_commit_s: float  # since the last word was committed
    waiting_s: float  # since the oldest waiting word was committed
    next_step_s: float  # when the recognizer's next step can commit words: its period plus its cost

    def vector(self) -> np.ndarray:
        """The features as the policy network reads them (roughly unit scale), in ``MOVE_FEATURES`` order."""
        ratio = self.in_hand_s / self.hurry_below_s if self.hurry_below_s > 0 else 4.0
        return np.array(
            [
                min(self.pending_phonemes, 90) / 30.0,
                min(self.new_words, 10) / 5.0,
                min(self.new_letters, 60) / 20.0,
                min(self.hint_words, 10) / 5.0,
                min(self.in_hand_s, 6.0),
                min(ratio, 4.0),
                min(self.input_rate_wps, 9.0) / 3.0,
                float(self.ends_clause),
                float(self.hint_ends_clause),
                float(self.sentence_started),
                min(self.since_commit_s, 5.0),
                min(self.waiting_s, 5.0),
                min(self.next_step_s, 3.0),
            ],
            dtype=np.float32,
        )


class MoveAgent(Protocol):
    """Chooses ``RULE``, ``NOW`` or ``WAIT``; ``decide`` is called once per decision, in order."""

    name: str
    moves: bool  # marks a move agent (a READ/SPEAK agent runs the older driver)

    def decide(self, observation: MoveObservation) -> int: ...

    def reset(self) -> None: ...


class RuleMoves:
    """Always the rule: lookahead-1 itself, through the same decisions (the imitation start, and its test)."""

    name = "lookahead-1"
    moves = True

    def decide(self, observation: MoveObservation) -> int:
        return RULE

    def reset(self) -> None:
        pass


@dataclass
class Decision:
    at_s: float
    observation: MoveObservation
    move: int


@dataclass
class MoveAdvisor:
    """Asks ``agent`` for a move at each decision and keeps the features' history; the worker calls it."""

    agent: MoveAgent
    keep: bool = False  # keep every decision (training reads them; a session keeps none)
    decisions: list[Decision] = field(default_factory=list)
    count: int = 0  # decisions so far
    _commits: deque[float] = field(default_factory=lambda: deque(maxlen=256))
    _last_commit_s: float | None = None
    _ends_clause: bool = False
    _hint_ends: bool = False

    def heard(self, words: Sequence[str], hint: Sequence[str] | None, at_s: float) -> None:
        """A recognizer step's committed words and tentative words (``hint`` None: unchanged), at ``at_s``; call it
        before ``decide`` on that step."""
        if words:
            self._commits.extend([at_s] * len(words))
            self._last_commit_s = at_s
            self._ends_clause = ends_phrase(words[-1]) or ends_sentence(words[-1])
        if hint is not None:
            self._hint_ends = any(ends_phrase(w) or ends_sentence(w) for w in hint)

    def decide(
        self,
        at_s: float,
        pending: tuple[int, int, bool],
        words: Sequence[str],
        hint: Sequence[str],
        in_hand_s: float,
        hurry_below_s: float,
        waiting_s: float,
        next_step_s: float,
    ) -> int:
        """The agent's move for a step bringing ``words`` (and ``hint``) before they are fed; ``pending`` is
        ``IncrementalSynthesizer.pending_phonemes()`` then."""
        while self._commits and self._commits[0] <= at_s - RATE_WINDOW_S:
            self._commits.popleft()
        since = at_s - self._last_commit_s if self._last_commit_s is not None else at_s
        observation = MoveObservation(
            pending_phonemes=pending[0],
            new_words=len(words),
            new_letters=sum(len(w) for w in words),
            hint_words=len(hint),
            in_hand_s=max(in_hand_s, 0.0),
            hurry_below_s=hurry_below_s,
            input_rate_wps=len(self._commits) / RATE_WINDOW_S,
            ends_clause=self._ends_clause,
            hint_ends_clause=self._hint_ends,
            sentence_started=pending[2],
            since_commit_s=max(since, 0.0),
            waiting_s=max(waiting_s, 0.0),
            next_step_s=max(next_step_s, 0.0),
        )
        move = self.agent.decide(observation)
        move = move if move in (NOW, WAIT) else RULE
        self.count += 1
        if self.keep:
            self.decisions.append(Decision(at_s, observation, move))
        return move

    def reset(self) -> None:
        self.agent.reset()
        self._commits.clear()
        self._last_commit_s, self._ends_clause, self._hint_ends = None, False, False
        self.decisions.clear()
        self.count = 0
