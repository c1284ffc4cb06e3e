"""The READ/SPEAK environment: an episode's word arrivals replayed into the real incremental synthesizer.

At every recognizer step of the episode the policy sees an ``Observation`` and answers READ (wait for more words)
or SPEAK (make the pending words' pieces now, with whatever lookahead there is). The end of a sentence is always
spoken, as in the paper's setting. The synthesizer runs with the ``AgentPolicy`` below, whose ``ready`` answers
what the agent decided, so none of the session's fixed rules (lookahead-k waits, hurry, the pause at commas,
speculation) take part. Pieces are made on a simulated clock charged with their real compute and played back to
back through ``PlaybackTimeline``, so gaps are classified by METRICS.md's rule as in a session.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.metrics.shadowing import ear_voice_lag_s
from engine.tts.chunker import ChunkSizes
from engine.tts.frontend import Unit, ends_phrase, ends_sentence
from engine.tts.learned.episodes import ArrivedWord, Episode
from engine.tts.pieces import AudioPiece
from engine.tts.policies import FullSentencePolicy, LookaheadPolicy, Window
from engine.tts.quality import word_distances_db
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.timeline import PlaybackTimeline
from engine.tts.voice import TwoStageVoice

READ, SPEAK = 0, 1
ACTIONS = ("READ", "SPEAK")
RATE_WINDOW_S = 3.0  # the recent input rate is over this long
N_FEATURES = 9


@dataclass(frozen=True)
class Observation:
    pending_phonemes: int  # committed words no piece holds yet
    hint_phonemes: int  # the recognizer's tentative words after them (lookahead that may change)
    in_hand_s: float  # voice made and not yet played
    input_rate_wps: float  # words committed per second over the last ``RATE_WINDOW_S``
    ends_clause: bool  # the last committed word ends a phrase (, ; :) or the speaker paused after it
    sentence_started: bool  # the current sentence already has a piece
    since_commit_s: float  # since the last word was committed
    consecutive_reads: int
    last_action: int  # READ or SPEAK (READ before the first decision)

    def vector(self) -> np.ndarray:
        """The features as the policy network reads them (roughly unit scale)."""
        return np.array([
            self.pending_phonemes / 30.0, self.hint_phonemes / 30.0, self.in_hand_s, self.input_rate_wps / 3.0,
            float(self.ends_clause), float(self.sentence_started), min(self.since_commit_s, 5.0),
            min(self.consecutive_reads, 10) / 10.0, float(self.last_action),
        ], dtype=np.float32)  # fmt: skip


class AgentPolicy:
    """Lookahead-k's Stage I windows, with the agent deciding when a chunk is made; a complete sentence is spoken."""

    name = "learned"
    overlap_decode = True
    one_piece_per_sentence = False

    def __init__(self, k: int = 1) -> None:
        self.windows = LookaheadPolicy(k=k)
        self.speak = False

    def ready(self, index: int, available: int, complete: bool) -> bool:
        return index < available and (self.speak or complete)

    def window(self, chunks: Sequence[Sequence[Unit]], index: int, complete: bool) -> Window:
        return self.windows.window(chunks, index, complete)

    def hurried(self) -> AgentPolicy:
        """A piece made in a hurry reads the shorter left context, as the session's do."""
        policy = AgentPolicy.__new__(AgentPolicy)
        policy.windows, policy.speak = self.windows.hurried(), self.speak
        return policy


@dataclass
class SpokenWord:
    text: str
    source_end_s: float
    commit_s: float
    play_end_s: float

    @property
    def lag_s(self) -> float:
        return ear_voice_lag_s(self.play_end_s, self.source_end_s)


@dataclass
class EpisodeOutcome:
    episode_id: str
    words: list[SpokenWord] = field(default_factory=list)  # in the order they were spoken
    actions: list[int] = field(default_factory=list)
    underruns: int = 0
    gap_s: float = 0.0
    starved_s: float = 0.0
    compute_s: float = 0.0
    word_distances_db: list[float] = field(default_factory=list)  # against the whole-sentence voice, per word

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
        excess, run = 0, 0
        for action in self.actions:
            run = run + 1 if action == READ else 0
            excess += run > target
        return excess


@dataclass(frozen=True)
class RewardWeights:
    """What an episode's return charges (all costs, so the return is at most 0)."""

    lag: float = 1.0  # per second of mean ear-voice lag
    underrun: float = 0.5  # per underrun
    reads_target: int = 6  # READs in a row allowed without cost (about 2 s of 0.3 s steps)
    excess_read: float = 0.05  # per READ beyond that
    quality: float = 0.2  # per dB of mean word distance from the whole-sentence voice


def episode_return(outcome: EpisodeOutcome, weights: RewardWeights | None = None) -> float:
    w = weights or RewardWeights()
    return -(w.lag * outcome.lag_mean_s + w.underrun * outcome.underruns
             + w.excess_read * outcome.excess_reads(w.reads_target) + w.quality * outcome.distance_db)  # fmt: skip


def _speakable(words: tuple[ArrivedWord, ...]) -> list[ArrivedWord]:
    return [w for w in words if w.text.strip()]


class ReadSpeakEnvironment:
    """Runs episodes with a decision function; one synthesizer (and voice) for all of them."""

    def __init__(self, voice: TwoStageVoice, k: int = 1, sizes: ChunkSizes | None = None, quality: bool = True) -> None:
        self.voice = voice
        self.policy = AgentPolicy(k=k)
        self.sizes = sizes or ChunkSizes(first=12, later=12)
        self.quality = quality  # score each word against the whole-sentence voice (``word_distance_db``)
        self._references: dict[str, tuple[np.ndarray, list[AudioPiece]]] = {}  # episode id -> whole-sentence voice

    def reference(self, episode: Episode) -> tuple[np.ndarray, list[AudioPiece]]:
        """The episode's words spoken a whole sentence at a time, with the same noise (made once per episode)."""
        if episode.id not in self._references:
            synthesizer = IncrementalSynthesizer(self.voice, FullSentencePolicy(), self.sizes)
            pieces = synthesizer.feed([w.text for w in episode.words if w.text.strip()]) + synthesizer.flush()
            audio = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
            self._references[episode.id] = (audio, pieces)
        return self._references[episode.id]

    def run(self, episode: Episode, decide: Callable[[Observation], int]) -> EpisodeOutcome:
        synthesizer = IncrementalSynthesizer(self.voice, self.policy, self.sizes)
        outcome = EpisodeOutcome(episode.id)
        playback = PlaybackTimeline(keep=False)
        arrivals: dict[tuple[int, int], ArrivedWord] = {}  # (sentence, index) -> the word as it arrived
        sentence, index = 0, 0
        voice_free_s = 0.0
        commits: list[float] = []
        last_action, reads = READ, 0

        made: list[AudioPiece] = []

        def play(pieces: list[AudioPiece], at_s: float) -> None:
            nonlocal voice_free_s
            made.extend(pieces)
            for piece in pieces:
                outcome.compute_s += piece.gen_s
                ready = max(at_s, voice_free_s) + piece.gen_s
                voice_free_s = ready
                needed = arrivals.get((piece.sentence, piece.needs_word))
                inputs_at = needed.commit_s if needed is not None else at_s
                start, _ = playback.add(ready, piece.audio_s, inputs_at)
                for word in piece.words:
                    arrived = arrivals.get((word.sentence, word.index))
                    if arrived is not None:
                        end = start + word.end_sample / piece.sample_rate
                        outcome.words.append(SpokenWord(word.text, arrived.end_s, arrived.commit_s, end))

        for step in episode.steps:
            words = _speakable(step.committed)
            for word in words:
                arrivals[(sentence, index)] = word
                commits.append(word.commit_s)
                index += 1
                if ends_sentence(word.text):
                    sentence, index = sentence + 1, 0
            # the words come in first (a READ makes nothing of them, except a sentence they complete)
            pieces = synthesizer.feed([w.text for w in words], hint=list(step.tentative))
            pending, hint, started = synthesizer.pending_phonemes()
            recent = [c for c in commits if c > step.at_s - RATE_WINDOW_S]
            last_word = words[-1] if words else None
            in_hand = max((playback.end_s or 0.0) - step.at_s, 0.0)
            observation = Observation(
                pending_phonemes=pending, hint_phonemes=hint, in_hand_s=in_hand,
                input_rate_wps=len(recent) / RATE_WINDOW_S,
                ends_clause=last_word is not None and (ends_phrase(last_word.text) or last_word.pause_after),
                sentence_started=started, since_commit_s=step.at_s - commits[-1] if commits else step.at_s,
                consecutive_reads=reads, last_action=last_action,
            )  # fmt: skip
            action = decide(observation)
            outcome.actions.append(action)
            reads = reads + 1 if action == READ else 0
            last_action = action
            if action == SPEAK:
                self.policy.speak = synthesizer.urgent = True  # every fed word, the last chunk short if need be
                try:
                    pieces += synthesizer.hurry(sentence_start=True)
                finally:
                    self.policy.speak = synthesizer.urgent = False
            play(pieces, step.at_s)
        end_s = episode.steps[-1].at_s if episode.steps else 0.0
        play(synthesizer.flush(), end_s)
        gaps = playback.timeline.gaps
        outcome.underruns, outcome.gap_s, outcome.starved_s = gaps.underruns, gaps.gap_s, gaps.starved_s
        if self.quality and made:
            reference, reference_pieces = self.reference(episode)
            audio = np.concatenate([p.samples for p in made])
            outcome.word_distances_db = word_distances_db(audio, made, reference, reference_pieces,
                                                          self.voice.sample_rate)  # fmt: skip
        return outcome


def always(action: int) -> Callable[[Observation], int]:
    """A decision function that always answers ``action`` (the environment's two extremes)."""
    return lambda _observation: action
