"""The words' way through a session: each recognizer step's committed words into the ledger and to the voice's
worker, each piece the worker makes to the output, and each piece played back into the ledger, the figures, the
meters and the recording. What the machine's pace sets at each step, and the voice's catching up at each word
played, go to the worker as one ``VoicePace`` value."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from engine.asr.english_guard import EnglishGuard
from engine.asr.stream_values import CommittedWord, StepResult
from engine.asr.streaming import StreamingRecognizer
from engine.clock import Clock
from engine.metrics import names as m
from engine.pipeline.config import ShadowConfig
from engine.pipeline.intake import Intake
from engine.pipeline.memory import MemoryTrimmer
from engine.pipeline.meters import LiveMeters
from engine.pipeline.pace import INTERPRET_CATCH_UP, SHADOW_CATCH_UP, MachinePace, catch_up_rate
from engine.pipeline.recorder import SessionRecorder
from engine.pipeline.records import SessionListener
from engine.pipeline.summary import SessionFigures
from engine.pipeline.voice_output import PlayedVoice, VoiceOutput
from engine.pipeline.voice_stage import VoiceStage
from engine.pipeline.word_ledger import WordLedger
from engine.tts.pieces import AudioPiece
from engine.tts.worker import SynthesisWorker, VoicePace

log = logging.getLogger(__name__)


@dataclass
class FlowEnds:
    """The stages the words flow between, once the session has made them (the recognizer when it starts)."""

    intake: Intake
    worker: SynthesisWorker
    voice: VoiceStage
    output: VoiceOutput
    clock: Clock
    recorder: SessionRecorder | None = None
    recognizer: StreamingRecognizer | None = None


class WordFlow:
    """The session's callbacks: ``step`` from the recognizer's thread, ``piece`` from the voice's, ``played`` from
    the voice's (a computed timeline) or the playback monitor's.

    ``language``: interpreting, the language the recognizer hears; committed words that are not English are then
    not spoken (``english_guard``)."""

    def __init__(
        self,
        config: ShadowConfig,
        figures: SessionFigures,
        listener: SessionListener,
        pace: MachinePace,
        cancelled: Callable[[], bool],
        language: Callable[[], str | None] | None = None,
    ) -> None:
        self.config = config
        self.figures = figures
        self.listener = listener
        self.pace = pace
        self.ledger = WordLedger(config.voice_rate)
        self.meters = LiveMeters()
        self.trimmer = MemoryTrimmer()  # called from the recognizer's thread, between its steps
        self.pieces: list[AudioPiece] | None = None  # a list here keeps every piece made (a file run's voice quality)
        self.ends: FlowEnds | None = None
        self._cancelled = cancelled
        self._language = language
        self._guard = EnglishGuard() if language is not None else None
        self._last_hint: list[str] = []
        self._voice_pace = VoicePace(hurry_below_s=config.hurry_below_s)
        self._pace_lock = threading.Lock()

    # ----- the recognizer's thread
    def step(self, step: StepResult) -> None:
        ends = self.ends
        if self._cancelled() or ends is None:
            return
        if step.recognized and step.at_s is not None:
            self._keep_pace(ends, step.compute_s, step.at_s)
        committed = self.ledger.commit(self._english(step.committed), ends.intake.origin_s or 0.0)
        records = committed.records
        if records:
            self.meters.committed(records)
            self.figures.committed(records)
            if ends.recorder is not None:
                ends.recorder.words("committed", records)
            self.listener.on_committed(records)
        hint = [w.text for w in step.tentative] if self.config.tentative_lookahead else []
        if records or hint != self._last_hint:
            at = records[-1].commit_s if records else step.at_s
            ends.worker.feed(committed.tokens, at_s=at, hint=hint, paused=step.paused)
            self._last_hint = hint
        else:
            ends.worker.tick(at_s=step.at_s, paused=step.paused)
        self.listener.on_tentative([w.text for w in step.tentative])
        self.trimmer.maybe_trim()

    def _english(self, words: list[CommittedWord]) -> list[CommittedWord]:
        """The committed words the English guard lets through (all of them when shadowing)."""
        if self._guard is None or self._language is None:
            return words
        language = self._language()
        self.meters.language(language)
        if not words:
            return words
        keep = self._guard.check([w.text for w in words], language)
        dropped = sum(1 for k in keep if not k)
        if not dropped:
            return words
        self.figures.non_english(dropped)
        self.meters.non_english(dropped)
        return [w for w, k in zip(words, keep, strict=True) if k]

    def _keep_pace(self, ends: FlowEnds, compute_s: float, at_s: float) -> None:
        """Measure the machine at each recognizer step and set what depends on its pace (``pipeline.pace``)."""
        pace = self.pace
        level = pace.level
        pace.step(compute_s, at_s)
        changes: dict[str, object] = {"hurry_below_s": pace.hurry_below_s(), "restart_min_s": pace.restart_min_s()}
        if ends.voice.advisor is not None:
            cost = pace.status().step_cost_s or 0.0
            changes["next_step_s"] = max(self.config.step_s, cost) + cost
        if pace.level != level:
            if ends.recognizer is not None:
                ends.recognizer.set_pace(pace.trim_s, pace.start_beam)
            changes["policy"] = ends.voice.policy_with_context(pace.left_context)
            message = pace.status().message
            if message is not None:  # the window shows it from the snapshot; the report has it in ``pace``
                log.warning("%s", message)
        self._set_voice_pace(ends.worker, **changes)

    def _set_voice_pace(self, worker: SynthesisWorker, **changes: object) -> None:
        with self._pace_lock:  # changed from the recognizer's thread and from playback's
            self._voice_pace = pace = replace(self._voice_pace, **changes)  # type: ignore[arg-type]
        worker.set_pace(pace)

    # ----- the voice's thread
    def compute_s(self, piece: AudioPiece) -> float:
        """What ``piece`` took to make on the session's clock (a ``--cpu-slowdown`` run charges it × F)."""
        return piece.gen_s * self.config.voice_cpu_slowdown

    def piece(self, piece: AudioPiece) -> None:
        ends = self.ends
        if self._cancelled() or ends is None:
            return
        self.pace.piece(self.compute_s(piece), piece.audio_s)
        if self.pieces is not None:
            self.pieces.append(piece)
        worker = ends.worker
        ready = worker.piece_time()
        ready = ends.clock.now() if ready is None else ready
        # When the words this piece needed had all arrived: the worker handles commands in order and makes every
        # piece as soon as its words are there, so a piece made while handling a command needed that command's
        # words (every command the session sends carries its time). ``needs_word`` alone would miss that the
        # synthesizer holds a sentence's last word back until the next one shows it cannot merge.
        inputs_at = worker.command_time()
        inputs_at = ready if inputs_at is None else inputs_at
        first_of_sentence = piece.chunk == 0
        if first_of_sentence:
            self.meters.first_audio(ready - inputs_at)
        output = ends.output
        self.figures.piece(piece, ready, inputs_at, first_of_sentence, computed=output.computed)
        if not output.computed:
            self.figures.live_balance(output.audio_in_hand(ready))
        output.send(piece, ready, inputs_at)

    # ----- the voice's thread (computed playback) or the playback monitor's
    def played(self, played: PlayedVoice) -> None:
        ends = self.ends
        assert ends is not None
        piece, ready, start, end = played.piece, played.ready_s, played.start_s, played.end_s
        spoken = self.ledger.spoken(piece, ready, start)
        if spoken:  # behind a fast speaker, or with one: speak the next pieces faster (``pace.catch_up_rate``)
            rule = INTERPRET_CATCH_UP if self.config.translate_from else SHADOW_CATCH_UP
            tempo = self.ledger.tempo.ratio() if rule.match_tempo else None
            in_hand = ends.output.audio_in_hand(ready)
            factor = catch_up_rate(spoken[-1].lag_s, self.config.catch_up, in_hand, rule, tempo)
            self._set_voice_pace(ends.worker, rate=self.config.voice_rate * factor)
            self.figures.rate(factor, tempo)
        # a gap is the engine's fault when the piece's own words were committed before it began (METRICS.md),
        # even if the piece then waited for its lookahead; so it is classified by their commit, not by inputs_at
        words_at = max((record.commit_s for record in spoken), default=played.inputs_at_s)
        self.figures.played(piece, spoken, start, end, words_at, ends.output.computed, self.compute_s(piece))
        if not spoken:
            return
        self.meters.spoken(spoken, self.figures.lag_median())
        recorder = ends.recorder
        if recorder is not None:
            recorder.words("spoken", spoken)
            recorder.metrics(
                {
                    "t_s": end,
                    "sentence": piece.sentence,
                    "chunk": piece.chunk,
                    "ready_s": ready,
                    "play_start_s": start,
                    "play_end_s": end,
                    "gen_s": piece.gen_s,
                    "audio_s": piece.audio_s,
                    m.EAR_VOICE_LAG_S: spoken[-1].lag_s,
                    m.UNDERRUNS: self.figures.underruns(),
                }
            )
        self.listener.on_spoken(spoken)
