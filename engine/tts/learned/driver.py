"""One READ/SPEAK decision per recognizer step, over the real incremental synthesizer.

The training environment and the session's synthesis worker both run this loop, so the policy sees the same
observation in training and in use: at each step the step's committed words are fed (a READ makes nothing of them,
except a sentence they complete: the end of a sentence is always spoken), the agent sees an ``Observation`` and
answers READ or SPEAK. SPEAK makes every fed word's pieces now, with the lookahead there is (lookahead-k's Stage I
windows, the tentative words as context; the last chunk may be short). The hook is ``AgentPolicy.ready``, which
``IncrementalSynthesizer._advance`` asks before every chunk, so none of the fixed rules (lookahead waits, hurry, the
pause at commas, speculation) take part.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from engine.tts.chunk_plan import URGENT
from engine.tts.frontend import Unit, ends_phrase, ends_sentence
from engine.tts.pieces import AudioPiece
from engine.tts.policies import LookaheadPolicy, Window
from engine.tts.synthesizer import IncrementalSynthesizer

READ, SPEAK = 0, 1
RATE_WINDOW_S = 3.0  # the recent input rate is over this long
FEATURE_NAMES = (
    "pending_phonemes",
    "hint_phonemes",
    "in_hand_s",
    "input_rate_wps",
    "ends_clause",
    "sentence_started",
    "since_commit_s",
    "consecutive_reads",
    "last_action",
)
N_FEATURES = len(FEATURE_NAMES)


@dataclass(frozen=True)
class Observation:
    pending_phonemes: int  # committed words no piece holds yet
    hint_phonemes: int  # the recognizer's tentative words after them (lookahead that may change)
    in_hand_s: float  # voice made and not yet played
    input_rate_wps: float  # words committed per second over the last ``RATE_WINDOW_S``
    ends_clause: bool  # the last committed word ends a phrase or a sentence (or the speaker paused after it)
    sentence_started: bool  # the current sentence already has a piece
    since_commit_s: float  # since the last word was committed
    consecutive_reads: int
    last_action: int  # READ or SPEAK (READ before the first decision)

    def vector(self) -> np.ndarray:
        """The features as the policy network reads them (roughly unit scale)."""
        return np.array(
            [
                min(self.pending_phonemes, 90) / 30.0,
                min(self.hint_phonemes, 90) / 30.0,
                min(self.in_hand_s, 6.0),
                min(self.input_rate_wps, 9.0) / 3.0,
                float(self.ends_clause),
                float(self.sentence_started),
                min(self.since_commit_s, 5.0),
                min(self.consecutive_reads, 10) / 10.0,
                float(self.last_action),
            ],
            dtype=np.float32,
        )


class Agent(Protocol):
    """What decides: ``decide`` is called once per recognizer step, in order; ``reset`` starts a new session."""

    name: str

    def decide(self, observation: Observation) -> int: ...

    def reset(self) -> None: ...


class AgentPolicy:
    """Lookahead-k's Stage I windows, with the agent deciding when a chunk is made; a complete sentence is spoken."""

    overlap_decode = True
    one_piece_per_sentence = False

    def __init__(self, k: int = 1, name: str = "learned") -> None:
        self.windows = LookaheadPolicy(k=k)
        self.speak = False
        self.name = name  # the agent's (reports name the policy by it)

    def ready(self, index: int, available: int, complete: bool) -> bool:
        return index < available and (self.speak or complete)

    def window(self, chunks: Sequence[Sequence[Unit]], index: int, complete: bool) -> Window:
        return self.windows.window(chunks, index, complete)

    def hurried(self) -> AgentPolicy:
        """A piece made in a hurry reads the shorter left context, as the session's do."""
        policy = AgentPolicy.__new__(AgentPolicy)
        policy.windows, policy.speak, policy.name = self.windows.hurried(), self.speak, self.name
        return policy


@dataclass
class Decision:
    observation: Observation
    action: int
    pieces: list[AudioPiece] = field(default_factory=list)  # made at this step, in order


class ReadSpeakDriver:
    """Feeds a step's words to ``synthesizer`` (whose policy must be an ``AgentPolicy``) and carries out the agent's
    answer. The caller says how much voice is in hand, on its own clock."""

    def __init__(self, synthesizer: IncrementalSynthesizer, agent: Agent) -> None:
        if not isinstance(synthesizer.policy, AgentPolicy):
            raise TypeError("the READ/SPEAK driver needs a synthesizer with an AgentPolicy")
        self.synthesizer = synthesizer
        self.policy: AgentPolicy = synthesizer.policy
        self.agent = agent
        self._commits: deque[float] = deque(maxlen=256)  # commit times within ``RATE_WINDOW_S`` (bounded)
        self._last_commit_s: float | None = None
        self._ends_clause = False
        self._reads = 0
        self._last_action = READ
        self.decisions = 0
        self.speaks = 0

    def observe(self, at_s: float, in_hand_s: float) -> Observation:
        while self._commits and self._commits[0] <= at_s - RATE_WINDOW_S:
            self._commits.popleft()
        pending, hint, started = self.synthesizer.pending_phonemes()
        since = at_s - self._last_commit_s if self._last_commit_s is not None else at_s
        return Observation(
            pending_phonemes=pending,
            hint_phonemes=hint,
            in_hand_s=max(in_hand_s, 0.0),
            input_rate_wps=len(self._commits) / RATE_WINDOW_S,
            ends_clause=self._ends_clause,
            sentence_started=started,
            since_commit_s=max(since, 0.0),
            consecutive_reads=self._reads,
            last_action=self._last_action,
        )

    def step(self, tokens: Sequence[str], at_s: float, in_hand_s: float, hint: Sequence[str] | None = None) -> Decision:
        """One recognizer step: ``tokens`` committed at ``at_s`` (a word the speaker paused after carries a comma,
        ``frontend.with_pause``), ``hint`` the tentative words after them; ``in_hand_s`` voice left to play then."""
        synthesizer = self.synthesizer
        self.policy.speak = False
        if tokens:
            self._commits.extend([at_s] * len(tokens))
            self._last_commit_s = at_s
            self._ends_clause = ends_phrase(tokens[-1]) or ends_sentence(tokens[-1])
        pieces = synthesizer.feed(list(tokens), hint=list(hint) if hint is not None else None)
        observation = self.observe(at_s, in_hand_s)
        action = SPEAK if self.agent.decide(observation) == SPEAK else READ
        self.decisions += 1
        self._reads = self._reads + 1 if action == READ else 0
        self._last_action = action
        if action == SPEAK:
            self.speaks += 1
            self.policy.speak = True  # every fed word, the last chunk short if need be
            try:
                pieces += synthesizer.hurry(sentence_start=True, urgency=URGENT)
            finally:
                self.policy.speak = False
        return Decision(observation, action, pieces)

    def reset(self) -> None:
        self.agent.reset()
        self._commits.clear()
        self._last_commit_s = None
        self._ends_clause = False
        self._reads, self._last_action = 0, READ


class WaitStepsAgent:
    """Wait-k in recognizer steps: SPEAK after ``k`` READs in a row (a fixed schedule, the RL paper's baseline)."""

    def __init__(self, k: int) -> None:
        if k < 0:
            raise ValueError(f"wait-k-steps needs k >= 0, not {k}")
        self.k = k
        self.name = f"wait-{k}-steps"

    def decide(self, observation: Observation) -> int:
        return SPEAK if observation.consecutive_reads >= self.k else READ

    def reset(self) -> None:
        pass


def wait_steps_k(name: str) -> int | None:
    """K of a policy named ``wait-K-steps``, else None."""
    parts = name.split("-")
    if len(parts) == 3 and parts[0] == "wait" and parts[2] == "steps" and parts[1].isdigit():
        return int(parts[1])
    return None
