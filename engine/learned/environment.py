"""The READ/SPEAK environment: an episode's word arrivals replayed into the real incremental synthesizer.

At every recognizer step of the episode the driver (``driver.ReadSpeakDriver``, the loop the session's worker runs
too) feeds the step's words and asks the agent READ or SPEAK. Pieces are made on a simulated clock charged with their
real compute (remembered by ``cache.CachedVoice`` when the same window comes again) and played back to back through
``PlaybackTimeline``, so gaps are classified by METRICS.md's rule as in a session. Each step is charged what follows
from it (``StepCosts``): the lag of the words its pieces speak, the underruns before them, a READ too many in a row,
and how far its words sound from the same words spoken a whole sentence at a time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.learned.episodes import ArrivedWord, Episode
from engine.metrics.shadowing import ear_voice_lag_s
from engine.tts.chunker import ChunkSizes
from engine.tts.keys import SentenceKeys, fed_tokens
from engine.tts.learned.driver import (
    ACTIONS,
    N_FEATURES,
    READ,
    SPEAK,
    Agent,
    AgentPolicy,
    FixedAgent,
    Observation,
    ReadSpeakDriver,
)
from engine.tts.pieces import AudioPiece
from engine.tts.quality import whole_sentence_voice, word_distances_by_key
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.timeline import PlaybackTimeline
from engine.tts.voice import TwoStageVoice

__all__ = ["ACTIONS", "N_FEATURES", "READ", "SPEAK", "Observation", "ReadSpeakEnvironment", "always"]


@dataclass
class SpokenWord:
    text: str
    source_end_s: float
    commit_s: float
    play_end_s: float
    step: int  # the decision whose pieces spoke it
    key: tuple[int, int] = (0, 0)  # (sentence, index) in the synthesizer

    @property
    def lag_s(self) -> float:
        return ear_voice_lag_s(self.play_end_s, self.source_end_s)


@dataclass
class EpisodeOutcome:
    episode_id: str
    words: list[SpokenWord] = field(default_factory=list)  # in the order they were spoken
    actions: list[int] = field(default_factory=list)
    observations: list[np.ndarray] = field(default_factory=list)  # the feature vector of each decision
    step_underruns: list[int] = field(default_factory=list)  # underruns before the pieces each decision made
    underruns: int = 0
    gap_s: float = 0.0
    starved_s: float = 0.0
    compute_s: float = 0.0
    word_distances_db: list[float] = field(default_factory=list)  # against the whole-sentence voice, per word
    distance_steps: list[int] = field(default_factory=list)  # the decision each distance belongs to

    @property
    def lag_median_s(self) -> float | None:
        return statistics.median(w.lag_s for w in self.words) if self.words else None

    @property
    def lag_mean_s(self) -> float:
        return statistics.fmean(w.lag_s for w in self.words) if self.words else 0.0

    @property
    def distance_db(self) -> float:
        return statistics.fmean(self.word_distances_db) if self.word_distances_db else 0.0

    def excess_reads(self, target: int) -> int:
        """READs beyond ``target`` in a row, summed over the episode (the paper's penalty on reading too long)."""
        return int(sum(self._excess(target)))

    def _excess(self, target: int) -> list[bool]:
        flags, run = [], 0
        for action in self.actions:
            run = run + 1 if action == READ else 0
            flags.append(run > target)
        return flags

    def step_costs(self, weights: RewardWeights | None = None) -> np.ndarray:
        """What each decision is charged; their sum is minus ``episode_return``. A word's lag and distance go to the
        decision that spoke it, an underrun to the one whose piece came after the gap (the reward-to-go of every
        earlier decision carries it)."""
        w = weights or RewardWeights()
        costs = np.zeros(len(self.actions), np.float64)
        if not len(costs):
            return costs
        if self.words:
            for word in self.words:
                costs[word.step] += w.lag * word.lag_s / len(self.words)
        costs += w.underrun * np.asarray(self.step_underruns, np.float64)
        costs += w.excess_read * np.asarray(self._excess(w.reads_target), np.float64)
        if self.word_distances_db:
            for step, distance in zip(self.distance_steps, self.word_distances_db, strict=True):
                costs[step] += w.quality * distance / len(self.word_distances_db)
        return costs


@dataclass(frozen=True)
class RewardWeights:
    """What an episode's return charges (all costs, so the return is at most 0)."""

    lag: float = 1.0  # per second of mean ear-voice lag
    underrun: float = 1.0  # per underrun (the target is none: one costs as much as a second of mean lag)
    reads_target: int = 6  # READs in a row allowed without cost (about 2 s of 0.3 s steps)
    excess_read: float = 0.05  # per READ beyond that
    quality: float = 0.3  # per dB of mean word distance from the whole-sentence voice


def episode_return(outcome: EpisodeOutcome, weights: RewardWeights | None = None) -> float:
    w = weights or RewardWeights()
    return -(w.lag * outcome.lag_mean_s + w.underrun * outcome.underruns
             + w.excess_read * outcome.excess_reads(w.reads_target) + w.quality * outcome.distance_db)  # fmt: skip


def keyed_tokens(words: Sequence[ArrivedWord], keys: SentenceKeys) -> list[tuple[str, tuple[int, int], ArrivedWord]]:
    """The tokens the voice is fed for committed words, as the session feeds them (``SentenceKeys`` gives their
    (sentence, index); a speaker's pause is a comma, ``fed_tokens``), each with its key and its word."""
    tokens = []
    for word in words:
        if word.text.strip():
            keyed = keys.tokens(word.text)
            fed = fed_tokens(keyed, word.pause_after)
            tokens.extend((token, key, word) for token, (_, key) in zip(fed, keyed, strict=True))
    return tokens


class _Decider:
    """A plain function as an ``Agent``."""

    name = "function"

    def __init__(self, decide: Callable[[Observation], int]) -> None:
        self.decide = decide

    def reset(self) -> None:
        pass


class ReadSpeakEnvironment:
    """Runs episodes with an agent; one synthesizer voice for all of them.

    ``voice_slowdown`` charges the voice's compute that many times (a slower CPU: ``--cpu-slowdown``). With a
    ``CachedVoice`` replays cost little; pass its ``timer`` as ``timer`` so pieces are charged what they cost.
    """

    def __init__(
        self, voice: TwoStageVoice, k: int = 1, sizes: ChunkSizes | None = None, quality: bool = True,
        voice_slowdown: float = 1.0, timer: Callable[[], float] | None = None,
    ) -> None:  # fmt: skip
        self.voice = voice
        self.k = k
        self.sizes = sizes or ChunkSizes(first=12, later=12)
        self.quality = quality  # score each word against the whole-sentence voice (``word_distance_db``)
        self.voice_slowdown = voice_slowdown
        self.timer = timer or time.perf_counter
        self._references: dict[str, tuple[np.ndarray, list[AudioPiece]]] = {}
        self.max_references = 64  # episodes whose whole-sentence voice is kept (bounded)

    def reference(self, episode: Episode) -> tuple[np.ndarray, list[AudioPiece]]:
        """The episode's words spoken a whole sentence at a time, with the same noise (made once per episode)."""
        if episode.id not in self._references:
            tokens = [token for token, _, _ in keyed_tokens(episode.words, SentenceKeys())]
            if len(self._references) >= self.max_references:
                self._references.pop(next(iter(self._references)))
            self._references[episode.id] = whole_sentence_voice(self.voice, tokens, self.sizes, self.timer)
        return self._references[episode.id]

    def run(self, episode: Episode, agent: Agent | Callable[[Observation], int]) -> EpisodeOutcome:
        if not hasattr(agent, "decide"):
            agent = _Decider(agent)  # type: ignore[arg-type]
        synthesizer = IncrementalSynthesizer(self.voice, AgentPolicy(k=self.k), self.sizes, timer=self.timer)
        driver = ReadSpeakDriver(synthesizer, agent)  # type: ignore[arg-type]
        driver.reset()
        outcome = EpisodeOutcome(episode.id)
        playback = PlaybackTimeline(keep=False)
        arrivals: dict[tuple[int, int], ArrivedWord] = {}  # (sentence, index) -> the word as it arrived
        keys = SentenceKeys()
        voice_free_s = 0.0
        made: list[tuple[AudioPiece, int]] = []

        def play(pieces: list[AudioPiece], at_s: float, step: int) -> None:
            nonlocal voice_free_s
            before = playback.timeline.gaps.underruns
            for piece in pieces:
                made.append((piece, step))
                gen_s = piece.gen_s * self.voice_slowdown
                outcome.compute_s += gen_s
                ready = max(at_s, voice_free_s) + gen_s
                voice_free_s = ready
                needed = arrivals.get((piece.sentence, piece.needs_word))
                inputs_at = needed.commit_s if needed is not None else at_s
                start, _ = playback.add(ready, piece.audio_s, inputs_at)
                for word in piece.words:
                    arrived = arrivals.get((word.sentence, word.index))
                    if arrived is not None:
                        end = start + word.end_sample / piece.sample_rate
                        outcome.words.append(SpokenWord(word.text, arrived.end_s, arrived.commit_s, end, step,
                                                        (word.sentence, word.index)))  # fmt: skip
            outcome.step_underruns[step] += playback.timeline.gaps.underruns - before

        for number, step in enumerate(episode.steps):
            tokens = keyed_tokens(step.committed, keys)
            arrivals.update((key, word) for _, key, word in tokens)
            # what is in hand when the step's words arrive: the voice already made, on the step's clock
            in_hand = max((playback.end_s or 0.0) - max(step.at_s, voice_free_s), 0.0)
            decision = driver.step([token for token, _, _ in tokens], step.at_s, in_hand, hint=list(step.tentative))
            outcome.actions.append(decision.action)
            outcome.observations.append(decision.observation.vector())
            outcome.step_underruns.append(0)
            play(decision.pieces, step.at_s, number)
        if not episode.steps:
            return outcome
        play(synthesizer.flush(), episode.steps[-1].at_s, len(episode.steps) - 1)
        gaps = playback.timeline.gaps
        outcome.underruns, outcome.gap_s, outcome.starved_s = gaps.underruns, gaps.gap_s, gaps.starved_s
        if self.quality and made:
            self._score(episode, made, outcome)
        return outcome

    def _score(self, episode: Episode, made: list[tuple[AudioPiece, int]], outcome: EpisodeOutcome) -> None:
        reference, reference_pieces = self.reference(episode)
        pieces = [piece for piece, _ in made]
        audio = np.concatenate([p.samples for p in pieces])
        steps = {(w.sentence, w.index): step for piece, step in made for w in piece.words}
        distances = word_distances_by_key(audio, pieces, reference, reference_pieces, self.voice.sample_rate)
        for key, distance in distances.items():
            outcome.word_distances_db.append(distance)
            outcome.distance_steps.append(steps[key])


def always(action: int) -> FixedAgent:
    """An agent that always answers ``action`` (the environment's two extremes)."""
    return FixedAgent(action)
