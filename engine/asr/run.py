"""Drive a streaming recognizer over a recording, live-paced or on the compute-aware simulated clock."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.streaming import CommittedWord, StepResult, StreamingRecognizer
from engine.audio.capture import Capture
from engine.pipeline.clock import Clock

log = logging.getLogger(__name__)

DEFAULT_MIN_STEP_S = 0.5


@dataclass
class StreamRun:
    committed: list[CommittedWord] = field(default_factory=list)
    step_compute_s: list[float] = field(default_factory=list)  # per recognizer step
    step_buffer_s: list[float] = field(default_factory=list)
    step_at_s: list[float] = field(default_factory=list)
    compute_s: float = 0.0
    audio_s: float = 0.0
    behind_s: float = 0.0


def run_stream(
    audio: np.ndarray,
    recognizer: StreamingRecognizer,
    clock: Clock,
    min_step_s: float = DEFAULT_MIN_STEP_S,
    on_step: Callable[[StepResult], None] | None = None,
) -> StreamRun:
    """Audio "arrives" at the pace of the clock (source time = clock time); each step takes all that arrived.

    On a ``SimulatedClock`` waiting is free and compute is charged, so latencies are those of a live run here.
    """
    audio = np.asarray(audio, np.float32).reshape(-1)
    total = audio.size
    run = StreamRun(audio_s=total / SAMPLE_RATE)
    fed = 0
    last_step = 0.0
    while fed < total:
        clock.sleep_until(last_step + min_step_s)  # at most one step per min_step_s; late steps start at once
        arrived = min(int(clock.now() * SAMPLE_RATE), total)
        if arrived <= fed:
            clock.sleep_until(fed / SAMPLE_RATE + min_step_s)
            continue
        last_step = clock.now()
        with clock.compute() as span:
            recognizer.insert_audio(audio[fed:arrived])
            fed = arrived
            result = recognizer.step(now_s=0.0)
        stamped = _stamp(result, clock.now())
        run.committed.extend(stamped.committed)
        run.compute_s += span.elapsed_s
        if result.recognized:
            run.step_compute_s.append(span.elapsed_s)
            run.step_buffer_s.append(recognizer.buffer_s)
            run.step_at_s.append(span.start_s)
        if on_step is not None:
            on_step(stamped)
    run.behind_s = max(clock.now() - run.audio_s, 0.0)
    with clock.compute() as span:
        result = recognizer.finish(now_s=0.0)
    stamped = _stamp(result, clock.now())
    run.committed.extend(stamped.committed)
    run.compute_s += span.elapsed_s
    if on_step is not None:
        on_step(stamped)
    return run


def _stamp(result: StepResult, now_s: float) -> StepResult:
    """Commit times are known only after the step's compute is charged."""
    return StepResult(
        committed=[CommittedWord(w.text, w.start_s, w.end_s, now_s) for w in result.committed],
        tentative=result.tentative,
        recognized=result.recognized,
    )


def run_capture(
    capture: Capture,
    recognizer: StreamingRecognizer,
    clock: Clock,
    should_stop: Callable[[], bool],
    min_step_s: float = DEFAULT_MIN_STEP_S,
    on_step: Callable[[StepResult], None] | None = None,
) -> StreamRun:
    """Live: recognize what the capture delivers until ``should_stop()``; then finish.

    Commit times are on ``clock``; word times are on the capture clock (both start when capture starts).
    """
    run = StreamRun()
    last_step = clock.now()
    while not should_stop():
        block = capture.read(timeout=0.05)
        if block is not None:
            recognizer.insert_audio(block.samples)
            run.audio_s = block.end_s
        if clock.now() - last_step < min_step_s:
            continue
        for block in capture.read_available():
            recognizer.insert_audio(block.samples)
            run.audio_s = block.end_s
        last_step = clock.now()
        with clock.compute() as span:
            result = recognizer.step(now_s=0.0)
        stamped = _stamp(result, clock.now())
        run.committed.extend(stamped.committed)
        run.compute_s += span.elapsed_s
        if result.recognized:
            run.step_compute_s.append(span.elapsed_s)
            run.step_buffer_s.append(recognizer.buffer_s)
        if on_step is not None:
            on_step(stamped)
    for block in capture.read_available():
        recognizer.insert_audio(block.samples)
        run.audio_s = block.end_s
    run.behind_s = max(clock.now() - run.audio_s, 0.0)
    with clock.compute() as span:
        result = recognizer.finish(now_s=0.0)
    stamped = _stamp(result, clock.now())
    run.committed.extend(stamped.committed)
    run.compute_s += span.elapsed_s
    if on_step is not None:
        on_step(stamped)
    return run
