"""``liveshadow self-test``: does this installation work? Every bundled model is loaded and run once.

Each check is one line of the report: the phonemizer's data, the voice's two stages, the recognizer, the
voice-activity detector, a sentence spoken by the voice and recognized back word for word (by tiny.en, and by Whisper
base, which interpreting needs, where it is installed), the audio devices (none is not a failure: a machine without a
microphone can still shadow files) and, given by the app, its main window. A check that fails says why, naming the
missing or broken file, and the others still run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from engine.asr.whisper_backend import WhisperBackend
    from engine.tts.voice import TwoStageVoice


log = logging.getLogger(__name__)

# A sentence the bundled voice says and tiny.en hears back word for word (other sentences tried lost "this" to "the",
# or a made-up name).
ROUND_TRIP_TEXT = "The quick brown fox jumps over the lazy dog."


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    seconds: float

    def line(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'}  {self.name}: {self.detail} ({self.seconds:.2f} s)"


Check = tuple[str, Callable[[], str]]  # a name, and a function that returns what it found or raises


class _Models:
    """The models, loaded by the checks that test them; later checks reuse them (or fail for want of them)."""

    def __init__(self) -> None:
        self.voice: TwoStageVoice | None = None
        self.backend: WhisperBackend | None = None
        self.ids: np.ndarray | None = None
        self.latent: np.ndarray | None = None
        self.spoken: np.ndarray | None = None  # the test sentence as the voice said it, 16 kHz
        self.spoken_pieces = 0

    def phonemizer(self) -> str:
        from engine.tts.espeak import data_dir, phonemize

        folder = data_dir()
        symbols = sum(len(s) for s in phonemize("en-us", ROUND_TRIP_TEXT))
        return f"espeak-ng data in {folder}; {symbols} phonemes for the test sentence"

    def stage1(self) -> str:
        from engine.tts.frontend import FrontEnd
        from engine.tts.voice import TwoStageVoice

        self.voice = TwoStageVoice()
        front = FrontEnd(self.voice.config)
        self.ids = np.asarray(front.text_ids(ROUND_TRIP_TEXT), np.int64)
        self.latent, _ = self.voice.stage1(self.ids)
        return f"{self.voice.split.text.parent}: {self.latent.shape[-1]} latent frames from {self.ids.size} ids"

    def stage2(self) -> str:
        if self.voice is None or self.latent is None:
            raise RuntimeError("needs the voice's Stage I (failed above)")
        audio = self.voice.stage2(self.latent)
        if audio.size == 0 or not np.isfinite(audio).all() or float(np.abs(audio).max()) < 1e-3:
            raise RuntimeError("the vocoder gave silence or invalid samples")
        return f"{self.voice.split.stage2}: {audio.size / self.voice.sample_rate:.2f} s of audio"

    def recognizer(self) -> str:
        from engine.asr.whisper_backend import WhisperBackend, bundled_model_path

        self.backend = WhisperBackend(threads=1)
        words = self.backend.transcribe(np.zeros(16000, np.float32))
        return f"Whisper tiny.en in {bundled_model_path()}; {len(words)} word(s) on a second of silence"

    def vad(self) -> str:
        from engine.asr.vad import SileroVad, bundled_model_path

        peak = float(np.max(SileroVad().probabilities(np.zeros(16000, np.float32))))
        if peak > 0.5:
            raise RuntimeError(f"heard speech in a second of silence (probability {peak:.2f})")
        return f"{bundled_model_path()}; speech probability {peak:.2f} in a second of silence"

    def _spoken(self) -> tuple[np.ndarray, int]:
        """The test sentence as the voice says it incrementally (16 kHz) and in how many pieces."""
        from engine.audio.resample import resample
        from engine.tts.policies import make_policy
        from engine.tts.synthesizer import IncrementalSynthesizer

        if self.voice is None:
            raise RuntimeError("needs the voice (failed above)")
        if self.spoken is None:
            synthesizer = IncrementalSynthesizer(self.voice, make_policy("lookahead-1"))
            pieces = synthesizer.feed(ROUND_TRIP_TEXT) + synthesizer.flush()
            self.spoken = resample(np.concatenate([p.samples for p in pieces]), self.voice.sample_rate, 16000)
            self.spoken_pieces = len(pieces)
        return self.spoken, self.spoken_pieces

    def round_trip(self) -> str:
        from engine.metrics.wer import normalize_for_wer

        if self.backend is None:
            raise RuntimeError("needs the recognizer (failed above)")
        audio, pieces = self._spoken()
        heard = " ".join(word.text for word in self.backend.transcribe_offline(audio)).strip()
        if normalize_for_wer(heard) != normalize_for_wer(ROUND_TRIP_TEXT):
            raise RuntimeError(f"spoke {ROUND_TRIP_TEXT!r} in {pieces} pieces but heard {heard!r}")
        return f"spoke the test sentence in {pieces} pieces ({audio.size / 16000:.2f} s) and heard it back"

    def interpreting_model(self) -> str:
        """Whisper base, which interpreting needs. The packaged app has it only with its model package, so there
        its absence is reported, not failed; a model that is there but damaged fails."""
        import sys

        from engine.asr import whisper_base_model as base
        from engine.asr.whisper_backend import WhisperBackend
        from engine.metrics.wer import normalize_for_wer

        if getattr(sys, "frozen", False) and base.installed_dir() is None:
            return f"not installed: interpreting needs the {base.ADDON_PACKAGE} package (shadowing does not)"
        folder = base.model_dir()
        audio, _ = self._spoken()
        heard = " ".join(w.text for w in WhisperBackend(folder, threads=1).transcribe_offline(audio)).strip()
        if normalize_for_wer(heard) != normalize_for_wer(ROUND_TRIP_TEXT):
            raise RuntimeError(f"Whisper base in {folder} heard {heard!r} for {ROUND_TRIP_TEXT!r}")
        return f"Whisper base in {folder}; heard the test sentence back"


def learned_policy() -> str:
    from engine.tts.learned.agent import LearnedAgent
    from engine.tts.learned.moves import MOVES, MoveObservation

    agent = LearnedAgent()
    move = agent.decide(MoveObservation(20, 2, 9, 2, 0.2, 1.0, 2.0, False, False, False, 0.3, 0.3, 0.8))
    return (
        f"{agent.path}: {MOVES[move]} (probabilities {', '.join(f'{p:.2f}' for p in agent.last_probabilities)}) "
        f"with 20 phonemes waiting at a sentence's start, 0.2 s in hand"
    )


def audio_devices() -> str:
    from engine.audio.devices import list_devices

    devices = list_devices()
    inputs = sum(1 for d in devices if d.max_input_channels > 0)
    outputs = sum(1 for d in devices if d.max_output_channels > 0)
    if not devices:
        return "no audio devices found (files can still be shadowed; plug in a microphone for live use)"
    return f"{inputs} input and {outputs} output device(s)"


def checks(window: Callable[[], str] | None = None) -> list[Check]:
    """The checks in the order they run; ``window`` renders the app's main window (the engine never imports Qt)."""
    models = _Models()
    found: list[Check] = [
        ("phonemizer", models.phonemizer),
        ("voice, Stage I (text to latent)", models.stage1),
        ("voice, Stage II (latent to audio)", models.stage2),
        ("recognizer", models.recognizer),
        ("voice-activity detector", models.vad),
        ("speak and recognize back", models.round_trip),
        ("interpreting model", models.interpreting_model),
        ("learned voice policy", learned_policy),
        ("audio devices", audio_devices),
    ]
    if window is not None:
        found.append(("main window", window))
    return found


def run_checks(to_run: list[Check]) -> Iterator[CheckResult]:
    """Run each check, whatever happened to the ones before it."""
    for name, check in to_run:
        t0 = time.perf_counter()
        try:
            detail, ok = check(), True
        except Exception as exc:
            log.debug("self-test check %r failed", name, exc_info=True)
            detail, ok = f"{exc}" or type(exc).__name__, False
        yield CheckResult(name, ok, detail, time.perf_counter() - t0)
