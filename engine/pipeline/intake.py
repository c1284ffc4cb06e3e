"""What the recognizer hears: the microphone's blocks (or a recording's samples) recorded, metered, through the
echo guard, with other applications' ducking undone, and on the session's clock."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.audio.block import AudioBlock
from engine.audio.device_check import level_db
from engine.audio.played_track import PlayedTrack
from engine.audio.ports import BlockSource
from engine.clock import Clock
from engine.pipeline.config import ShadowConfig
from engine.pipeline.echo import EchoMemory, EchoPath
from engine.pipeline.recorder import SessionRecorder

if TYPE_CHECKING:
    from engine.audio.ducker import Ducker

log = logging.getLogger(__name__)

SILENT_DB = -120.0


class Intake:
    """The session's input side, from the thread that reads the capture (or the recording).

    ``origin_s``: the session time of the capture clock's zero (0 for a recording). ``level_db``: the input level
    of the last block. ``poll_output`` brings the voice's played track up to date before the echo guard reads it
    (live: the device reports what it played only when polled). ``duck_db``: live, the other applications are
    lowered by this much while the voice speaks, and their capture raised back as much."""

    def __init__(
        self,
        clock: Clock,
        recorder: SessionRecorder | None = None,
        echo: EchoPath | None = None,
        poll_output: Callable[[], object] | None = None,
        origin_s: float | None = None,
        duck_db: float = 0.0,
    ) -> None:
        self.clock = clock
        self.recorder = recorder
        self.echo = echo
        self.ducker: Ducker | None = None
        if duck_db > 0:  # live: the sound server's other streams (imported only then)
            from engine.audio.ducker import Ducker

            self.ducker = Ducker(duck_db, clock=clock.now)
        self.poll_output = poll_output
        self.origin_s = origin_s
        self.level_db = SILENT_DB
        self._file_fed = 0  # samples of a recording taken in so far (their session time, for the echo guard)
        self._echo_out = 0  # samples the live echo guard has handed on (their capture-clock time)

    def tap(self, capture: BlockSource) -> IntakeTap:
        """``capture`` as the recognizer reads it: every block through ``heard_block``."""
        return IntakeTap(capture, self)

    def heard_file(self, samples: np.ndarray) -> None:
        """A recording's next samples, as the recognizer takes them in."""
        if self.recorder is not None:
            self.recorder.input_audio(samples)
        self._meter(samples)

    def guard_file(self, samples: np.ndarray) -> np.ndarray:
        """A recording's intake through the echo guard (on the recognizer's clock: its compute is charged)."""
        assert self.echo is not None
        start, self._file_fed = self._file_fed, self._file_fed + samples.size
        return self.echo.process(samples, start / SAMPLE_RATE)

    def heard_block(self, block: AudioBlock) -> AudioBlock:
        """A captured block as the recognizer hears it."""
        # The capture clock's zero on the session clock. A block arrives after it was recorded, never before, so
        # the earliest of (arrival − end on the capture clock) is the best estimate; the first blocks alone can
        # mislead (a stream may deliver a backlog in a burst when it starts).
        candidate = max(self.clock.now() - block.end_s, 0.0)
        if self.origin_s is None or candidate < self.origin_s:
            self.origin_s = candidate
        if self.recorder is not None:
            self.recorder.input_audio(block.samples)
        self._meter(block.samples)
        echo = self.echo
        if echo is None:
            return self._unduck(block)
        if echo.gate is not None:
            return self._unduck(echo.gate.apply(block, self.clock.now()))
        if self.poll_output is not None:
            self.poll_output()
        samples = echo.process(block.samples, (self.origin_s or 0.0) + block.start_s, block.sample_rate)
        out = AudioBlock(samples, block.sample_rate, self._echo_out / block.sample_rate)
        self._echo_out += samples.size
        return self._unduck(out)

    def voice_playing(self, active: bool) -> None:
        """Live, from the playback monitor: the other applications are lowered while the voice speaks."""
        if self.ducker is not None:
            self.ducker.set(active)

    def close(self) -> None:
        """The other applications are heard at their own volume again."""
        if self.ducker is not None:
            self.ducker.close()

    def _unduck(self, block: AudioBlock) -> AudioBlock:
        """A capture of the other applications, lowered while the voice spoke, raised back as much (after the echo
        guard: the voice itself was not lowered): the recognizer hears the speaker at one level."""
        ducker = self.ducker
        if ducker is None or not ducker.times_ducked:
            return block
        samples = ducker.raise_back(block.samples, (self.origin_s or 0.0) + block.start_s, block.sample_rate)
        return block if samples is block.samples else AudioBlock(samples, block.sample_rate, block.start_s)

    def _meter(self, samples: np.ndarray) -> None:
        if samples.size:
            self.level_db = level_db(samples)


class IntakeTap:
    """A capture whose blocks pass through the intake on their way to the recognizer (``run_capture`` reads it)."""

    def __init__(self, capture: BlockSource, intake: Intake) -> None:
        self.capture = capture
        self.intake = intake

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        block = self.capture.read(timeout=timeout)
        return None if block is None else self.intake.heard_block(block)

    def read_available(self) -> list[AudioBlock]:
        return [self.intake.heard_block(block) for block in self.capture.read_available()]

    def check(self) -> None:
        self.capture.check()


def echo_path(
    config: ShadowConfig,
    voice_track: PlayedTrack,
    voice_active: Callable[[float], bool] | None = None,
    memory: EchoMemory | None = None,
    keep_heard: bool = False,
) -> EchoPath:
    """The configured echo guard on ``voice_track`` (the voice's played samples). ``voice_active`` (live: voice
    still queued on the device) tells the gate the voice plays; ``keep_heard`` keeps what the recognizer heard
    (``EchoPath.cleaned``, a benchmark)."""
    echo = EchoPath(
        config.echo_guard,
        voice_track,
        config.echo_hint_ms / 1000,
        config.noise_suppression,
        voice_active=voice_active,
        method=config.echo_canceller,
        path=config.echo_path,
        memory=memory,
        route=(config.input_device, config.output_device),
    )
    if keep_heard:
        echo.cleaned = []
    return echo
