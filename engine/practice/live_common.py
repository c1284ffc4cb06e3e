"""What the two live practice sessions share: a recording played to the person (``live.PracticeSession``) and this
computer's sound heard as it plays (``heard.HeardPracticeSession``). Their states, the snapshot the window and the
console show, stop and cancel, and the end: what was heard is scored and kept, after a device went away too."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.asr.backend import AsrError
from engine.asr.words import Word
from engine.practice.align import Unit
from engine.practice.marks import GrowingUnits, LiveMarker, MarkedWord, evs_points, running_median

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000
ATTEMPT_FILE = "attempt.wav"
SOURCE_FILE = "source.wav"  # this computer's sound as it was heard (a recording played is not copied)
REPORT_FILE = "practice.json"
KEPT_SUBTYPE = "PCM_16"  # the recordings kept beside the report (half a float file's size; Praat and ELAN read it)


class PracticeState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    SCORING = "scoring"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass
class PracticeSnapshot:
    state: PracticeState
    position_s: float  # how much of the source has played (or been heard)
    duration_s: float  # the source's length (heard: so far)
    words: list[MarkedWord]
    attempt: list[str]  # the person's words so far
    evs: list[tuple[float, float]]  # (source word end, EVS) of the words said
    last_evs_s: float | None
    median_evs_s: float | None
    level_db: float  # the microphone's level
    pace: list[tuple[float, float]] = field(default_factory=list)  # the machine's lag on this source (pace-setter)
    open_ended: bool = False  # the source is this computer's sound: no end known, Stop ends it


class LiveSessionBase:
    """``stop()`` ends the session early and still scores what was said, ``cancel()`` ends it without a score;
    ``wait()`` for the end; ``state``, ``error`` and ``report`` tell how it went."""

    def __init__(self, record_dir: Path | None, language: str | None, interpret: bool, into: str | None = None) -> None:
        self.record_dir = record_dir
        self.language = language
        self.interpret = interpret
        self.into = into if interpret and into != "en" else None  # interpreting into another language than English
        self.state = PracticeState.IDLE
        self.error: str | None = None
        self.report: dict | None = None
        self.pace: list[tuple[float, float]] = []
        self.pace_words: list[dict] = []  # the pace-setter's own words as it spoke them
        self._lock = threading.Lock()
        self._stop, self._cancel, self._finished = threading.Event(), threading.Event(), threading.Event()
        self._committed: list[Word] = []  # the person's words, on their capture's clock
        self._marker, self._marking = LiveMarker(), threading.Lock()
        self._said_units = GrowingUnits(self.said_language)  # of ``_committed``, on their capture's clock

    @property
    def said_language(self) -> str:
        """The language the person speaks (and the marks compare in)."""
        return self.into or ("en" if self.interpret else self.language or "en")

    def stop(self) -> None:
        """The person stops: what they said so far is scored."""
        self._stop.set()

    def cancel(self) -> None:
        self._cancel.set()
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def _on_person(self, step: object) -> None:
        """``run_capture``'s ``on_step`` for the person's recognizer."""
        self._keep_committed(step, self._committed)

    def _keep_committed(self, step: object, into: list[Word]) -> None:
        """A recognizer step's committed words appended to ``into`` (read by other threads under the lock)."""
        committed = getattr(step, "committed", None)
        if committed:
            with self._lock:
                into.extend(Word(w.text, w.start_s, w.end_s) for w in committed)

    def _person_words(self) -> list[Word]:
        with self._lock:
            return list(self._committed)

    def _marked(
        self,
        source: Sequence[Unit],
        offset_s: float | None,
        position_s: float,
        duration_s: float,
        level: float,
        open_ended: bool = False,
    ) -> PracticeSnapshot:
        """The snapshot: the person's words moved by ``offset_s`` onto the source's clock and marked on ``source``."""
        said = self._person_words()
        running = self.state is PracticeState.RUNNING
        with self._marking:  # snapshots come from the window's timer and the session's own end
            said_units = self._said_units.of(said)
            moved = (
                []
                if offset_s is None
                else [replace(u, start_s=u.start_s + offset_s, end_s=u.end_s + offset_s) for u in said_units]
            )
            marked = self._marker.mark(source, moved, position_s if running else 1e9)
        points = evs_points(marked)
        return PracticeSnapshot(
            state=self.state,
            position_s=max(position_s, 0.0),
            duration_s=duration_s,
            words=marked,
            attempt=[w.text for w in said],
            evs=points,
            last_evs_s=points[-1][1] if points else None,
            median_evs_s=running_median(points),
            level_db=level,
            pace=list(self.pace),
            open_ended=open_ended,
        )

    def _conclude(self, heard: bool, score: Callable[[], dict]) -> None:
        """The end of the session's thread: score what was heard (``heard``: the source began), unless cancelled."""
        if self._cancel.is_set():
            self.state = PracticeState.CANCELLED
        elif heard:  # what was said is scored and kept, after a device left too
            self.state = PracticeState.SCORING
            try:
                self.report = score()
            except (AsrError, OSError) as exc:
                log.warning("the attempt could not be scored: %s", exc)
                self.error = self.error or str(exc)
        elif self.error is None:
            self.error = "the source was never heard"
        if self.state is not PracticeState.CANCELLED:
            self.state = PracticeState.DONE if self.error is None else PracticeState.FAILED
        if self.error is not None:
            log.warning("practice session stopped: %s", self.error)
        self._finished.set()

    def _keep(self, report: dict, recordings: dict[str, np.ndarray]) -> None:
        """Write the recordings (file name → audio) and the report into ``record_dir``, and name them in the report."""
        if self.record_dir is None:
            return
        self.record_dir.mkdir(parents=True, exist_ok=True)
        for name, audio in recordings.items():
            sf.write(str(self.record_dir / name), audio, SAMPLE_RATE, subtype=KEPT_SUBTYPE)
        report["attempt"] = str(self.record_dir / ATTEMPT_FILE)
        (self.record_dir / REPORT_FILE).write_text(json.dumps(report, indent=1), encoding="utf-8")


def on_source_clock(recorded: np.ndarray, offset_s: float | None) -> np.ndarray:
    """A recording whose zero lies ``offset_s`` after the source's, from the source's first sample on (silence before
    it began; what it heard before the source began is cut)."""
    if offset_s is None:
        raise AsrError("the source was never heard: nothing to score")
    shift = int(round(offset_s * SAMPLE_RATE))
    if shift >= 0:
        return np.concatenate([np.zeros(shift, np.float32), recorded])
    return recorded[-shift:].copy()


def as_kept(audio: np.ndarray) -> np.ndarray:
    """``audio`` as its kept file reads back: a session scores what it keeps, so the kept files score the same
    offline. (Whisper timed a sentence's first word 0.02-0.06 s apart in a float attempt and its 16-bit copy.)"""
    buffer = io.BytesIO()
    sf.write(buffer, audio, SAMPLE_RATE, subtype=KEPT_SUBTYPE, format="WAV")
    buffer.seek(0)
    return sf.read(buffer, dtype="float32")[0]
