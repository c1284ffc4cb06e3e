"""A live practice session: the source plays on the output (headphones), the person shadows it into the microphone.

Their words are recognized as they speak, by the same streaming recognizer that hears a speaker in a shadowing
session, and marked against the source's words (``marks``) for the window and the console to show. When the source
has played and the person has had ``TAIL_S`` to finish, the recorded attempt is scored whole, as ``liveshadow practice
--voice`` scores a file (``attempt.score_recording``): that is the summary; the live figures are kept beside it.

Clocks: the player says when the source's first sample reached the output, and the capture's zero is placed on the
same clock from when its blocks arrive (the earliest arrival less the block's end, as the shadowing session does).
The attempt is recorded from the source's first sample on, so its times are the source's.
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
from engine.asr.words import Word
from engine.audio.capture import Capture
from engine.audio.devices import AudioDeviceError
from engine.audio.io import by_percent, load_audio
from engine.audio.player import Player
from engine.audio.stretch import check_speed, stretch
from engine.clock import RealClock
from engine.metrics.aggregate import aggregate
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import streaming_recognizer
from engine.practice.align import Unit, units
from engine.practice.attempt import as_played, load_recognizer, score_recording
from engine.practice.live_common import (
    ATTEMPT_FILE,
    REPORT_FILE,
    SOURCE_FILE,
    LiveSessionBase,
    PracticeSnapshot,
    PracticeState,
    as_kept,
    on_source_clock,
)
from engine.practice.loop import Loop
from engine.practice.program import Program, make_program
from engine.practice.reference import source_words
from engine.practice.tap import SAMPLE_RATE, RecordingTap

if TYPE_CHECKING:
    from engine.asr.vad import SileroVad
    from engine.practice.interpreting import EnglishTarget


__all__ = ["ATTEMPT_FILE", "REPORT_FILE", "PracticeSession", "PracticeSnapshot", "PracticeState"]

log = logging.getLogger(__name__)

PIECE_S = 0.25  # the source is queued for playback in pieces this long
# The output runs this long (once the microphone is heard) before the source is queued: a stream's first blocks play
# later than its device says (0.6 s later on a sound server's virtual speaker, so every EVS came out 0.6 s long);
# once running, its times hold (0.00 s), and the person gets a moment to get ready.
LEAD_IN_S = 1.0
MIC_WAIT_S = 5.0  # a new input stream may deliver nothing for its first 0.4-1.9 s (a sound server's); then it is lost
TAIL_S = 4.0  # the person is still heard this long after the source's end, and as long as they speak:
QUIET_END_S = 2.0  # ... until they have been quiet this long
MAX_TAIL_S = 20.0  # ... at most this long (an interpreter finishes a sentence after the source's end)


class PracticeSession(LiveSessionBase):
    """``prepare()`` (slow: the models, the source's words), then ``start()``; ``stop()`` ends it early and still
    scores what was said, ``cancel()`` ends it without a score. ``snapshot()`` from any thread."""

    def __init__(
        self,
        source: Path,
        language: str | None = "en",
        input_device: int | str | None = None,
        output_device: int | str | None = None,
        record_dir: Path | None = None,
        backend: AsrBackend | None = None,
        pace_setter: bool = True,
        interpret: bool = False,
        speed: float = 1.0,
        sentence_by_sentence: bool = False,
        loop: Loop | None = None,
        into: str | None = None,
    ) -> None:
        """``pace_setter``: also run the machine on the source (``pace_setter.pace_setter``) while preparing.
        ``interpret``: the source is in ``language`` (None: detected) and the person speaks English; their words are
        marked against an English text of the source (``interpreting.english_target``). ``speed``: the source plays
        this much slower or faster, its pitch kept (``audio.stretch``); every time is on its clock as played.
        ``sentence_by_sentence``: each sentence plays, then a pause to repeat it in (``sentences``); every sentence is
        scored (no pace-setter: the machine shadows, it does not repeat). ``loop``: the words from A to B (on the
        source's own clock) play ``passes`` times, each pass scored (``loop``). ``into``: interpreting into this
        language, not English (``interpret_into``): the person's words are not marked live (nothing in it is timed on
        the source), and are scored per sentence at the end."""
        super().__init__(record_dir, language, interpret, into)
        if (sentence_by_sentence or loop is not None) and interpret:
            raise ValueError(
                "sentence by sentence and the loop are for shadowing practice: an interpreting one is "
                "timed per sentence already"
            )
        if sentence_by_sentence and loop is not None:
            raise ValueError("a practice is sentence by sentence or a loop, not both")
        self.source = source
        self.speed = check_speed(speed)
        self.sentence_by_sentence, self.loop = sentence_by_sentence, loop
        self.program: Program | None = None  # what plays, when not the source straight through
        self.pace_setter = pace_setter and not sentence_by_sentence and loop is None and self.into is None
        self._into_source: list[Word] = []  # interpreting into another language: the source's own words, timed
        self.input_device, self.output_device = input_device, output_device
        self._backend = backend
        self._vad: SileroVad | None = None
        self._audio = np.zeros(0, np.float32)
        self._source_words: list[Word] = []
        self._source_units: list[Unit] = []
        self._words_from = ""
        self._target: EnglishTarget | None = None  # interpreting: the English text timed on the source
        self._clock = RealClock()
        self._played_at: float | None = None  # the clock's time when the source's first sample was heard
        self._tap: RecordingTap | None = None  # the microphone, recorded
        self._thread: threading.Thread | None = None

    # ----- setup
    @property
    def duration_s(self) -> float:
        return self._audio.size / SAMPLE_RATE

    @property
    def source_text(self) -> str:
        return " ".join(w.text for w in self._source_words)

    @property
    def source_recording(self) -> Path:
        """The recording the attempt is known by in the history, and replayed beside it."""
        return self.source

    @property
    def played_recording(self) -> Path:
        """The source as it played, on the attempt's clock: itself at 1x, else the copy kept beside the attempt."""
        if (self.speed == 1.0 and not self.sentence_by_sentence and self.loop is None) or self.record_dir is None:
            return self.source
        return self.record_dir / SOURCE_FILE

    def prepare(self, progress: Callable[[str], None] | None = None) -> None:
        """Load the recognizer and find the source's words with their times (its transcript when one lies beside
        it). Raises ``AudioFileError`` or ``AsrError`` with a message to show. ``progress``: told each step (a long
        recording's decoding in quarters)."""
        from engine.asr.vad import SileroVad

        say = progress or (lambda _text: None)
        audio = load_audio(self.source, progress=by_percent(lambda share: say(f"reading the recording: {share:.0%}")))
        say("recognizing the recording's words")
        if self._backend is None:
            self._backend = load_recognizer(self.said_language)
        self._vad = SileroVad()
        if self.into:
            heard = transcribe_long(load_recognizer(self.language or "en"), audio)
            self._into_source, self._words_from = as_played(heard, self.speed), "the recording as recognized"
            if not heard:
                raise AsrError(f"no words were heard in {self.source}: there is nothing to interpret")
        elif self.interpret:
            from engine.practice.interpreting import english_target, load_translator

            translator = load_translator(self.language)
            self._target = english_target(self.source, audio, translator, self._vad).moved(speed=self.speed)
            detected = getattr(translator, "detected", None)
            self.language = self.language or (detected[0] if detected else None)
            self._source_words, self._words_from = self._target.words, self._target.origin
        else:
            heard = transcribe_long(self._backend, audio)
            words, self._words_from = source_words(self.source, heard, self.language)
            self._source_words = as_played(words, self.speed)
        self._source_units = units(self._source_words, self.said_language)
        if not self._source_units and not self.into:
            raise AsrError(f"no words were heard in {self.source}: there is nothing to shadow")
        self._audio = stretch(audio, SAMPLE_RATE, self.speed)
        self.program = make_program(
            self._source_words, self.duration_s, SAMPLE_RATE, self.speed, self.sentence_by_sentence, self.loop
        )
        if self.program is not None:
            self._audio = self.program.audio(self._audio, SAMPLE_RATE)
            self._source_words = self.program.words
            self._source_units = units(self._source_words, self.said_language)
        if self.pace_setter:
            from engine.practice.pace_setter import pace_setter

            say("the pace-setter: liveshadow shadows the recording too")
            machine = pace_setter(self.source, self.language, self.interpret, self.speed)
            self.pace, self.pace_words = machine.lags, machine.words

    # ----- run
    def start(self) -> None:
        if not self._audio.size:
            raise RuntimeError("prepare() first")
        player = Player(SAMPLE_RATE, device=self.output_device, timer=time.monotonic)
        capture = Capture(self.input_device)
        kept_s = MIC_WAIT_S + LEAD_IN_S + self.duration_s + MAX_TAIL_S + 2.0  # all the session can hear, no more
        self._tap = RecordingTap(capture, kept_s)
        self._clock = RealClock()
        capture.start()
        try:
            player.start()
        except AudioDeviceError:
            capture.stop()
            raise
        self.state = PracticeState.RUNNING
        feeder = threading.Thread(target=self._feed, args=(player,), name="practice-source", daemon=True)
        feeder.start()
        self._thread = threading.Thread(target=self._run, args=(player, capture, feeder), name="practice", daemon=True)
        self._thread.start()

    def _feed(self, player: Player) -> None:
        piece = int(PIECE_S * SAMPLE_RATE)
        deadline = time.monotonic() + MIC_WAIT_S
        while self._tap is None or self._tap.origin is None:  # the source begins once the microphone is heard
            if time.monotonic() > deadline:
                self.error = f"the microphone delivered nothing in {MIC_WAIT_S:.0f} s"
                self._stop.set()
                return
            if self._stop.wait(0.02):
                return
        if self._stop.wait(LEAD_IN_S):
            return
        for i in range(0, self._audio.size, piece):
            if self._stop.is_set():
                return
            player.enqueue(self._audio[i : i + piece], key=i, last=i + piece >= self._audio.size)

    def _run(self, player: Player, capture: Capture, feeder: threading.Thread) -> None:
        # the shadowing session's recognizer settings
        recognizer = streaming_recognizer(self._backend, self._vad, ShadowConfig())  # type: ignore[arg-type]
        monitor = threading.Thread(target=self._watch_player, args=(player,), name="practice-player", daemon=True)
        monitor.start()
        assert self._tap is not None, "prepare() and start() open the tap"
        try:
            run = run_capture(
                self._tap,
                recognizer,
                self._clock,
                self._stop.is_set,
                on_step=self._on_person,
                keep_words=False,
            )
            if run.device_error:
                self.error = run.device_error
        except (AsrError, AudioDeviceError, OSError) as exc:
            self.error = str(exc)
        finally:
            self._stop.set()
            capture.stop()
            player.close()
            feeder.join(timeout=2.0)
            monitor.join(timeout=2.0)
        self._conclude(self._played_at is not None, self._score)

    def _watch_player(self, player: Player) -> None:
        """Note when the source's first sample was heard; end the session ``TAIL_S`` after its last, or once the person
        has been quiet for ``QUIET_END_S`` after that (``MAX_TAIL_S`` at most)."""
        end_at = None
        while not self._stop.is_set():
            player.poll()
            finished = player.finished
            if self._played_at is None:
                first = next((p for p in finished if p.key == 0 and p.start_s is not None), None)
                self._played_at = first.start_s if first is not None else None
            if end_at is None and finished and finished[-1].key == self._last_key() and finished[-1].end_s:
                end_at = finished[-1].end_s
            if end_at is not None and self._ended(end_at, time.monotonic()):
                self._stop.set()
                return
            try:
                player.check()
            except AudioDeviceError as exc:
                self.error = str(exc)
                self._stop.set()
                return
            time.sleep(0.05)

    def _ended(self, source_end: float, now: float) -> bool:
        if now < source_end + TAIL_S:
            return False
        last_speech = self._tap.last_loud if self._tap is not None else None
        speaking = last_speech is not None and now - last_speech < QUIET_END_S
        return not speaking or now >= source_end + MAX_TAIL_S

    def _last_key(self) -> int:
        piece = int(PIECE_S * SAMPLE_RATE)
        return (self._audio.size - 1) // piece * piece

    # ----- figures
    def offset_s(self) -> float | None:
        """Where the capture's zero lies on the source's clock (negative: the microphone opened first)."""
        origin = self._tap.origin if self._tap is not None else None
        if self._played_at is None or origin is None:
            return None
        return origin - self._played_at

    def snapshot(self) -> PracticeSnapshot:
        position = 0.0 if self._played_at is None else min(time.monotonic() - self._played_at, self.duration_s)
        level = self._tap.level_db if self._tap is not None else -120.0
        return self._marked(self._source_units, self.offset_s(), position, self.duration_s, level)

    def _score(self) -> dict:
        recorded = self._tap.recorded if self._tap is not None else np.zeros(0)
        attempt = as_kept(on_source_clock(recorded, self.offset_s()))
        live = self.snapshot()
        backend = self._backend
        assert backend is not None, "prepare() loads the recognizer"
        if self.into:
            from engine.practice.interpret_into import reference_in, rendered_words, score_into

            said = rendered_words(backend, attempt)
            report = score_into(self._into_source, said, self.into, reference_in(self.source, self.into))
            report.update(language=self.language, attempt_s=attempt.size / SAMPLE_RATE)
        elif self._target is not None:
            from engine.practice.interpreting import score_interpretation

            said = transcribe_long(backend, attempt)
            report = score_interpretation(self._target, said)
            report.update(language=self.language, attempt_s=attempt.size / SAMPLE_RATE)
        else:
            report = score_recording(
                self._source_words,
                attempt,
                backend,
                self.said_language,
                program=self.program,
            )
        report.update(
            {
                "command": "practice --live",
                "source": str(self.source),
                "source_words_from": self._words_from,
                "source_s": self.duration_s,
                "speed": self.speed,
                "capture_offset_s": self.offset_s(),
                "live": {"evs_s": aggregate(e for _, e in live.evs), "attempt_text": " ".join(live.attempt)},
                "machine_lag_s": {**aggregate(lag for _, lag in self.pace), "per_word": self.pace}
                if self.pace
                else None,
                "machine_words": self.pace_words or None,  # liveshadow's own rendering (the export's tier)
            }
        )
        played = {SOURCE_FILE: self._audio} if self.played_recording != self.source else {}
        if played:  # slowed, sentence by sentence, looped: what played is kept beside the attempt, on its clock
            report["played_source"] = str(self.played_recording)
        self._keep(report, {ATTEMPT_FILE: attempt, **played})
        return report
