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
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.metrics.shadowing import ear_voice_lag_s
from engine.tts.chunker import ChunkSizes
from engine.tts.frontend import ends_sentence, with_pause
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
from engine.tts.learned.episodes import ArrivedWord, Episode
from engine.tts.pieces import AudioPiece
from engine.tts.policies import FullSentencePolicy
from engine.tts.quality import spectral_distance_db, word_spans
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


def episode_tokens(words: tuple[ArrivedWord, ...] | list[ArrivedWord]) -> list[tuple[str, ArrivedWord]]:
    """The tokens the voice is fed for committed words, as the session feeds them (a pause is a comma)."""
    tokens = []
    for word in words:
        parts = word.text.split()
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            tokens.append((with_pause(part) if word.pause_after and last else part, word))
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
        self.timer = timer
        self._references: dict[str, tuple[np.ndarray, dict[tuple[int, int], np.ndarray]]] = {}
        self.max_references = 64  # episodes whose whole-sentence voice is kept (bounded)

    def _synthesizer(self, policy) -> IncrementalSynthesizer:  # noqa: ANN001 - a TtsPolicy
        if self.timer is not None:
            return IncrementalSynthesizer(self.voice, policy, self.sizes, timer=self.timer)  # type: ignore[arg-type]
        return IncrementalSynthesizer(self.voice, policy, self.sizes)  # type: ignore[arg-type]

    def reference(self, episode: Episode) -> dict[tuple[int, int], np.ndarray]:
        """The episode's words spoken a whole sentence at a time, with the same noise: per word key, its samples."""
        if episode.id not in self._references:
            synthesizer = self._synthesizer(FullSentencePolicy())
            tokens = [t for t, _ in episode_tokens(episode.words)]
            pieces = synthesizer.feed(tokens) + synthesizer.flush()
            audio = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
            words = {key: audio[a:b] for key, (a, b) in word_spans(pieces).items() if b > a}
            if len(self._references) >= self.max_references:
                self._references.pop(next(iter(self._references)))
            self._references[episode.id] = (audio, words)
        return self._references[episode.id][1]

    def run(self, episode: Episode, agent: Agent | Callable[[Observation], int]) -> EpisodeOutcome:
        if not hasattr(agent, "decide"):
            agent = _Decider(agent)  # type: ignore[arg-type]
        synthesizer = self._synthesizer(AgentPolicy(k=self.k))
        driver = ReadSpeakDriver(synthesizer, agent)  # type: ignore[arg-type]
        driver.reset()
        outcome = EpisodeOutcome(episode.id)
        playback = PlaybackTimeline(keep=False)
        arrivals: dict[tuple[int, int], ArrivedWord] = {}  # (sentence, index) -> the word as it arrived
        sentence, index = 0, 0
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
            tokens = episode_tokens([w for w in step.committed if w.text.strip()])
            for token, word in tokens:
                arrivals[(sentence, index)] = word
                index += 1
                if ends_sentence(token):
                    sentence, index = sentence + 1, 0
            # what is in hand when the step's words arrive: the voice already made, on the step's clock
            in_hand = max((playback.end_s or 0.0) - max(step.at_s, voice_free_s), 0.0)
            decision = driver.step([t for t, _ in tokens], step.at_s, in_hand, hint=list(step.tentative))
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
        reference = self.reference(episode)
        pieces = [piece for piece, _ in made]
        audio = np.concatenate([p.samples for p in pieces])
        steps = {(w.sentence, w.index): step for piece, step in made for w in piece.words}
        for key, (a, b) in sorted(word_spans(pieces).items()):
            target = reference.get(key)
            if target is not None and b > a:
                outcome.word_distances_db.append(spectral_distance_db(audio[max(a, 0) : b], target,
                                                                      self.voice.sample_rate))  # fmt: skip
                outcome.distance_steps.append(steps[key])


def always(action: int) -> FixedAgent:
    """An agent that always answers ``action`` (the environment's two extremes)."""
    return FixedAgent(action)
