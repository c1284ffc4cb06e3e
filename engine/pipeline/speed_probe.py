"""How fast the machine is right now: the same fixed work timed before and after a benchmark run.

Two runs of the same code on the same 2-core VM can differ twofold in underruns when the machine itself has slowed
(another tenant, the CPU's clock). A benchmark report that carries this probe
says whether two runs ran on a machine of the same speed, so that only such runs are compared, and shows a machine
that slowed down during a run (``after`` against ``before``).

The probe times, in wall time, with the session's own models: one recognizer step on a fixed recording (the voice
saying a fixed sentence twice, 16 kHz), and the voice making that sentence as one piece (both stages). Each alone
(a median of ``ROUNDS``), then both at once on the two threads a session uses, which is how a session runs them:
the two compete for the cores' caches and memory bandwidth (in a session the voice's compute is about twice its
compute alone).
"""

from __future__ import annotations

import logging
import os
import statistics
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import numpy as np

from engine.audio.resample import resample
from engine.pipeline.models import Models
from engine.tts.frontend import FrontEnd

log = logging.getLogger(__name__)

PROBE_TEXT = "The quick brown fox jumps over the lazy dog."
# Timed rounds of each part, after one round to warm up. On the 2-core VMs one recognizer step varies up to 2x
# between rounds a second apart, so the probe keeps the median (the machine as the run found it) and the fastest
# round (the CPU itself).
ROUNDS = 9
# fewer rounds when set (the test suite's benchmarks: there the probe is timed, not read)
ENV_ROUNDS = "LIVESHADOW_PROBE_ROUNDS"
RECOGNIZER_SAMPLE_RATE = 16000


def default_rounds() -> int:
    value = os.environ.get(ENV_ROUNDS, "")
    return max(int(value), 1) if value.isdigit() else ROUNDS


@dataclass(frozen=True)
class SpeedProbe:
    """Medians (``_min_s``: the fastest round) in wall seconds, not charged with ``--cpu-slowdown``;
    ``voice_audio_s``: what the voice's piece lasts, ``recording_s``: what the recognizer's step hears."""

    recognizer_s: float
    recognizer_min_s: float
    voice_s: float
    voice_min_s: float
    recognizer_beside_voice_s: float
    voice_beside_recognizer_s: float
    recording_s: float
    voice_audio_s: float
    at: str  # UTC, ISO 8601

    def as_dict(self) -> dict[str, float | str]:
        return asdict(self)


class _ProbeWork:
    """The two fixed pieces of work on one voice and one recognizer, prepared (and warmed up) once."""

    def __init__(self, models: Models) -> None:
        self.voice, self.backend = models.voice, models.backend
        front = FrontEnd(self.voice.config)
        self.ids = np.asarray(front.text_ids(PROBE_TEXT), np.int64)
        audio = self.voice_piece()
        self.voice_audio_s = audio.size / self.voice.sample_rate
        spoken = resample(audio, self.voice.sample_rate, RECOGNIZER_SAMPLE_RATE).astype(np.float32)
        pause = np.zeros(RECOGNIZER_SAMPLE_RATE // 2, np.float32)
        self.recording = np.concatenate([spoken, pause, spoken])
        self.recognizer_step()  # warm up

    def voice_piece(self) -> np.ndarray:
        latent, _ = self.voice.stage1(self.ids)
        return self.voice.stage2(latent)

    def recognizer_step(self) -> None:
        self.backend.transcribe(self.recording)


# per set of models: a benchmark probes before and after each run, a repeated one between runs
_prepared: weakref.WeakKeyDictionary[Models, _ProbeWork] = weakref.WeakKeyDictionary()


def _probe_work(models: Models) -> _ProbeWork:
    work = _prepared.get(models)
    if work is None:
        work = _prepared[models] = _ProbeWork(models)
    return work


def _timed(work: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return times


def _side_by_side(first: Callable[[], object], second: Callable[[], object], rounds: int) -> tuple[float, float]:
    """Both works in a loop on two threads until each has run ``rounds`` times; the one that is done first goes on
    working (untimed) until the other is done too, so every timed round ran beside the other work."""
    works = (first, second)
    times: tuple[list[float], list[float]] = ([], [])
    stop = threading.Event()
    errors: list[BaseException] = []

    def loop(index: int) -> None:
        try:
            while not stop.is_set() and min(len(t) for t in times) < rounds:
                start = time.perf_counter()
                works[index]()
                if len(times[index]) < rounds:
                    times[index].append(time.perf_counter() - start)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return statistics.median(times[0]), statistics.median(times[1])


def probe_speed(models: Models, rounds: int | None = None) -> SpeedProbe:
    """Time the fixed work on ``models`` (which no session may be using). The recognizer's language is set to
    English for the probe and put back after it."""
    rounds = rounds or default_rounds()
    backend = models.backend
    configured = getattr(backend, "configured_language", None)
    set_language = getattr(backend, "set_language", None)
    if set_language is not None:
        set_language("en")
    try:
        work = _probe_work(models)
        recognizer = _timed(work.recognizer_step, rounds)
        voice = _timed(work.voice_piece, rounds)
        recognizer_beside, voice_beside = _side_by_side(work.recognizer_step, work.voice_piece, rounds)
    finally:
        if set_language is not None:
            set_language(configured)
    probe = SpeedProbe(
        recognizer_s=statistics.median(recognizer),
        recognizer_min_s=min(recognizer),
        voice_s=statistics.median(voice),
        voice_min_s=min(voice),
        recognizer_beside_voice_s=recognizer_beside,
        voice_beside_recognizer_s=voice_beside,
        recording_s=work.recording.size / RECOGNIZER_SAMPLE_RATE,
        voice_audio_s=work.voice_audio_s,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    log.info("speed probe: %s", probe)
    return probe


def announced_probe(
    models: Models, when: str, progress: Callable[[str], None] | None = None, rounds: int | None = None
) -> dict:
    """``probe_speed`` as a report keeps it, saying first that it runs (``when``: "before" or "after")."""
    if progress:
        progress(f"timing the machine {when} the run (speed probe)")
    return probe_speed(models, rounds).as_dict()


def run_probed(
    models: Models,
    run: Callable[[], dict],
    progress: Callable[[str], None] | None = None,
    rounds: int | None = None,
    before: dict | None = None,
) -> dict:
    """``run()``'s report with ``speed_probe``: the probe just before it and just after it. ``before``: a probe
    taken just now (a repeated benchmark's previous run's ``after``, nothing run since), kept instead of probing
    again."""
    before = before or announced_probe(models, "before", progress, rounds)
    report = run()
    report["speed_probe"] = {"before": before, "after": announced_probe(models, "after", progress, rounds)}
    return report


def probe_after(report: dict | None) -> dict | None:
    """The probe taken just after ``report``'s run (the next run's ``before``), None for no report or no probe."""
    return ((report or {}).get("speed_probe") or {}).get("after")


def probe_figure(key: str) -> Callable[[dict], float | None]:
    """Reads ``key`` of a report's probe before the run (for ``engine.metrics.repeats.Figure``)."""
    return lambda report: (report.get("speed_probe") or {}).get("before", {}).get(key)


def probe_text(report: dict) -> str:
    """One line for a report: each figure before and after the run (wall time)."""
    probe = report.get("speed_probe") or {}
    before, after = probe.get("before"), probe.get("after")
    if not before:
        return "machine speed: not probed"

    def pair(key: str) -> str:
        first = f"{before[key]:.3f}"
        return f"{first} -> {after[key]:.3f} s" if after else f"{first} s"

    return (
        f"machine speed (wall time, medians before -> after the run; fastest in brackets): recognizer step on "
        f"{before['recording_s']:.1f} s {pair('recognizer_s')} ({pair('recognizer_min_s')}), voice piece of "
        f"{before['voice_audio_s']:.1f} s {pair('voice_s')} ({pair('voice_min_s')}); side by side: recognizer "
        f"{pair('recognizer_beside_voice_s')}, voice {pair('voice_beside_recognizer_s')}"
    )
