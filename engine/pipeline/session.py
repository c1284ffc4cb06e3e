"""The shadowing session: audio in → streaming ASR → committed words → incremental TTS → voice out.

Three stages in their own threads with bounded queues: the ASR thread (reads the microphone or a file through the
``Intake``, steps the recognizer, hands committed words on), the TTS worker (``SynthesisWorker``), and playback
(``VoiceOutput``: a device ``Player`` watched by a monitor thread, or a computed timeline when there is no device).
The ``WordLedger`` keeps each committed word until its piece plays. Each stage has its own clock: on a
``SimulatedClock`` (a file run) waiting is free and compute is charged, so the times recorded are those a live run
would have on this machine; live, every clock is the session's wall clock.

Per word the session records the source end time, the commit time and the play start/end, so ``ear_voice_lag_s``
and ``chunk_delay_s`` are measured. ``stop()`` drains (what was heard is still spoken); ``cancel()`` stops at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.run import LongAudio, StreamRun
from engine.asr.stream_values import StepResult
from engine.asr.streaming import StreamingRecognizer
from engine.audio.played_track import PlayedTrack
from engine.audio.ports import CaptureDevice
from engine.clock import Clock, RealClock, SimulatedClock
from engine.pipeline.captions import write_captions_logged
from engine.pipeline.config import ShadowConfig
from engine.pipeline.echo import EchoPath
from engine.pipeline.intake import Intake, echo_path
from engine.pipeline.models import Models, stream_config
from engine.pipeline.pace import MachinePace
from engine.pipeline.recorder import SessionRecorder
from engine.pipeline.records import MeterSnapshot, SessionListener, State
from engine.pipeline.session_sources import Source, capture_source, recording_source, replay_source
from engine.pipeline.summary import SessionFigures
from engine.pipeline.voice_output import VoiceOutput
from engine.pipeline.voice_stage import build_voice_stage
from engine.pipeline.word_flow import FlowEnds, WordFlow
from engine.tts.learned.moves import MoveAdvisor, MoveAgent
from engine.tts.worker import SynthesisWorker

log = logging.getLogger(__name__)


class ShadowSession:
    """One session. ``run_file`` (blocking) or ``start_live`` + ``stop``/``cancel``; then ``figures.report()``."""

    def __init__(
        self,
        config: ShadowConfig,
        models: Models,
        listener: SessionListener | None = None,
        record_dir: Path | str | None = None,
        voice_track: PlayedTrack | None = None,
    ) -> None:
        """``voice_track``: where the voice's played samples are written (a simulated room hears them from it);
        a session with an echo guard makes its own."""
        self.config = config
        self.models = models
        self.record_dir = Path(record_dir) if record_dir else None
        self.recorder: SessionRecorder | None = None
        self.state = State.IDLE
        self.error: str | None = None
        self.warnings: list[str] = []
        self.figures = SessionFigures()
        self.asr_run: StreamRun | None = None
        self.voice_track = voice_track
        self.echo: EchoPath | None = None
        self.keep_heard = False  # the echo guard keeps what the recognizer heard (``EchoPath.cleaned``, a benchmark)
        beams = stream_config(config).start_beam_size > 0
        self.pace = MachinePace(config.step_s, config.hurry_below_s, adapt=config.adapt, start_beam=beams)
        # the learned policy's moves: an agent set here replaces the configured policy's (training's sampling agent)
        self.move_agent: MoveAgent | None = None
        self.advisor: MoveAdvisor | None = None
        self._cancel = threading.Event()
        language = (lambda: getattr(models.backend, "language", None)) if config.translate_from is not None else None
        listener = listener or SessionListener()
        self.flow = WordFlow(config, self.figures, listener, self.pace, self._cancel.is_set, language)
        self.intake = Intake(RealClock())
        self.output = VoiceOutput(self.flow.played)
        self._clock: Clock = RealClock()
        self._worker: SynthesisWorker | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._voice_timer: Callable[[], float] = time.perf_counter  # what the voice's compute is measured with

    # ----- public API
    def run_file(
        self, audio: np.ndarray | LongAudio, realtime: bool = False, output_device: object = None, play: bool = False
    ) -> SessionFigures:
        """Shadow a recording (16 kHz mono float32) to the end; on the simulated clock unless ``realtime``."""
        if play and not realtime:
            raise ValueError("playing on a device needs the real-time clock (--realtime)")
        if realtime and (self.config.cpu_slowdown, self.config.voice_cpu_slowdown) != (1.0, 1.0):
            raise ValueError("a CPU slowdown is simulated: it needs the simulated clock, not --realtime")
        if isinstance(audio, np.ndarray):
            audio = np.asarray(audio, np.float32).reshape(-1)
        asr_clock: Clock
        tts_clock: Clock
        if realtime:
            asr_clock = tts_clock = RealClock()
        else:
            asr_clock = SimulatedClock(compute_scale=self.config.cpu_slowdown)
            tts_clock = SimulatedClock(compute_scale=self.config.voice_cpu_slowdown)
        self._clock = asr_clock
        self._begin(tts_clock, play, output_device, echo=self.voice_track is not None, origin_s=0.0)
        source = recording_source(audio, self._recognizer, asr_clock, self.config, self.intake, self._stop.is_set)
        self._run_asr(source, asr_clock)
        self._end()
        return self.figures

    def run_steps(
        self, steps: Sequence[StepResult], audio_s: float, tts_timer: Callable[[], float] | None = None
    ) -> SessionFigures:
        """Replay a recognizer run recorded before (its steps as they ended, on the simulated clock) into the voice,
        as ``run_file`` would have spoken it: the learned policy's training runs the session's own code without the
        recognizer's cost. Before each step the voice handles what came before it, as it does live. ``tts_timer``
        measures the voice's compute (a voice that charges modelled costs gives the same replay every time)."""
        self._voice_timer = tts_timer or time.perf_counter  # the pieces' compute too (the machine's pace reads it)
        asr_clock = SimulatedClock()
        tts_clock = SimulatedClock(compute_scale=self.config.voice_cpu_slowdown, timer=self._voice_timer)
        self._clock = asr_clock
        self._begin(tts_clock, play=False, output_device=None, origin_s=0.0)
        self._run_asr(replay_source(steps, audio_s, asr_clock, self._stop.is_set, self.sync_voice), asr_clock)
        self._end()
        return self.figures

    def start_file(self, audio: np.ndarray, play: bool = True) -> None:
        """A recording paced like a microphone, spoken on the output device; returns at once (the app's file mode)."""

        def main() -> None:
            try:
                self.run_file(audio, realtime=True, output_device=self.config.output_device, play=play)
            except Exception as exc:  # e.g. the output device cannot be opened
                log.exception("the session could not run")
                self._fail(str(exc))
                self._set_state(State.FAILED)
                self._finished.set()

        threading.Thread(target=main, name="shadow-file", daemon=True).start()

    def start_live(self, capture: CaptureDevice, opened_at: float | None = None) -> None:
        """Microphone to speaker; returns at once. ``stop()`` or ``cancel()`` ends it.

        ``opened_at``: the capture was started already, at this ``time.monotonic()`` (it kept what it heard while
        the models loaded): the session's clock starts there, so what was said meanwhile is on time."""
        self._clock = clock = RealClock(origin=opened_at)
        self._begin(clock, play=True, output_device=self.config.output_device, echo=True)
        heard = self.intake.tap(capture)
        started = opened_at is not None
        source = capture_source(capture, heard, self._recognizer, clock, self.config, self._stop.is_set, started)

        def main() -> None:
            self._run_asr(source, clock)
            self._end()

        threading.Thread(target=main, name="shadow-asr", daemon=True).start()

    def stop(self) -> None:
        """Stop listening; what was already heard is still recognized and spoken (drain)."""
        if self.state == State.RUNNING:
            self._set_state(State.STOPPING)
        self._stop.set()

    def cancel(self) -> None:
        """Stop at once: pending words are dropped and playback stops."""
        self._cancel.set()
        self._stop.set()
        if self._worker is not None:
            self._worker.cancel()
        self.output.close()

    @property
    def listener(self) -> SessionListener:
        """Where the session's callbacks go (set before it starts)."""
        return self.flow.listener

    @listener.setter
    def listener(self, listener: SessionListener) -> None:
        self.flow.listener = listener

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def sync_voice(self) -> None:
        """Wait until the voice's stage has handled every command sent so far: on the simulated clock its pieces up
        to this moment are then in ``voice_track`` (a simulated room hears the voice played before now)."""
        worker = self._worker
        while worker is not None and not worker.wait_idle(timeout=0.1):
            if self._cancel.is_set():
                return

    def snapshot(self) -> MeterSnapshot:
        snap = self.flow.meters.snapshot()
        snap.state = self.state
        snap.session_s = self._clock.now()
        snap.underruns = self.figures.underruns()
        snap.time_balance_s = self.output.audio_in_hand(snap.session_s)
        snap.input_level_db = self.intake.level_db
        snap.echo_gated_s = self.echo.gated_s if self.echo is not None else 0.0
        pace = self.pace.status()
        snap.step_cost_s, snap.pace_level, snap.pace_message = pace.step_cost_s, pace.level_name, pace.message
        return snap

    # ----- stages
    def _recognizer(self) -> StreamingRecognizer:
        recognizer = self.models.recognizer(self.config)
        if self.flow.ends is not None:
            self.flow.ends.recognizer = recognizer  # the pace may shorten its buffer
        return recognizer

    def _begin(
        self,
        tts_clock: Clock,
        play: bool,
        output_device: object,
        echo: bool = False,
        origin_s: float | None = None,
    ) -> None:
        """``echo``: the input is a microphone (live, or a simulated room) and the echo guard applies to it;
        ``origin_s``: the session time of the input's zero, when known (a recording: 0); None for a live capture,
        whose other applications are lowered while the voice speaks (``ShadowConfig.duck_db``)."""
        voice = self.models.voice
        voice.rate = self.config.voice_rate
        noted = len(self.warnings)
        stage = build_voice_stage(self.config, voice, self.warnings, self.move_agent, self._voice_timer)
        for message in self.warnings[noted:]:  # learned weights that could not load: the window says so
            self.listener.on_warning(message)
        self.advisor = stage.advisor
        if echo and self.config.echo_guard != "off":  # the guard reads the voice's played samples
            self.voice_track = PlayedTrack() if self.voice_track is None else self.voice_track
            memory = getattr(self.models, "echo_memory", None)
            voice_active = self.output.active if play else None
            self.echo = echo_path(self.config, self.voice_track, voice_active, memory, self.keep_heard)
        self.output.voice_track = self.voice_track
        if play:  # before anything is written: a device that cannot open leaves no half session
            self.output.open_device(voice.sample_rate, output_device, self._clock.now)
        if self.record_dir is not None:
            try:
                self.recorder = SessionRecorder(self.record_dir, SAMPLE_RATE, voice.sample_rate)
            except Exception:
                self.output.close()
                raise
        self.output.recorder = self.recorder
        duck_db = self.config.duck_db if origin_s is None else 0.0
        self.intake = Intake(self._clock, self.recorder, self.echo, self.output.poll, origin_s, duck_db)
        self._worker = worker = SynthesisWorker(
            stage.synthesizer,
            self.flow.piece,
            self._on_tts_error,
            clock=tts_clock,
            audio_in_hand=self.output.audio_in_hand,
            hurry_below_s=self.config.hurry_below_s,
            driver=stage.driver,
            advisor=stage.advisor,
        )
        self.flow.ends = FlowEnds(self.intake, worker, stage, self.output, self._clock, self.recorder)
        if not self.output.computed:
            self.output.start_monitor(self._clock, self._watched, self._playback_failed, self._cancel.is_set)
        self.figures.config = {
            **asdict(self.config),
            "voice_sample_rate": voice.sample_rate,
            "tts_policy_used": stage.policy_used,
        }
        self._set_state(State.RUNNING)

    def _run_asr(self, source: Source, clock: Clock) -> None:
        try:
            self.asr_run = source(self.flow.step)
        except Exception as exc:  # a model that failed: keep what we have
            log.exception("the recognizer stopped")
            self._fail(f"recognition stopped: {exc}")
        if self.asr_run is not None and self.asr_run.device_error is not None:
            log.error("the microphone went away: %s", self.asr_run.device_error)
            self._fail(f"recognition stopped: {self.asr_run.device_error}")
        if not self._cancel.is_set() and self._worker is not None:
            self._worker.flush(at_s=clock.now())  # the words committed so far are spoken, after an error too

    def _end(self) -> None:
        """Wait for synthesis and playback to finish (or for a cancel), then close everything."""
        try:
            worker = self._worker
            if worker is not None:
                while not worker.wait_idle(timeout=0.1):
                    if self._cancel.is_set():
                        break
                worker.close()
            self.output.drain(self._cancel.is_set)
            self._stop.set()
            self.output.finish()
        finally:
            self.intake.close()  # the other applications are heard at their own volume again
            # the voice is the loaded models', shared with the next session and "Test speaker": not left catching up
            self.models.voice.rate = self.config.voice_rate
            if self.echo is not None:
                self.echo.remember()
            echo = self.echo.report() if self.echo is not None else None
            self.figures.close(self.asr_run, self.pace.report(), echo, self.error)
            if self.recorder is not None:
                self.recorder.report(self.figures.report())
                self.recorder.close()
                write_captions_logged(self.recorder.folder)
            if self.error is not None:
                self._set_state(State.FAILED)
            else:
                self._set_state(State.CANCELLED if self._cancel.is_set() else State.DONE)
            self._finished.set()

    # ----- callbacks (engine threads)
    def _watched(self, now_s: float) -> None:
        """Live, each time the playback monitor looks: other applications lowered while the voice speaks."""
        self.intake.voice_playing(self.output.active(now_s))

    def _playback_failed(self, exc: Exception) -> None:
        self._fail(f"playback stopped: {exc}")
        self.cancel()

    def _on_tts_error(self, exc: BaseException) -> None:
        if not self._cancel.is_set():  # a cancel may interrupt a piece on its way to the closed player
            self._fail(f"speech synthesis failed: {exc}")

    def _fail(self, message: str) -> None:
        """Stop on an error: the window says so at once; what was heard is still spoken unless the cause also
        silenced the voice; the state is ``FAILED`` once the session has ended and its report is written. The first
        error is the session's; what follows from it (the other device of an unplugged headset) is only logged."""
        with self._lock:
            first = self.error is None
            if first:
                self.error = message
        if not first:
            log.warning("after the session failed: %s", message)
            return
        self.listener.on_error(message)
        if self.state == State.RUNNING:
            self._set_state(State.STOPPING)
        self._stop.set()

    def _set_state(self, state: State) -> None:
        if self.state == State.FAILED and state != State.FAILED:
            return
        self.state = state
        self.listener.on_state(state)
