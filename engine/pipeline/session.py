"""The shadowing session: audio in → streaming ASR → committed words → incremental TTS → voice out.

Three stages in their own threads with bounded queues: the ASR thread (reads the microphone or a file, steps the
recognizer, hands committed words on), the TTS worker (``SynthesisWorker``), and playback (a device ``Player``
watched by a monitor thread, or a computed ``PlaybackTimeline`` when there is no device). Each stage has its own
clock: on a ``SimulatedClock`` (a file run) waiting is free and compute is charged, so the times recorded are
those a live run would have on this machine; live, every clock is the session's wall clock.

Per word the session records the source end time, the commit time and the play start/end, so ``ear_voice_lag_s``
and ``chunk_delay_s`` are measured. ``stop()`` drains (what was heard is still spoken); ``cancel()`` stops at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.english_guard import EnglishGuard
from engine.asr.run import LongAudio, StreamRun, run_capture, run_stream
from engine.asr.streaming import StepResult, StreamingRecognizer
from engine.audio.block import AudioBlock
from engine.audio.device_check import level_db
from engine.audio.played_track import PlayedTrack
from engine.audio.resample import StreamResampler
from engine.clock import Clock, RealClock, SimulatedClock
from engine.metrics import names as m
from engine.pipeline.captions import write_captions
from engine.pipeline.config import ShadowConfig
from engine.pipeline.echo import EchoPath
from engine.pipeline.memory import MemoryTrimmer
from engine.pipeline.models import Models, stream_config
from engine.pipeline.pace import INTERPRET_CATCH_UP, SHADOW_CATCH_UP, MachinePace, SpeakerTempo, catch_up_rate
from engine.pipeline.recorder import SessionRecorder
from engine.pipeline.records import MeterSnapshot, SessionListener, State, WordRecord
from engine.pipeline.summary import SessionFigures
from engine.tts.chunker import ChunkSizes
from engine.tts.keys import SentenceKeys, fed_tokens
from engine.tts.learned.agent import is_move_agent, voice_policy
from engine.tts.learned.driver import ReadSpeakDriver
from engine.tts.learned.moves import MoveAdvisor, MoveAgent
from engine.tts.pieces import AudioPiece
from engine.tts.policies import LookaheadPolicy
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.timeline import PlaybackTimeline
from engine.tts.worker import SynthesisWorker

log = logging.getLogger(__name__)

MONITOR_INTERVAL_S = 0.05
OUTPUT_JUMP_S = 0.005  # a played block this far from where the last one ended starts the voice's track anew


class _Tap:
    """Wraps a capture: records the input, measures its level and applies the echo gate, then hands blocks on."""

    def __init__(self, capture, session: ShadowSession) -> None:  # noqa: ANN001 - a Capture or a test double
        self.capture = capture
        self.session = session

    def _seen(self, block: AudioBlock | None) -> AudioBlock | None:
        if block is None:
            return None
        return self.session._heard_block(block)

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        return self._seen(self.capture.read(timeout=timeout))

    def read_available(self) -> list[AudioBlock]:
        return [b for b in (self._seen(x) for x in self.capture.read_available()) if b is not None]

    def check(self) -> None:
        self.capture.check()


@dataclass
class _OutputStream:
    """The device's output as it goes into the voice's track: one resampler and where its output started."""

    resampler: StreamResampler
    anchor_s: float
    written: int = 0
    next_s: float = 0.0


@dataclass
class _Sink:
    """Where pieces go: a device player (live) or a computed timeline (no device)."""

    timeline: PlaybackTimeline = field(default_factory=lambda: PlaybackTimeline(keep=False))
    player: object | None = None  # engine.audio.player.Player
    pending: dict[int, tuple[AudioPiece, float, float]] = field(default_factory=dict)  # id → piece, ready, inputs


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
        self.listener = listener or SessionListener()
        self.record_dir = Path(record_dir) if record_dir else None
        self.recorder: SessionRecorder | None = None
        self.state = State.IDLE
        self.error: str | None = None
        self.warnings: list[str] = []
        self.pieces: list[AudioPiece] | None = None  # a list here keeps every piece made (a file run's voice quality)
        self.figures = SessionFigures()
        self.asr_run: StreamRun | None = None
        self._keys = SentenceKeys()
        self._last_hint: list[str] = []
        self._records: dict[tuple[int, int], WordRecord] = {}  # committed, not yet spoken
        self._unmatched_warned = False
        self._tempo = SpeakerTempo()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._playback_done = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sink = _Sink()
        self._snapshot = MeterSnapshot()
        self._piece_ids = 0
        self._clock: Clock = RealClock()
        self._source_origin_s: float | None = None  # session time of the capture clock's zero
        self.voice_track = voice_track
        self._out: _OutputStream | None = None  # live: the device's output on its way into ``voice_track``
        self._ducker = None  # engine.audio.sound_server.Ducker: other streams lowered while the voice speaks
        self.echo: EchoPath | None = None
        self.keep_heard = False  # the echo guard keeps what the recognizer heard (``EchoPath.cleaned``, a benchmark)
        self._file_fed = 0  # samples of a recording taken in so far (their session time, for the echo guard)
        self._echo_out = 0  # samples the live echo guard has handed on (their capture-clock time)
        self._worker: SynthesisWorker | None = None
        self.trimmer = MemoryTrimmer()  # called from the recognizer's thread, between its steps
        self.pace = MachinePace(config.step_s, config.hurry_below_s, adapt=config.adapt,
                                start_beam=stream_config(config).start_beam_size > 0)  # fmt: skip
        self._asr: StreamingRecognizer | None = None
        self._synthesizer: IncrementalSynthesizer | None = None
        # the learned policy's moves: an agent set here replaces the configured policy's (training's sampling agent)
        self.move_agent: MoveAgent | None = None
        self.advisor: MoveAdvisor | None = None
        self._voice_timer: Callable[[], float] = time.perf_counter  # what the voice's compute is measured with
        # interpreting: committed words that are not English are not spoken (``english_guard``)
        self._guard = EnglishGuard() if config.translate_from is not None else None

    # ----- public API
    def run_file(self, audio: np.ndarray | LongAudio, realtime: bool = False, output_device: object = None,
                 play: bool = False) -> SessionFigures:  # fmt: skip
        """Shadow a recording (16 kHz mono float32) to the end; on the simulated clock unless ``realtime``."""
        if play and not realtime:
            raise ValueError("playing on a device needs the real-time clock (--realtime)")
        if realtime and (self.config.cpu_slowdown, self.config.voice_cpu_slowdown) != (1.0, 1.0):
            raise ValueError("a CPU slowdown is simulated: it needs the simulated clock, not --realtime")
        if isinstance(audio, np.ndarray):
            audio = np.asarray(audio, np.float32).reshape(-1)
        asr_clock: Clock
        if realtime:
            asr_clock = tts_clock = self._clock = RealClock()
        else:
            asr_clock = SimulatedClock(compute_scale=self.config.cpu_slowdown)
            tts_clock = SimulatedClock(compute_scale=self.config.voice_cpu_slowdown)
            self._clock = asr_clock
        self._source_origin_s = 0.0
        self._begin(tts_clock, play, output_device, echo=self.voice_track is not None)

        def source(on_step: Callable[[StepResult], None]) -> StreamRun:
            return run_stream(audio, self._recognizer(), asr_clock, self.config.step_s, on_step,
                              should_stop=self._stop.is_set, on_audio=self._heard_file,
                              keep_words=False, phase_s=self.config.step_phase_s,
                              process_audio=self._guard_file if self.echo is not None else None)  # fmt: skip

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
        self._source_origin_s = 0.0
        self._begin(tts_clock, play=False, output_device=None)

        def source(on_step: Callable[[StepResult], None]) -> StreamRun:
            run = StreamRun(audio_s=audio_s, keep_words=False)
            for step in steps:
                if self._stop.is_set():
                    break
                self.sync_voice()
                if step.at_s is not None:
                    asr_clock.sleep_until(step.at_s)
                on_step(step)
            return run

        self._run_asr(source, asr_clock)
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

        thread = threading.Thread(target=main, name="shadow-file", daemon=True)
        self._threads.append(thread)
        thread.start()

    def start_live(self, capture, opened_at: float | None = None) -> None:  # noqa: ANN001 - a Capture
        """Microphone to speaker; returns at once. ``stop()`` or ``cancel()`` ends it.

        ``opened_at``: the capture was started already, at this ``time.monotonic()`` (it kept what it heard while
        the models loaded): the session's clock starts there, so what was said meanwhile is on time."""
        self._clock = clock = RealClock(origin=opened_at)
        self._begin(clock, play=True, output_device=self.config.output_device, echo=True)
        if self.config.duck_db > 0:
            from engine.audio.sound_server import Ducker

            self._ducker = Ducker(self.config.duck_db, clock=clock.now)
        tap = _Tap(capture, self)

        def source(on_step: Callable[[StepResult], None]) -> StreamRun:
            if opened_at is None:
                capture.start()
            try:
                return run_capture(
                    tap, self._recognizer(), clock, self._stop.is_set, self.config.step_s, on_step, keep_words=False
                )
            finally:
                capture.stop()

        def main() -> None:
            self._run_asr(source, clock)
            self._end()

        thread = threading.Thread(target=main, name="shadow-asr", daemon=True)
        self._threads.append(thread)
        thread.start()

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
        player = self._sink.player
        if player is not None:
            player.close()  # type: ignore[attr-defined]

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def snapshot(self) -> MeterSnapshot:
        with self._lock:
            snap = MeterSnapshot(**asdict(self._snapshot))
        snap.state = self.state
        snap.session_s = self._clock.now()
        snap.underruns = self.figures.underruns()
        snap.time_balance_s = self._audio_in_hand(snap.session_s)
        snap.echo_gated_s = self.echo.gated_s if self.echo is not None else 0.0
        pace = self.pace.status()
        snap.step_cost_s, snap.pace_level, snap.pace_message = pace.step_cost_s, pace.level_name, pace.message
        return snap

    # ----- stages
    def _recognizer(self) -> StreamingRecognizer:
        self._asr = self.models.recognizer(self.config)
        return self._asr

    def _begin(self, tts_clock: Clock, play: bool, output_device: object, echo: bool = False) -> None:
        """``echo``: the input is a microphone (live, or a simulated room) and the echo guard applies to it."""
        voice = self.models.voice
        voice.rate = self.config.voice_rate
        noted = len(self.warnings)
        if self.move_agent is not None:
            self._base_policy, agent = LookaheadPolicy(k=1), self.move_agent
        else:
            self._base_policy, agent = voice_policy(self.config.tts_policy, self.config.k, self.warnings)
        for message in self.warnings[noted:]:  # learned weights that could not load: the window says so
            self.listener.on_warning(message)
        self._synthesizer = synthesizer = IncrementalSynthesizer(
            voice,
            self._base_policy,
            ChunkSizes(self.config.first_chunk, self.config.chunk, self.config.phrase_chunk),
            self.config.delta,
            timer=self._voice_timer,
        )
        moves = is_move_agent(agent)
        driver = ReadSpeakDriver(synthesizer, agent) if agent is not None and not moves else None  # a fresh agent
        self.advisor = MoveAdvisor(agent, keep=self.move_agent is not None) if moves else None
        if self.advisor is not None:
            self.advisor.reset()
        if echo:
            self._begin_echo(live=play)
        if play:
            from engine.audio.player import Player

            on_output = self._on_played_output if self.voice_track is not None else None
            player = Player(voice.sample_rate, device=output_device, timer=self._clock.now, on_output=on_output)
            player.start()  # before anything is written: a device that cannot open leaves no half session
            self._sink.player = player
        if self.record_dir is not None:
            try:
                self.recorder = SessionRecorder(self.record_dir, SAMPLE_RATE, voice.sample_rate)
            except Exception:
                if self._sink.player is not None:
                    self._sink.player.close()  # type: ignore[attr-defined]
                raise
        if self._sink.player is not None:
            monitor = threading.Thread(target=self._monitor, name="shadow-playback", daemon=True)
            self._threads.append(monitor)
            monitor.start()
        self._worker = SynthesisWorker(
            synthesizer,
            self._on_piece,
            self._on_tts_error,
            clock=tts_clock,
            audio_in_hand=self._audio_in_hand,
            hurry_below_s=self.config.hurry_below_s,
            driver=driver,
            advisor=self.advisor,
        )
        used = agent.name if moves else self._base_policy.name
        self.figures.config = {**asdict(self.config), "voice_sample_rate": voice.sample_rate,
                               "tts_policy_used": used}  # fmt: skip
        self._set_state(State.RUNNING)

    def _begin_echo(self, live: bool) -> None:
        """The echo guard, and the record of the voice's played samples it (or a simulated room) needs."""
        guard = self.config.echo_guard
        if guard == "off":
            return
        if self.voice_track is None:
            self.voice_track = PlayedTrack()
        self._file_fed = self._echo_out = 0
        self.echo = EchoPath(guard, self.voice_track, self.config.echo_hint_ms / 1000, self.config.noise_suppression,
                             voice_active=self._voice_active if live else None,
                             method=self.config.echo_canceller, path=self.config.echo_path,
                             memory=getattr(self.models, "echo_memory", None),
                             route=(self.config.input_device, self.config.output_device))  # fmt: skip
        if self.keep_heard:
            self.echo.cleaned = []

    def sync_voice(self) -> None:
        """Wait until the voice's stage has handled every command sent so far: on the simulated clock its pieces up
        to this moment are then in ``voice_track`` (a simulated room hears the voice played before now)."""
        worker = self._worker
        while worker is not None and not worker.wait_idle(timeout=0.1):
            if self._cancel.is_set():
                return

    def _run_asr(self, source: Callable[[Callable[[StepResult], None]], StreamRun], clock: Clock) -> None:
        try:
            self.asr_run = source(self._on_step)
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
            player = self._sink.player
            if player is not None and not self._cancel.is_set():
                while not player.drain(timeout=0.2):  # type: ignore[attr-defined]
                    if self._cancel.is_set():
                        break
            self._stop.set()
            self._playback_done.set()
            for thread in self._threads:
                if thread is not threading.current_thread() and thread.name == "shadow-playback":
                    thread.join(timeout=5)
            if player is not None:
                self._collect_played()
                player.close()  # type: ignore[attr-defined]
        finally:
            if self._ducker is not None:
                self._ducker.close()  # the other applications are heard at their own volume again
            # the voice is the loaded models', shared with the next session and "Test speaker": not left catching up
            self.models.voice.rate = self.config.voice_rate
            if self.asr_run is not None:
                self.figures.asr(self.asr_run)
            self.figures.pace = self.pace.report()
            if self.echo is not None:
                self.echo.remember()
            self.figures.echo = self.echo.report() if self.echo is not None else None
            self.figures.error = self.error
            if self.recorder is not None:
                self.recorder.report(self.figures.report())
                self.recorder.close()
                self._write_captions(self.recorder.folder)
            if self.error is not None:
                self._set_state(State.FAILED)
            else:
                self._set_state(State.CANCELLED if self._cancel.is_set() else State.DONE)
            self._finished.set()

    @staticmethod
    def _write_captions(folder: Path) -> None:
        try:
            write_captions(folder)
        except (OSError, ValueError) as exc:  # the recording itself is complete; only its captions are missing
            log.error("could not write the session's captions into %s: %s", folder, exc)

    # ----- callbacks (engine threads)
    def _heard_file(self, samples: np.ndarray) -> None:
        if self.recorder is not None:
            self.recorder.input_audio(samples)
        self._level(samples)

    def _heard_block(self, block: AudioBlock) -> AudioBlock:
        # The capture clock's zero on the session clock. A block arrives after it was recorded, never before, so
        # the earliest of (arrival − end on the capture clock) is the best estimate; the first blocks alone can
        # mislead (a stream may deliver a backlog in a burst when it starts).
        candidate = max(self._clock.now() - block.end_s, 0.0)
        if self._source_origin_s is None or candidate < self._source_origin_s:
            self._source_origin_s = candidate
        if self.recorder is not None:
            self.recorder.input_audio(block.samples)
        self._level(block.samples)
        if self.echo is None:
            return self._unduck(block)
        if self.echo.gate is not None:
            return self._unduck(self.echo.gate.apply(block, self._clock.now()))
        player = self._sink.player
        if player is not None:
            player.poll()  # what the device played so far is in the voice's track before it is read
        samples = self.echo.process(block.samples, (self._source_origin_s or 0.0) + block.start_s, block.sample_rate)
        out = AudioBlock(samples, block.sample_rate, self._echo_out / block.sample_rate)
        self._echo_out += samples.size
        return self._unduck(out)

    def _unduck(self, block: AudioBlock) -> AudioBlock:
        """A capture of the other applications, lowered while the voice spoke, raised back as much (after the echo
        guard: the voice itself was not lowered): the recognizer hears the speaker at one level."""
        ducker = self._ducker
        if ducker is None or not ducker.times_ducked:
            return block
        samples = ducker.raise_back(block.samples, (self._source_origin_s or 0.0) + block.start_s, block.sample_rate)
        return block if samples is block.samples else AudioBlock(samples, block.sample_rate, block.start_s)

    def _guard_file(self, samples: np.ndarray) -> np.ndarray:
        """A recording's intake through the echo guard (on the recognizer's clock: its compute is charged)."""
        assert self.echo is not None
        start, self._file_fed = self._file_fed, self._file_fed + samples.size
        return self.echo.process(samples, start / SAMPLE_RATE)

    def _on_played_output(self, samples: np.ndarray, start_s: float) -> None:
        """Live: every block the device played (silence too) goes into the voice's track at its time, resampled as
        one continuous stream: the canceller's reference must not jump between blocks."""
        player, track = self._sink.player, self.voice_track
        if player is None or track is None:
            return
        out = self._out
        if out is None or abs(start_s - out.next_s) > OUTPUT_JUMP_S:  # the device played silence meanwhile
            if out is not None:
                track.write(out.resampler.flush(), track.rate, out.anchor_s + out.written / track.rate)
            out = self._out = _OutputStream(StreamResampler(player.device_rate, track.rate), start_s)  # type: ignore[attr-defined]
        resampled = out.resampler.process(samples)
        track.write(resampled, track.rate, out.anchor_s + out.written / track.rate)
        out.written += resampled.size
        out.next_s = start_s + samples.size / player.device_rate  # type: ignore[attr-defined]

    def _level(self, samples: np.ndarray) -> None:
        if samples.size:
            level = level_db(samples)
            with self._lock:
                self._snapshot.input_level_db = level

    def _on_step(self, step: StepResult) -> None:
        if self._cancel.is_set():
            return
        if step.recognized and step.at_s is not None:
            self._keep_pace(step.compute_s, step.at_s)
        origin = self._source_origin_s or 0.0
        records: list[WordRecord] = []
        tokens: list[str] = []
        committed = step.committed
        if self._guard is not None:
            language = getattr(self.models.backend, "language", None)
            with self._lock:
                self._snapshot.spoken_language = language
            if committed:
                keep = self._guard.check([w.text for w in committed], language)
                if not all(keep):
                    dropped = sum(1 for k in keep if not k)
                    self.figures.non_english(dropped)
                    with self._lock:
                        self._snapshot.non_english_words += dropped
                    committed = [w for w, k in zip(committed, keep, strict=True) if k]
        for word in committed:
            keyed = self._keys.tokens(word.text)
            for token, (sentence, index) in keyed:
                record = WordRecord(sentence, index, token, word.start_s + origin, word.end_s + origin, word.commit_s,
                                    heard_s=word.heard_s + origin, forced=word.forced)  # fmt: skip
                records.append(record)
            tokens.extend(fed_tokens(keyed, word.pause_after))
        if records:
            with self._lock:
                for record in records:
                    self._records[record.key] = record
                last = records[-1]
                self._snapshot.commit_latency_s = last.commit_s - last.source_end_s
                self._snapshot.words_committed += len(records)
            self.figures.committed(records)
            if self.recorder is not None:
                for record in records:
                    self.recorder.transcript({"event": "committed", **_record_dict(record)})
            self.listener.on_committed(records)
        hint = [w.text for w in step.tentative] if self.config.tentative_lookahead else []
        if (records or hint != self._last_hint) and self._worker is not None:
            at = records[-1].commit_s if records else step.at_s
            self._worker.feed(tokens, at_s=at, hint=hint, paused=step.paused)
            self._last_hint = hint
        elif self._worker is not None:
            self._worker.tick(at_s=step.at_s, paused=step.paused)
        self.listener.on_tentative([w.text for w in step.tentative])
        self.trimmer.maybe_trim()

    def _keep_pace(self, compute_s: float, at_s: float) -> None:
        """Measure the machine at each recognizer step and set what depends on its pace (``pipeline.pace``)."""
        pace = self.pace
        level = pace.level
        pace.step(compute_s, at_s)
        if self._worker is not None:
            self._worker.hurry_below_s = pace.hurry_below_s()
            self._worker.restart_min_s = pace.restart_min_s()
            if self.advisor is not None:
                cost = pace.status().step_cost_s or 0.0
                self._worker.next_step_s = max(self.config.step_s, cost) + cost
        if pace.level == level:
            return
        if self._asr is not None:
            self._asr.trim_s = pace.trim_s or self._asr.config.trim_s
            self._asr.start_beam_size = self._asr.config.start_beam_size if pace.start_beam else 0
        synthesizer = self._synthesizer
        if synthesizer is not None and isinstance(self._base_policy, LookaheadPolicy):
            context = pace.left_context
            synthesizer.policy = (
                replace(self._base_policy, left_context=context) if context is not None else self._base_policy
            )
        message = pace.status().message
        if message is not None:  # the window shows it from the snapshot; the report has it in ``pace``
            log.warning("%s", message)

    def _compute_s(self, piece: AudioPiece) -> float:
        """What ``piece`` took to make on the session's clock (a ``--cpu-slowdown`` run charges it × F)."""
        return piece.gen_s * self.config.voice_cpu_slowdown

    def _on_piece(self, piece: AudioPiece) -> None:
        if self._cancel.is_set():
            return
        self.pace.piece(self._compute_s(piece), piece.audio_s)
        if self.pieces is not None:
            self.pieces.append(piece)
        worker = self._worker
        assert worker is not None
        ready = worker.piece_time()
        ready = self._clock.now() if ready is None else ready
        # When the words this piece needed had all arrived: the worker handles commands in order and makes every
        # piece as soon as its words are there, so a piece made while handling a command needed that command's
        # words (every command the session sends carries its time). ``needs_word`` alone would miss that the
        # synthesizer holds a sentence's last word back until the next one shows it cannot merge.
        inputs_at = worker.command_time()
        inputs_at = ready if inputs_at is None else inputs_at
        first_of_sentence = piece.chunk == 0
        if first_of_sentence:
            with self._lock:
                self._snapshot.first_audio_s = ready - inputs_at
        player = self._sink.player
        self.figures.piece(piece, ready, inputs_at, first_of_sentence, computed=player is None)
        if player is None:
            start, end = self._sink.timeline.add(ready, piece.audio_s, inputs_at)
            self._played(piece, ready, inputs_at, start, end)
            return
        with self._lock:
            self._piece_ids += 1
            piece_id = self._piece_ids
            self._sink.pending[piece_id] = (piece, ready, inputs_at)
        self.figures.live_balance(player.buffered_s)  # type: ignore[attr-defined]
        player.enqueue(piece.samples, key=piece_id)  # type: ignore[attr-defined]

    def _monitor(self) -> None:
        """Live: turn the player's report of what finished playing into spoken words; watch the device."""
        player = self._sink.player
        while not self._playback_done.is_set() and not self._cancel.is_set():
            try:
                player.check()  # type: ignore[attr-defined]
                self._collect_played()
                if self._ducker is not None:
                    self._ducker.set(self._voice_active(self._clock.now()))
            except Exception as exc:
                log.exception("playback stopped")
                self._fail(f"playback stopped: {exc}")
                self.cancel()
                return
            time.sleep(MONITOR_INTERVAL_S)

    def _collect_played(self) -> None:
        player = self._sink.player
        if player is None:
            return
        player.poll()  # type: ignore[attr-defined]
        for played in player.take_finished():  # type: ignore[attr-defined]
            with self._lock:
                entry = self._sink.pending.pop(played.key, None)
            if entry is not None and played.start_s is not None and played.end_s is not None:
                piece, ready, inputs_at = entry
                self._played(piece, ready, inputs_at, played.start_s, played.end_s)

    def _played(self, piece: AudioPiece, ready: float, inputs_at: float, start: float, end: float) -> None:
        sample_rate = piece.sample_rate
        spoken: list[WordRecord] = []
        with self._lock:
            for word in piece.words:
                record = self._records.pop((word.sentence, word.index), None)
                if record is None:  # the voice's keys and the session's disagree: its figures would be others'
                    if not self._unmatched_warned:
                        log.warning("spoken word %r (sentence %d, word %d) was never committed under that key",
                                    word.text, word.sentence, word.index)  # fmt: skip
                        self._unmatched_warned = True
                    continue
                record.ready_s = ready
                record.speak_start_s = start + word.start_sample / sample_rate
                record.speak_end_s = start + word.end_sample / sample_rate
                spoken.append(record)
                # its length had the voice spoken at the configured rate, against the speaker's
                voice_s = (word.end_sample - word.start_sample) / sample_rate * word.rate / self.config.voice_rate
                self._tempo.add(word.text, record.source_end_s - record.source_start_s, voice_s)
        if self.recorder is not None:
            self.recorder.output_audio(piece.samples, start)
        if self.voice_track is not None and self._sink.player is None:  # live, the player wrote it as it began
            self.voice_track.write(piece.samples, sample_rate, start)
        # a gap is the engine's fault when the piece's own words were committed before it began (METRICS.md),
        # even if the piece then waited for its lookahead; so it is classified by their commit, not by inputs_at
        if spoken:  # behind a fast speaker, or with one: speak the next pieces faster (``pace.catch_up_rate``)
            rule = INTERPRET_CATCH_UP if self.config.translate_from else SHADOW_CATCH_UP
            tempo = self._tempo.ratio() if rule.match_tempo else None
            factor = catch_up_rate(spoken[-1].lag_s, self.config.catch_up, self._audio_in_hand(ready), rule, tempo)
            self.models.voice.rate = self.config.voice_rate * factor
            self.figures.rate(factor, tempo)
        words_at = max((record.commit_s for record in spoken), default=inputs_at)
        self.figures.played(piece, spoken, start, end, words_at, self._sink.player is None, self._compute_s(piece))
        if spoken:
            with self._lock:
                self._snapshot.lag_s = spoken[-1].lag_s
                self._snapshot.lag_median_s = self.figures.lag_median()
                self._snapshot.words_spoken += len(spoken)
            if self.recorder is not None:
                for record in spoken:
                    self.recorder.transcript({"event": "spoken", **_record_dict(record)})
                self.recorder.metrics({
                    "t_s": end, "sentence": piece.sentence, "chunk": piece.chunk, "ready_s": ready,
                    "play_start_s": start, "play_end_s": end, "gen_s": piece.gen_s, "audio_s": piece.audio_s,
                    m.EAR_VOICE_LAG_S: spoken[-1].lag_s, m.UNDERRUNS: self.figures.underruns(),
                })  # fmt: skip
            self.listener.on_spoken(spoken)

    def _audio_in_hand(self, now_s: float) -> float:
        """Seconds of voice still to play at ``now_s`` (the worker hurries when this runs low)."""
        player = self._sink.player
        if player is not None:
            return float(player.buffered_s)  # type: ignore[attr-defined]
        end = self._sink.timeline.end_s
        return max(end - now_s, 0.0) if end is not None else 0.0

    def _voice_active(self, now_s: float) -> bool:
        return self._audio_in_hand(now_s) > 0

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


def _record_dict(record: WordRecord) -> dict:
    return {**asdict(record), m.EAR_VOICE_LAG_S: record.lag_s}
