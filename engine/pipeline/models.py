"""The models a session needs, loaded once and shared by sessions (loading takes seconds; a session must not)."""

from __future__ import annotations

import logging
import threading

from engine.asr.backend import AsrBackend
from engine.asr.commit import make_commit_policy
from engine.asr.stream_values import StreamConfig
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.pipeline.config import AUTO_LANGUAGE, BASE_MODEL, ShadowConfig
from engine.pipeline.echo import EchoMemory
from engine.tts.voice import TwoStageVoice

log = logging.getLogger(__name__)


def _source_language(config: ShadowConfig) -> str | None:
    """The language to translate from, None to detect it (``translate_from`` "auto")."""
    return None if config.translate_from == AUTO_LANGUAGE else config.translate_from


def load_backend(config: ShadowConfig) -> AsrBackend:
    if config.backend == "whisper":
        from engine.asr.whisper_backend import WhisperBackend

        model = config.model
        if model == BASE_MODEL or (config.translate_from is not None and model is None):
            from engine.asr import whisper_base_model

            model = str(whisper_base_model.model_dir())
        if config.translate_from is None:
            return WhisperBackend(model, threads=config.asr_threads)
        return WhisperBackend(
            model,
            threads=config.asr_threads,
            language=_source_language(config),
            task="translate",
            beam_size=config.interpret_beam_size,
        )
    if config.backend == "vosk":
        from engine.asr.vosk_backend import VoskBackend

        return VoskBackend(config.model)
    raise ValueError(f"unknown recognizer {config.backend!r} (whisper or vosk)")


def stream_config(config: ShadowConfig) -> StreamConfig:
    """The recognizer's settings for ``config``'s mode: interpreting has its pause endpoint and its hold bound's way
    of committing, and decodes as it was measured (no window floor, no full window or beams at a buffer's start, no
    finish window: the translating decode was not measured with them)."""
    if config.translate_from is None:
        return StreamConfig(endpoint_s=config.endpoint_s, force_previous=config.force_previous)
    return StreamConfig(
        endpoint_s=config.endpoint_s,
        force_previous=config.force_previous,
        min_window_s=0.0,
        start_beam_size=0,
        start_window_s=0.0,
        start_s=0.0,
        finish_window_s=0.0,
    )


def streaming_recognizer(backend: AsrBackend, vad: SileroVad, config: ShadowConfig) -> StreamingRecognizer:
    """A fresh streaming recognizer on ``backend`` and ``vad`` with the settings of ``config``'s mode (shadowing or
    interpreting: the commit policy, its agreement gap, ``stream_config``)."""
    policy = make_commit_policy(config.commit, config.agreement_gap_s)
    return StreamingRecognizer(backend, policy, vad, stream_config(config))


class Models:
    """Recognizer backend, VAD and voice. ``recognizer(config)`` makes a fresh streaming recognizer on them."""

    def __init__(self, backend: AsrBackend, vad: SileroVad, voice: TwoStageVoice, key: tuple = ()) -> None:
        self.backend = backend
        self.vad = vad
        self.voice = voice
        self.key = key
        self._lock = threading.Lock()
        self.echo_memory = EchoMemory()  # the echo paths sessions learned (``pipeline.echo``)

    @classmethod
    def load(cls, config: ShadowConfig) -> Models:
        """Load everything ``config`` asks for; raises AsrError / VoiceSplitError / OSError with a clear message."""
        log.info("loading models: %s, voice %s", config.backend, config.voice or "bundled")
        voice = TwoStageVoice(model_path=config.voice, threads=config.tts_threads, seed=config.seed)
        return cls(load_backend(config), SileroVad(), voice, config.models_key())

    def recognizer(self, config: ShadowConfig) -> StreamingRecognizer:
        with self._lock:
            self.vad.reset()
            if config.translate_from is not None and hasattr(self.backend, "set_language"):
                self.backend.set_language(_source_language(config))  # resets it too
            elif hasattr(self.backend, "reset"):
                self.backend.reset()
            return streaming_recognizer(self.backend, self.vad, config)
