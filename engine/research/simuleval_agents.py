"""liveshadow as SimulEval agents: its streaming recognizer and commit policy (speech to text: transcribing, or
translating into English), and that with its incremental voice (speech to speech).

    simuleval --agent-class engine.research.simuleval_agents.LiveshadowSpeechToText \\
        --source SOURCES.txt --target REFERENCES.txt --output DIR --source-segment-size 100 --computation-aware

SimulEval feeds the source as fast as the agent takes it and measures the agent's compute itself (its ``_CA``
figures: the source read so far plus the compute since the recording started). Each recognizer step takes what
arrived since the last one, at most every ``--step-s`` of source (the session's steps); the words a step commits
are written at once, and the speech agent's voice speaks them by its lookahead as a session's voice does.
``WHISPER_BASE_ASR_BLEU`` scores the speech agent's output: SimulEval's ASR-BLEU with the bundled multilingual
Whisper base instead of a model fetched at run time (``--user-dir`` its plugin, ``engine/research/simuleval_plugin``).
"""

from __future__ import annotations

import logging
from argparse import ArgumentParser, Namespace
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from simuleval.agents import SpeechToSpeechAgent, SpeechToTextAgent
from simuleval.agents.actions import Action, ReadAction, WriteAction
from simuleval.data.segments import SpeechSegment
from simuleval.evaluator.scorers.quality_scorer import (
    WhisperASRSacreBLEUScorer,
    register_quality_scorer,
    remove_punctuations,
)

from engine.asr.backend import SAMPLE_RATE
from engine.asr.streaming import StreamingRecognizer
from engine.audio.resample import StreamResampler
from engine.metrics.translation import normalize_for_bleu
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.voice_stage import build_voice_stage
from engine.tts.synthesizer import IncrementalSynthesizer

log = logging.getLogger(__name__)

ENGLISH = "en"


def _load(config: ShadowConfig) -> Models:
    """The session's models; faster-whisper's line per decode left out of SimulEval's log."""
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)
    return Models.load(config)


def add_liveshadow_args(parser: ArgumentParser) -> None:
    parser.add_argument(
        "--source-lang",
        default=ENGLISH,
        help="the source's language: en transcribes it (tiny.en); another translates it into English (Whisper base)",
    )
    parser.add_argument("--commit-policy", default="la2", help="la2, hold2 or waitk (default la2)")
    parser.add_argument(
        "--step-s", type=float, default=None, help="source between recognizer steps (default: the session's)"
    )
    parser.add_argument(
        "--normalize-output",
        action="store_true",
        help="write the text lower-cased without punctuation (as bench interpret scores BLEU)",
    )


def session_config(args: Namespace) -> ShadowConfig:
    """The session's settings for the agent's options."""
    language = getattr(args, "source_lang", ENGLISH) or ENGLISH
    config = ShadowConfig(
        commit=getattr(args, "commit_policy", "la2"), translate_from=None if language == ENGLISH else language
    )
    step_s = getattr(args, "step_s", None)
    if step_s is not None:
        config = replace(config, min_step_s=step_s, interpret_step_s=step_s)
    return config


class _Listener:
    """The streaming recognizer over the source SimulEval hands the agent, a step per ``step_s`` of it."""

    def __init__(self, models: Models, config: ShadowConfig) -> None:
        self.config = config
        self.recognizer: StreamingRecognizer = models.recognizer(config)
        self.taken = 0  # samples of the source handed to the recognizer, all at the last step
        self.resampler: StreamResampler | None = None

    def words(self, source: list[float], rate: int, finished: bool) -> list[str] | None:
        """The words the next step commits, None when no step is due (less than a step of new source)."""
        due = len(source) - self.taken >= self.config.step_s * rate
        if not (due or finished):
            return None
        new = np.asarray(source[self.taken :], np.float32)
        self.taken = len(source)
        if self.resampler is None:
            self.resampler = StreamResampler(rate, SAMPLE_RATE)
        new = self.resampler.process(new, last=finished)
        if new.size:
            self.recognizer.insert_audio(new)
        result = self.recognizer.finish(now_s=0.0) if finished else self.recognizer.step(now_s=0.0)
        return [w.text for w in result.committed]


class _Listening:
    """What both agents share: the session's models, loaded once, and a fresh listener for each recording."""

    states: Any  # SimulEval's AgentStates, set by the agent class

    def __init__(self, args: Namespace) -> None:
        self.config = session_config(args)
        self.models = _load(self.config)
        self.listener: _Listener | None = None
        super().__init__(args)  # type: ignore[call-arg]  # SimulEval's agent, next in the order

    @staticmethod
    def add_args(parser: ArgumentParser) -> None:
        add_liveshadow_args(parser)

    def reset(self) -> None:
        super().reset()  # type: ignore[misc]
        self.listener = _Listener(self.models, self.config)

    def heard(self) -> list[str] | None:
        """The words the source so far lets the recognizer commit (None: no step due)."""
        assert self.listener is not None
        states = self.states
        return self.listener.words(states.source, states.source_sample_rate or SAMPLE_RATE, states.source_finished)


class LiveshadowSpeechToText(_Listening, SpeechToTextAgent):
    """The streaming recognizer and its commit policy; writes each step's committed words."""

    def __init__(self, args: Namespace) -> None:
        self.normalize = bool(getattr(args, "normalize_output", False))
        super().__init__(args)

    def policy(self) -> Action:
        finished = self.states.source_finished
        words = self.heard()
        if words is None or (not words and not finished):
            return ReadAction()
        text = " ".join(words)
        return WriteAction(normalize_for_bleu(text) if self.normalize else text, finished=finished)


class LiveshadowSpeechToSpeech(_Listening, SpeechToSpeechAgent):
    """The recognizer and the incremental voice: each step's committed words go to the voice, and the audio its
    lookahead lets it make is written at once."""

    def __init__(self, args: Namespace) -> None:
        self.synthesizer: IncrementalSynthesizer | None = None
        super().__init__(args)

    def reset(self) -> None:
        super().reset()
        warnings: list[str] = []
        self.synthesizer = build_voice_stage(self.config, self.models.voice, warnings).synthesizer
        for warning in warnings:
            log.warning("%s", warning)

    def policy(self) -> Action:
        assert self.synthesizer is not None
        finished = self.states.source_finished
        words = self.heard()
        if words is None:
            return ReadAction()
        pieces = self.synthesizer.feed(words) if words else []
        if finished:
            pieces += self.synthesizer.flush()
        if not pieces and not finished:
            return ReadAction()
        rate = pieces[0].sample_rate if pieces else self.models.voice.sample_rate
        samples = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
        segment = SpeechSegment(content=samples.tolist(), sample_rate=rate, finished=finished)
        return WriteAction(segment, finished=finished)


@register_quality_scorer("WHISPER_BASE_ASR_BLEU")
class WhisperBaseAsrBleu(WhisperASRSacreBLEUScorer):
    """SimulEval's Whisper ASR-BLEU (its sacreBLEU on the output's transcripts), the transcripts made by the bundled
    multilingual Whisper base in English (SimulEval's own loads openai-whisper's large model from the network)."""

    def asr_transcribe(self, instances: dict[int, Any]) -> list[str]:
        from engine.asr.offline import transcribe_long
        from engine.audio.io import load_audio
        from engine.pipeline.models import load_backend

        backend = load_backend(ShadowConfig(model="base"))
        transcripts = []
        for instance in instances.values():
            path = Path(instance.prediction)
            text = " ".join(w.text for w in transcribe_long(backend, load_audio(path))) if path.is_file() else ""
            text = text.lower() if self.lowercase else text
            transcripts.append(remove_punctuations(text) if self.remove_punctuations else text)
        if instances:
            out = Path(next(iter(instances.values())).prediction).parent.parent / "asr_transcripts.txt"
            out.write_text("".join(t + "\n" for t in transcripts), encoding="utf-8")
        return transcripts
