"""The three ways a session hears: a recording (on the simulated clock, or paced in real time), a recognizer run
recorded before (its steps replayed into the voice), and a live capture. Each is a ``Source``: given the callback
for each recognizer step, it runs the recognizer to the end and returns the run."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from engine.asr.run import LongAudio, StreamRun, run_capture, run_stream
from engine.asr.stream_values import StepResult
from engine.asr.streaming import StreamingRecognizer
from engine.audio.ports import BlockSource, CaptureDevice
from engine.clock import Clock, SimulatedClock
from engine.pipeline.config import ShadowConfig
from engine.pipeline.intake import Intake

Source = Callable[[Callable[[StepResult], None]], StreamRun]


def recording_source(
    audio: np.ndarray | LongAudio,
    recognizer: Callable[[], StreamingRecognizer],
    clock: Clock,
    config: ShadowConfig,
    intake: Intake,
    should_stop: Callable[[], bool],
) -> Source:
    """A recording through ``intake`` (and its echo guard, if any), a step every ``config.step_s`` on ``clock``."""

    def source(on_step: Callable[[StepResult], None]) -> StreamRun:
        return run_stream(
            audio,
            recognizer(),
            clock,
            config.step_s,
            on_step,
            should_stop=should_stop,
            on_audio=intake.heard_file,
            keep_words=False,
            phase_s=config.step_phase_s,
            process_audio=intake.guard_file if intake.echo is not None else None,
        )

    return source


def replay_source(
    steps: Sequence[StepResult],
    audio_s: float,
    clock: SimulatedClock,
    should_stop: Callable[[], bool],
    before_step: Callable[[], None],
) -> Source:
    """The steps of a recognizer run, each at its time on ``clock``; ``before_step`` lets the voice catch up."""

    def source(on_step: Callable[[StepResult], None]) -> StreamRun:
        run = StreamRun(audio_s=audio_s, keep_words=False)
        for step in steps:
            if should_stop():
                break
            before_step()
            if step.at_s is not None:
                clock.sleep_until(step.at_s)
            on_step(step)
        return run

    return source


def capture_source(
    capture: CaptureDevice,
    heard: BlockSource,
    recognizer: Callable[[], StreamingRecognizer],
    clock: Clock,
    config: ShadowConfig,
    should_stop: Callable[[], bool],
    started: bool = False,
) -> Source:
    """``capture`` (started here unless ``started``, stopped at the end) read as ``heard`` (through the intake)."""

    def source(on_step: Callable[[StepResult], None]) -> StreamRun:
        if not started:
            capture.start()
        try:
            return run_capture(heard, recognizer(), clock, should_stop, config.step_s, on_step, keep_words=False)
        finally:
            capture.stop()

    return source
