"""Practising on this computer's sound: another application plays the source (a talk, a video, a podcast) and the
person shadows it, or interprets it into English, into the microphone with headphones on.

Nothing of the source is known ahead, so it is recognized live beside the person: two streaming recognizers, one core
each, on two captures placed on one clock (each capture's zero from its blocks' arrival, ``tap.RecordingTap``). The
session is open-ended: Stop ends it (or ``max_s``). Then both recordings are recognized whole, as ``liveshadow
practice --voice`` recognizes files, and the person is scored on the source's clock against the source's words as
the recognizer heard them (there is no transcript). The source as heard is kept beside the attempt (``source.wav``):
the replay plays it, and the history knows the attempt by it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.asr.backend import AsrBackend, AsrError
from engine.asr.offline import transcribe_long
from engine.asr.run import run_capture
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import speech_span
from engine.asr.words import Word
from engine.audio.capture import BlockQueue, Capture
from engine.audio.devices import AudioDeviceError
from engine.clock import RealClock
from engine.metrics.aggregate import aggregate
from engine.pipeline.config import AUTO_LANGUAGE, ShadowConfig
from engine.pipeline.models import streaming_recognizer
from engine.practice.live_common import (
    ATTEMPT_FILE,
    SOURCE_FILE,
    LiveSessionBase,
    PracticeSnapshot,
    PracticeState,
    as_kept,
    on_source_clock,
)
from engine.practice.marks import GrowingUnits
from engine.practice.tap import SAMPLE_RATE, RecordingTap

if TYPE_CHECKING:
    from engine.pipeline.sources import SourcePlan


log = logging.getLogger(__name__)

SYSTEM = "system"  # the default output's monitor (``pipeline.sources``)
MAX_HEARD_S = 1800.0  # one session keeps this much of each side (then it ends and scores what was heard)
EDGE_S = 0.5  # of silence kept each side of the source's speech when it is recognized whole
OPEN_WAIT_S = 5.0  # a new stream may deliver nothing for its first 0.4-1.9 s (a sound server's); then it is lost


class HeardPracticeSession(LiveSessionBase):
    """``prepare()`` (the models, the source's device), ``start()`` (returns once both are heard), then ``stop()``
    when the person is done: what was heard is scored. ``snapshot()`` from any thread."""

    def __init__(
        self,
        source: str = SYSTEM,
        language: str | None = "en",
        input_device: int | str | None = None,
        record_dir: Path | None = None,
        interpret: bool = False,
        max_s: float = MAX_HEARD_S,
    ) -> None:
        """``source``: "system" (this computer's sound) or a sound-server source by name or description.
        ``interpret``: the source is in ``language`` (None: detected) and the person speaks English."""
        super().__init__(record_dir, language, interpret)
        self.source_name = source
        self.input_device = input_device
        self.max_s = max_s
        self.label = source  # what the source is called, once prepared
        self.notice: str | None = None  # why the session ended by itself, when it was not an error
        self._plan: SourcePlan | None = None
        self._source_backend: AsrBackend | None = None
        self._person_backend: AsrBackend | None = None
        self._vads: tuple = ()
        self._source_tap: RecordingTap | None = None
        self._person_tap: RecordingTap | None = None
        self._heard: list[Word] = []  # the source's words recognized live, on its capture's clock
        self._heard_units = GrowingUnits(self.said_language)
        self._clock = RealClock()
        self._thread: threading.Thread | None = None
        self._started_at = 0.0

    @property
    def source_recording(self) -> Path | None:
        """The source as heard, once kept."""
        return self.record_dir / SOURCE_FILE if self.record_dir is not None else None

    @property
    def played_recording(self) -> Path | None:
        """The source on the attempt's clock: as heard."""
        return self.source_recording

    @property
    def source_text(self) -> str:
        with self._lock:
            return " ".join(w.text for w in self._heard)

    def prepare(self) -> None:
        """Find the source's device and load the recognizers. Raises ``AudioDeviceError`` or ``AsrError``."""
        from engine.asr.vad import SileroVad
        from engine.pipeline.sources import plan_source
        from engine.practice.attempt import load_recognizer

        plan = plan_source(self.source_name, ShadowConfig(input_device=self.input_device))
        if not plan.server and plan.device == self.input_device:
            raise AudioDeviceError("the source to practise on is the microphone itself: choose this computer's sound")
        self._plan, self.label = plan, plan.label
        if self.interpret:
            from engine.practice.interpreting import load_translator

            self._source_backend = load_translator(self.language, threads=1)
        else:
            self._source_backend = load_recognizer(self.said_language, threads=1)
        self._person_backend = load_recognizer(self.said_language, threads=1)
        self._vads = (SileroVad(), SileroVad())

    # ----- run
    def start(self) -> None:
        from engine.pipeline.sources import capture_for

        if self._plan is None:
            raise RuntimeError("prepare() first")
        heard: BlockQueue = capture_for(self._plan)
        mic = Capture(self.input_device)
        self._source_tap, self._person_tap = RecordingTap(heard, self.max_s), RecordingTap(mic, self.max_s)
        self._clock = RealClock()
        heard.start()  # type: ignore[attr-defined]
        try:
            mic.start()
        except AudioDeviceError:
            heard.stop()  # type: ignore[attr-defined]
            raise
        self._started_at = time.monotonic()
        self.state = PracticeState.RUNNING
        self._thread = threading.Thread(target=self._run, name="practice-heard", daemon=True)
        self._thread.start()
        # returns once both deliver: a sound server's new stream may be silent for its first 2 s, and what plays
        # before the source is heard is lost to the practice
        while self.offset_s() is None and not self._finished.wait(0.02):
            pass
        if self.offset_s() is None:
            raise AudioDeviceError(self.error or "the practice ended before it heard anything")

    def _recognizer(self, backend: AsrBackend, vad: object, translating: bool) -> tuple[StreamingRecognizer, float]:
        """A streaming recognizer with the shadowing (or interpreting) session's settings, and its step."""
        config = ShadowConfig(translate_from=(self.language or AUTO_LANGUAGE) if translating else None)
        return streaming_recognizer(backend, vad, config), config.step_s  # type: ignore[arg-type]

    def _run(self) -> None:
        source, person = self._source_tap, self._person_tap
        assert source is not None and person is not None
        side = (source, self._source_backend, self._vads[0], self.interpret, self._on_source)
        hearing = threading.Thread(target=self._listen, args=side, name="practice-source", daemon=True)
        hearing.start()
        try:
            self._listen(person, self._person_backend, self._vads[1], False, self._on_person)
        finally:
            self._stop.set()
            hearing.join()
            for tap in (source, person):
                tap.capture.stop()  # type: ignore[attr-defined]
        self._conclude(self.offset_s() is not None, self._score)

    def _listen(
        self,
        tap: RecordingTap,
        backend: AsrBackend | None,
        vad: object,
        translating: bool,
        on_step: Callable[[object], None],
    ) -> None:
        """One side recognized live until the session stops; a device that went away stops both."""
        recognizer, step_s = self._recognizer(backend, vad, translating)  # type: ignore[arg-type]
        try:
            run = run_capture(
                tap,
                recognizer,
                self._clock,
                self._should_stop,
                min_step_s=step_s,
                on_step=on_step,
                keep_words=False,
            )
            if run.device_error:
                self.error = self.error or run.device_error
        except (AsrError, AudioDeviceError, OSError) as exc:
            self.error = self.error or str(exc)
        self._stop.set()

    def _should_stop(self) -> bool:
        if self._stop.is_set():
            return True
        source, person = self._source_tap, self._person_tap
        assert source is not None and person is not None
        if source.full or person.full:
            self.notice = f"a practice on this computer's sound keeps {self.max_s / 60:.0f} min: it ended there"
            self._stop.set()
        elif time.monotonic() - self._started_at > OPEN_WAIT_S:
            silent = [name for name, tap in (("the microphone", person), (self.label, source)) if tap.origin is None]
            if silent:
                self.error = f"{silent[0]} delivered nothing in {OPEN_WAIT_S:.0f} s"
                self._stop.set()
        return self._stop.is_set()

    def _on_source(self, step: object) -> None:
        self._keep_committed(step, self._heard)

    # ----- figures
    def offset_s(self) -> float | None:
        """Where the microphone's zero lies on the source's clock (the source capture's zero)."""
        source = self._source_tap.origin if self._source_tap is not None else None
        person = self._person_tap.origin if self._person_tap is not None else None
        return None if source is None or person is None else person - source

    def snapshot(self) -> PracticeSnapshot:
        source = self._source_tap.origin if self._source_tap is not None else None
        position = 0.0 if source is None else time.monotonic() - source
        with self._lock:
            heard = list(self._heard)
        level = self._person_tap.level_db if self._person_tap is not None else -120.0
        with self._marking:
            source_units = self._heard_units.of(heard)
        return self._marked(source_units, self.offset_s(), position, position, level, open_ended=True)

    def _score(self) -> dict:
        from engine.practice.attempt import score_recording

        source, person = self._source_tap, self._person_tap
        assert source is not None and person is not None
        heard = as_kept(source.recorded)
        attempt = on_source_clock(person.recorded, self.offset_s())[: heard.size]  # both end when Stop is pressed
        attempt = as_kept(np.pad(attempt, (0, heard.size - attempt.size)))  # side by side, the two are as long
        live = self.snapshot()
        # the source is recognized from its first speech to its last: Whisper writes words ("Thank you.") into the
        # silence an open-ended session has around what played
        span = speech_span(heard, self._vads[0], EDGE_S)
        if span is None:
            raise AsrError(f"no speech was heard on {self.label}: nothing to score")
        spoken, start_s = heard[span[0] : span[1]], span[0] / SAMPLE_RATE
        if self.interpret:
            from engine.practice.interpreting import english_target, score_interpretation

            target = english_target(None, spoken, self._source_backend, self._vads[0])  # type: ignore[arg-type]
            target = target.moved(start_s)  # onto the clock of what was heard
            said = transcribe_long(self._person_backend, attempt)  # type: ignore[arg-type]
            report = score_interpretation(target, said)
            detected = getattr(self._source_backend, "detected", None)
            language = self.language or (detected[0] if detected else None)
            report.update(language=language, attempt_s=attempt.size / SAMPLE_RATE)
        else:
            words = _later(transcribe_long(self._person_backend, spoken), start_s)  # type: ignore[arg-type]
            if not words:
                raise AsrError(f"no words were heard in {self.label}: there was nothing to shadow")
            report = score_recording(words, attempt, self._person_backend, self.said_language)  # type: ignore[arg-type]
        report.update(
            {
                "command": "practice --live",
                "source": self.label,
                "source_words_from": "the recognizer",
                "source_s": heard.size / SAMPLE_RATE,
                "capture_offset_s": self.offset_s(),
                "notice": self.notice,
                "live": {
                    "evs_s": aggregate(e for _, e in live.evs),
                    "attempt_text": " ".join(live.attempt),
                    "source_text": self.source_text,
                },
            }
        )
        if self.record_dir is not None:
            report["source_recording"] = str(self.record_dir / SOURCE_FILE)
        self._keep(report, {SOURCE_FILE: heard, ATTEMPT_FILE: attempt})
        return report


def _later(words: list[Word], by_s: float) -> list[Word]:
    return [Word(w.text, w.start_s + by_s, w.end_s + by_s) for w in words]
