"""Drive a streaming recognizer over a recording, live-paced or on the compute-aware simulated clock."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from engine.asr.backend import SAMPLE_RATE, AsrBackend
from engine.asr.commit import make_commit_policy
from engine.asr.second_pass import SecondPass
from engine.asr.stream_values import CommittedWord, StepResult
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.audio.devices import AudioDeviceError
from engine.audio.ports import BlockSource
from engine.clock import Clock, SimulatedClock

log = logging.getLogger(__name__)

DEFAULT_MIN_STEP_S = 0.5


class LongAudio(Protocol):
    """16 kHz mono audio read by slices (e.g. recordings joined on the fly for a soak test)."""

    @property
    def size(self) -> int: ...

    def __getitem__(self, index: slice) -> np.ndarray: ...


MAX_STEPS = 300_000  # per-step figures stop growing past this (about 25 hours of 0.3 s steps)


@dataclass
class StreamRun:
    committed: list[CommittedWord] = field(default_factory=list)  # every committed word, when ``keep_words``
    step_compute_s: list[float] = field(default_factory=list)  # per recognizer step
    step_buffer_s: list[float] = field(default_factory=list)
    step_at_s: list[float] = field(default_factory=list)  # when each of those steps ended (driver's clock)
    compute_s: float = 0.0
    audio_s: float = 0.0
    behind_s: float = 0.0
    last_step_compute_s: float = 0.0  # the step that took in the end of the audio
    forced_words: int = 0  # committed because they were held longer than the recognizer's bound
    unspoken_words: int = 0  # dropped as not said (outside speech, or a phrase Whisper writes on silence)
    failed_decodes: int = 0  # steps whose decode was too unsure to use (its words waited for a later step)
    pause_words: int = 0  # committed at a pause in the speech before the policy agreed on them
    dropped_audio_s: float = 0.0  # audio the recognizer's buffer cap threw away (0 in a healthy session)
    unrecognized_audio_s: float = 0.0  # audio cut because no word came from it (noise the VAD took for speech)
    keep_words: bool = True  # a session keeps its own (bounded) records instead
    device_error: str | None = None  # live: the input device went away; what it had delivered was still finished

    def steps_behind(self, min_step_s: float = 0.5) -> float:
        """``behind_s`` in steps (interval + that step's compute): at most 1 means the recognizer kept up."""
        return self.behind_s / (min_step_s + self.last_step_compute_s)


def run_stream(
    audio: np.ndarray | LongAudio,
    recognizer: StreamingRecognizer,
    clock: Clock,
    min_step_s: float = DEFAULT_MIN_STEP_S,
    on_step: Callable[[StepResult], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_audio: Callable[[np.ndarray], None] | None = None,
    keep_words: bool = True,
    phase_s: float = 0.0,
    process_audio: Callable[[np.ndarray], np.ndarray] | None = None,
    second_pass: SecondPass | None = None,
) -> StreamRun:
    """Audio "arrives" at the pace of the clock (source time = clock time); each step takes all that arrived.

    On a ``SimulatedClock`` waiting is free and compute is charged, so latencies are those of a live run here.
    ``should_stop()`` ends the input early (what arrived is still finished); ``on_audio`` sees each intake.
    ``phase_s``: the first step comes this much after ``min_step_s``, and so do the steps after it while they cost
    less than the step period: where the steps meet the speech, which a live speaker sets at random.
    ``process_audio`` (an echo guard) turns each intake into what the recognizer hears, charged to its step.
    ``second_pass`` gets every committed word and decodes each step's audio again (``asr.second_pass``).
    """
    if isinstance(audio, np.ndarray):
        audio = np.asarray(audio, np.float32).reshape(-1)
    total = audio.size  # anything with ``size`` and slicing will do: a long source need not be in memory
    run = StreamRun(audio_s=total / SAMPLE_RATE, keep_words=keep_words)
    fed = 0
    last_step = phase_s
    while fed < total and not (should_stop is not None and should_stop()):
        clock.sleep_until(last_step + min_step_s)  # at most one step per min_step_s; late steps start at once
        arrived = min(int(clock.now() * SAMPLE_RATE), total)
        if arrived <= fed:
            clock.sleep_until(fed / SAMPLE_RATE + min_step_s)
            continue
        last_step = clock.now()
        new_audio, fed = audio[fed:arrived], arrived
        if on_audio is not None:
            on_audio(new_audio)
        _step(run, recognizer, clock, on_step, new_audio, process_audio, second_pass)  # intake charged to the step
    run.audio_s = fed / SAMPLE_RATE
    _finish(run, recognizer, clock, on_step, second_pass)
    return run


def run_policy(
    audio: np.ndarray,
    backend: AsrBackend,
    vad: SileroVad,
    policy: str = "la2",
    on_step: Callable[[StepResult], None] | None = None,
    second_pass: SecondPass | None = None,
) -> StreamRun:
    """``audio`` through a fresh recognizer with the commit ``policy`` (default settings) on ``backend`` and
    ``vad`` (reset first), on a compute-aware clock of its own: a benchmark's streaming run of one recording."""
    vad.reset()
    recognizer = StreamingRecognizer(backend, make_commit_policy(policy), vad)
    return run_stream(audio, recognizer, SimulatedClock(), on_step=on_step, second_pass=second_pass)


def _step(
    run: StreamRun,
    recognizer: StreamingRecognizer,
    clock: Clock,
    on_step: Callable[[StepResult], None] | None,
    new_audio: np.ndarray | None = None,
    process_audio: Callable[[np.ndarray], np.ndarray] | None = None,
    second_pass: SecondPass | None = None,
) -> None:
    """One recognizer step on the clock, recorded in ``run``."""
    with clock.compute() as span:
        if new_audio is not None and process_audio is not None:
            new_audio = process_audio(new_audio)
        if new_audio is not None:
            recognizer.insert_audio(new_audio)
        result = recognizer.step(now_s=0.0)
    run.last_step_compute_s = span.elapsed_s
    run.dropped_audio_s = recognizer.dropped_audio_s
    run.unrecognized_audio_s = recognizer.unrecognized_audio_s
    if result.recognized and len(run.step_at_s) < MAX_STEPS:
        run.step_compute_s.append(span.elapsed_s)
        run.step_buffer_s.append(recognizer.buffer_s)
        run.step_at_s.append(clock.now())
    stamped = _record(run, result, span.elapsed_s, clock, on_step)
    _second_pass(second_pass, recognizer, stamped)


def _second_pass(second_pass: SecondPass | None, recognizer: StreamingRecognizer, stamped: StepResult) -> None:
    """The step's committed words (as ``_record`` stamped them) to the second pass, which then decodes the step's
    audio again."""
    if second_pass is None:
        return
    second_pass.add(stamped.committed)
    if recognizer.last_heard is not None and stamped.at_s is not None:
        audio, offset_s = recognizer.last_heard
        second_pass.revise(audio, offset_s, stamped.at_s)


def _finish(
    run: StreamRun,
    recognizer: StreamingRecognizer,
    clock: Clock,
    on_step: Callable[[StepResult], None] | None,
    second_pass: SecondPass | None = None,
) -> None:
    """The input ended: note how far behind the clock is, then commit the rest."""
    run.behind_s = max(clock.now() - run.audio_s, 0.0)
    with clock.compute() as span:
        result = recognizer.finish(now_s=0.0)
    run.dropped_audio_s = recognizer.dropped_audio_s
    run.unrecognized_audio_s = recognizer.unrecognized_audio_s
    stamped = _record(run, result, span.elapsed_s, clock, on_step)
    _second_pass(second_pass, recognizer, stamped)


def _record(
    run: StreamRun,
    result: StepResult,
    compute_s: float,
    clock: Clock,
    on_step: Callable[[StepResult], None] | None,
) -> StepResult:
    """Commit times are known only after the step's compute is charged: stamp them now, then keep the step (and
    return it as stamped)."""
    now = clock.now()
    stamped = replace(
        result, committed=[replace(w, commit_s=now) for w in result.committed], at_s=now, compute_s=compute_s
    )
    if run.keep_words:
        run.committed.extend(stamped.committed)
    run.forced_words += result.forced
    run.unspoken_words += result.unspoken
    run.failed_decodes += result.failed_decode
    run.pause_words += result.at_pause
    run.compute_s += compute_s
    if on_step is not None:
        on_step(stamped)
    return stamped


def run_capture(
    capture: BlockSource,
    recognizer: StreamingRecognizer,
    clock: Clock,
    should_stop: Callable[[], bool],
    min_step_s: float = DEFAULT_MIN_STEP_S,
    on_step: Callable[[StepResult], None] | None = None,
    keep_words: bool = True,
) -> StreamRun:
    """Live: recognize what the capture delivers until ``should_stop()`` or until the device goes away (said in
    ``device_error``); then finish, so what was heard before is still committed.

    Commit times are on ``clock``; word times are on the capture clock (both start when capture starts).
    """
    run = StreamRun(keep_words=keep_words)
    last_step = clock.now()
    while not should_stop():
        block = capture.read(timeout=0.05)
        if block is not None:
            recognizer.insert_audio(block.samples)
            run.audio_s = block.end_s
        else:
            try:
                capture.check()  # a device that went away is found here instead of leaving the session silent
            except AudioDeviceError as exc:
                run.device_error = str(exc)
                break
        if clock.now() - last_step < min_step_s:
            continue
        for block in capture.read_available():
            recognizer.insert_audio(block.samples)
            run.audio_s = block.end_s
        last_step = clock.now()
        _step(run, recognizer, clock, on_step)
    for block in capture.read_available():
        recognizer.insert_audio(block.samples)
        run.audio_s = block.end_s
    _finish(run, recognizer, clock, on_step)
    return run
