"""The learned policy's environment: a recorded episode replayed through the session's own code.

``ShadowSession.run_steps`` feeds the episode's recognizer steps to the voice as ``run_file`` would, so the rule the
policy starts from is lookahead-1 exactly as a session runs it (its hurry, speculation, pause at commas, restart
hold, the machine's pace, the catch-up rate). The voice is a ``CachedVoice``: its calls are remembered and charged
their modelled compute, so a replay costs little after the first and gives the same outcome every time for the same
moves. Each decision is charged what follows from it (``Outcome.costs``): the lag and distance of the words spoken
by the pieces made from it until the next decision, and the underruns before them.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np

from engine.learned.episodes import Episode
from engine.metrics.shadowing import ear_voice_lag_s
from engine.pipeline.config import ShadowConfig
from engine.pipeline.records import SessionListener, WordRecord
from engine.pipeline.session import ShadowSession
from engine.tts.chunker import ChunkSizes
from engine.tts.learned.moves import NOW, WAIT, MoveAgent
from engine.tts.quality import session_word_distances_by_key


@dataclass(frozen=True)
class RewardWeights:
    """What an episode's return charges (all costs, so the return is at most 0)."""

    lag: float = 1.0  # per second of mean ear-voice lag
    underrun: float = 1.0  # per underrun (one costs as much as a second of mean lag)
    # per dB of mean word distance from the whole-sentence voice. Between what NOW trades (0.23 s of mean lag per dB,
    # every move NOW) and what WAIT trades (0.34 s per dB): neither pays everywhere, each may where it trades better.
    # The targets' own rate (0.2 s for 0.3 dB, 0.67) made WAIT pay everywhere (docs/learned_policy.md)
    quality: float = 0.3


@dataclass
class Outcome:
    episode_id: str
    observations: list[np.ndarray] = field(default_factory=list)  # per decision
    moves: list[int] = field(default_factory=list)
    lags_s: list[float] = field(default_factory=list)  # per spoken word
    word_decisions: list[int] = field(default_factory=list)  # the decision each spoken word's piece came from
    underrun_decisions: list[int] = field(default_factory=list)  # one entry per underrun
    distances_db: list[float] = field(default_factory=list)
    distance_decisions: list[int] = field(default_factory=list)
    underruns: int = 0

    @property
    def lag_mean_s(self) -> float:
        return statistics.fmean(self.lags_s) if self.lags_s else 0.0

    @property
    def distance_db(self) -> float:
        return statistics.fmean(self.distances_db) if self.distances_db else 0.0

    def episode_return(self, weights: RewardWeights | None = None) -> float:
        w = weights or RewardWeights()
        return -(w.lag * self.lag_mean_s + w.underrun * self.underruns + w.quality * self.distance_db)

    def costs(self, weights: RewardWeights | None = None) -> np.ndarray:
        """What each decision is charged; they add up to minus ``episode_return`` (what comes before the first
        decision is charged to it)."""
        w = weights or RewardWeights()
        costs = np.zeros(max(len(self.moves), 1), np.float64)
        last = len(costs) - 1
        for lag, d in zip(self.lags_s, self.word_decisions, strict=True):
            costs[min(max(d, 0), last)] += w.lag * lag / len(self.lags_s)
        for d in self.underrun_decisions:
            costs[min(max(d, 0), last)] += w.underrun
        for distance, d in zip(self.distances_db, self.distance_decisions, strict=True):
            costs[min(max(d, 0), last)] += w.quality * distance / len(self.distances_db)
        return costs[: len(self.moves)] if self.moves else np.zeros(0)

    def summary(self, weights: RewardWeights | None = None) -> dict:
        median = statistics.median(self.lags_s) if self.lags_s else 0.0
        return {
            "return": self.episode_return(weights),
            "lag_mean_s": self.lag_mean_s,
            "lag_median_s": median,
            "underruns": self.underruns,
            "distance_db": self.distance_db,
            "now_share": float(np.mean(np.asarray(self.moves) == NOW)) if self.moves else 0.0,
            "wait_share": float(np.mean(np.asarray(self.moves) == WAIT)) if self.moves else 0.0,
            "decisions": len(self.moves),
        }


class _Attribution(SessionListener):
    """Notes, as the words are spoken, which decision made their piece and the underruns before it."""

    def __init__(self, session: ShadowSession, outcome: Outcome) -> None:
        self.session, self.outcome = session, outcome
        self.underruns = 0
        self.keys: dict[tuple[int, int], int] = {}

    def on_spoken(self, records: list[WordRecord]) -> None:
        advisor = self.session.advisor
        decision = advisor.count - 1 if advisor is not None else 0
        for record in records:
            if record.speak_end_s is not None:
                self.outcome.lags_s.append(ear_voice_lag_s(record.speak_end_s, record.source_end_s))
                self.outcome.word_decisions.append(decision)
                self.keys[record.key] = decision
        underruns = self.session.figures.underruns()
        self.outcome.underrun_decisions.extend([decision] * (underruns - self.underruns))
        self.underruns = underruns


def replay_config(episode: Episode) -> ShadowConfig:
    """The session settings an episode is replayed with: the defaults, at the CPU slowdown it was recorded at (its
    voice is charged the same)."""
    return replace(ShadowConfig(), cpu_slowdown=float(episode.config.get("cpu_slowdown") or 1.0))


def replay(episode: Episode, agent: MoveAgent | None, voice, quality: bool = True) -> Outcome:
    """One episode spoken by a session whose learned moves ``agent`` chooses (None: the plain lookahead rule, no
    decisions asked). ``voice`` is a ``CachedVoice`` (its ``timer`` charges the compute)."""
    config = replay_config(episode)
    session = ShadowSession(config, SimpleNamespace(voice=voice, backend=None))  # type: ignore[arg-type]
    session.move_agent = agent
    outcome = Outcome(episode.id)
    attribution = _Attribution(session, outcome)
    session.listener = attribution
    if quality:
        session.flow.pieces = []
    session.run_steps([step.result() for step in episode.steps], episode.audio_s, tts_timer=voice.timer)
    if session.error:
        raise RuntimeError(f"replaying {episode.id} failed: {session.error}")
    decisions = session.advisor.decisions if session.advisor is not None else []
    outcome.observations = [d.observation.vector() for d in decisions]
    outcome.moves = [d.move for d in decisions]
    outcome.underruns = session.figures.underruns()
    if quality and session.flow.pieces:
        sizes = ChunkSizes(config.first_chunk, config.chunk, config.phrase_chunk)
        distances = session_word_distances_by_key(voice, session.flow.pieces, sizes, config.voice_rate)
        for key, distance in distances.items():
            outcome.distances_db.append(distance)
            outcome.distance_decisions.append(attribution.keys.get(key, 0))
    return outcome
