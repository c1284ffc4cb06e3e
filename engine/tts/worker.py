"""Runs the incremental synthesizer in a background thread behind a bounded command queue.

Commands are handled in order, except ``cancel``, which takes effect at once: it drops queued commands and
stops a synthesis under way before its next chunk.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.clock import Clock, ComputeSpan
from engine.tts.chunk_plan import Urgency
from engine.tts.learned.driver import ReadSpeakDriver
from engine.tts.learned.moves import NOW, RULE, WAIT, MoveAdvisor
from engine.tts.pieces import AudioPiece
from engine.tts.policies import LookaheadPolicy, TtsPolicy
from engine.tts.synthesizer import IncrementalSynthesizer

log = logging.getLogger(__name__)

COMMAND_QUEUE_SIZE = 256
# Committed words never wait longer than this for their lookahead, even at a sentence's start (whose silence is
# otherwise a pause): a speaker who stops after "and" would leave the word unspoken until they go on.
MAX_WAIT_S = 2.5
SILENT_S = 0.02  # less voice than this in hand: silent
URGENT_FRACTION = 0.5


@dataclass(frozen=True, slots=True)
class VoicePace:
    """What the machine's pace sets for the voice (``pipeline.pace``): the session hands the worker a new value when
    it measures the machine or the voice catches up (``SynthesisWorker.set_pace``), and the worker applies it in its
    own thread: the thresholds to the command it handles, the policy as it starts a command, the rate before the
    next piece is made."""

    hurry_below_s: float = 0.0
    restart_min_s: float = 0.0  # a piece restarting a silent voice with less audio waits for the ones after it
    next_step_s: float = 0.0  # when the recognizer's next step can commit words (a feature of the learned policy)
    policy: TtsPolicy | None = None  # the synthesizer's policy from now on (None: the one it was made with)
    rate: float | None = None  # the voice's speaking rate from now on (None: as it is)


@dataclass(frozen=True, slots=True)
class _Command:
    kind: str  # "feed", "tick", "end_sentence", "flush", "reset", "stop"
    words: tuple[str, ...] = ()
    at_s: float | None = None  # when the command arrived, on the worker's clock
    hint: tuple[str, ...] | None = None  # words likely to follow (lookahead context only)
    paused: bool = False  # the speaker has ended the phrase of the last word fed (``StepResult.paused``)


class SynthesisWorker:
    """``feed``/``end_sentence``/``flush``/``cancel`` from any thread; pieces go to ``on_piece`` in the worker thread.

    ``on_error`` receives an exception raised by the synthesizer; the worker then keeps serving commands.
    With a ``clock`` (a pipeline stage's own clock), a command given ``at_s`` is not handled before that time and
    the work is charged to the clock, so on a simulated clock ``piece_time()`` is when a live run would have had
    the piece.

    With ``audio_in_hand`` (seconds of voice still to play at a given time) the worker hurries: when less than
    ``hurry_below_s`` is left as it handles a command, chunks whose words are final are synthesized without
    waiting for their lookahead (``IncrementalSynthesizer.hurry``), and when every fed word is spoken, it makes the
    pieces of the recognizer's next tentative words ahead (``speculate``), delivered at once if those words come.
    ``tick`` gives it that chance between words. With less than ``URGENT_FRACTION`` of the threshold in hand, the
    voice runs out before another command could help: a hurry then also makes chunks shorter than the chunk size
    (``chunk_plan.Urgency``). A piece that would restart a silent voice with less audio than
    ``restart_min_s`` waits for the pieces after it in the same command, so that it does not end before they are made.

    With a ``driver`` (a READ/SPEAK agent: wait-K-steps, ``engine/tts/learned/driver.py``) none of those rules apply:
    every feed and tick is one decision of the driver's agent, given the voice in hand at that moment.

    With an ``advisor`` (the learned policy's moves, ``engine/tts/learned/moves.py``) the rules apply, and before each
    step that brings words (or while fed words wait) the advisor's agent chooses the rule's move, speaking the waiting
    words now, or waiting for one more chunk of lookahead.
    """

    def __init__(
        self,
        synthesizer: IncrementalSynthesizer,
        on_piece: Callable[[AudioPiece], None],
        on_error: Callable[[BaseException], None] | None = None,
        clock: Clock | None = None,
        audio_in_hand: Callable[[float], float] | None = None,
        hurry_below_s: float = 0.0,
        driver: ReadSpeakDriver | None = None,
        advisor: MoveAdvisor | None = None,
    ) -> None:
        self.synthesizer = synthesizer
        self.driver = driver
        self.advisor = advisor
        self._pace = VoicePace(hurry_below_s=hurry_below_s)
        self._applied: VoicePace | None = None  # the pace whose policy and rate are in effect
        self._hint: tuple[str, ...] | None = None  # the last hint fed (a tick keeps it)
        self.clock = clock
        self._audio_in_hand = audio_in_hand
        self.hurried = 0  # commands on which the worker hurried and made a piece
        self.max_wait_s = MAX_WAIT_S
        self._held: list[tuple[int, AudioPiece]] = []  # (generation, piece)
        self._voice_until: float | None = None  # when the voice delivered so far ends, as seen after its last piece
        self._waiting_since: float | None = None  # when the oldest fed word no piece holds yet arrived
        self._span: ComputeSpan | None = None
        self._command_at: float | None = None
        self._on_piece = on_piece
        self._on_error = on_error
        self._commands: queue.Queue[_Command] = queue.Queue(COMMAND_QUEUE_SIZE)
        self._generation = 0  # bumped by cancel: pieces of an older generation are dropped
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._run, name="tts-worker", daemon=True)
        self._thread.start()

    @property
    def pace(self) -> VoicePace:
        return self._pace

    @property
    def hurry_below_s(self) -> float:
        return self._pace.hurry_below_s

    @property
    def restart_min_s(self) -> float:
        """A piece that starts the voice from silence and is shorter than this waits for the next pieces the same
        command makes: alone it would end before the next one is ready (a word, a gap, the rest)."""
        return self._pace.restart_min_s

    @property
    def next_step_s(self) -> float:
        return self._pace.next_step_s

    def set_pace(self, pace: VoicePace) -> None:
        """From any thread: the pace from now on (one reference swapped; the worker applies it, ``VoicePace``)."""
        self._pace = pace

    def feed(
        self,
        words: Sequence[str] | str,
        at_s: float | None = None,
        hint: Sequence[str] | None = None,
        paused: bool = False,
    ) -> None:
        """Queue words (and a new ``hint``, see ``IncrementalSynthesizer.feed``). ``paused``: the speaker has ended
        the phrase of the last word fed (``StepResult.paused``), so a sentence's first words need not wait for their
        lookahead."""
        words = (words,) if isinstance(words, str) else tuple(words)
        self._put(_Command("feed", words, at_s, tuple(hint) if hint is not None else None, paused))

    def tick(self, at_s: float | None = None, paused: bool = False) -> None:
        """Nothing new: a chance to hurry if the voice is about to run out (does nothing without ``audio_in_hand``)."""
        if (
            self.driver is not None
            or self.advisor is not None
            or (self._audio_in_hand is not None and self.hurry_below_s > 0)
        ):
            self._put(_Command("tick", at_s=at_s, paused=paused))

    def end_sentence(self, at_s: float | None = None) -> None:
        self._put(_Command("end_sentence", at_s=at_s))

    def flush(self, at_s: float | None = None) -> None:
        self._put(_Command("flush", at_s=at_s))

    def command_time(self) -> float | None:
        """When the input of the pieces being made arrived: ``at_s`` of the command being handled, or for a tick
        that of the last command that brought words (a tick brings nothing; it only lets the worker hurry)."""
        return self._command_at

    def piece_time(self) -> float | None:
        """On the worker's clock, the moment the piece being delivered was ready (call from ``on_piece``)."""
        span = self._span
        return span.now_s() if span is not None else None

    def cancel(self) -> None:
        """Stop now: queued words are dropped and the chunk under way is the last one delivered."""
        with self._lock:
            self._generation += 1
            while True:
                try:
                    self._commands.get_nowait()
                except queue.Empty:
                    break
            self.synthesizer.request_stop()
        self._put(_Command("reset"))  # the synthesizer's state is reset in its own thread

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every queued command has been handled."""
        return self._idle.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        self._commands.put(_Command("stop"))
        self._thread.join(timeout)

    def _put(self, command: _Command) -> None:
        self._idle.clear()
        self._commands.put(command)  # blocks when full: the producer is paced, nothing is dropped

    def _run(self) -> None:
        while True:
            command = self._commands.get()
            if command.kind == "stop":
                self._idle.set()
                return
            with self._lock:
                generation = self._generation

            def deliver(piece: AudioPiece, generation: int = generation) -> None:
                if generation != self._generation:  # pieces made after a cancel are dropped
                    return
                if self._held or self._short_restart(piece):
                    self._held.append((generation, piece))
                    if sum(p.audio_s for _, p in self._held) >= self.restart_min_s:
                        self._release()
                    return
                self._emit(piece)

            self.synthesizer.on_piece = deliver
            self._apply_pace()
            if command.kind != "tick":
                self._command_at = command.at_s
            try:
                if self.clock is None:
                    self._handle(command)
                else:
                    if command.at_s is not None:
                        self.clock.sleep_until(command.at_s)
                    with self.clock.compute() as span:
                        self._span = span
                        self._handle(command)
                    self._span = None
            except Exception as exc:  # keep the worker alive; the owner decides what to show
                self._span = None
                log.exception("synthesis failed")
                self._release_after_error()
                if self._on_error is not None:
                    self._on_error(exc)
            if self._commands.empty():
                self._idle.set()

    def _handle(self, command: _Command) -> None:
        if command.kind in ("feed", "tick") and self.driver is not None:
            self._decide(command)
            return
        if command.kind in ("feed", "tick"):
            synthesizer = self.synthesizer
            made = []
            if command.kind == "feed" and command.words and self._waiting_since is None:
                self._waiting_since = command.at_s
            # A sentence's first words wait for their lookahead even when the voice is silent (the silence before a
            # sentence is a pause). Once the speaker has paused after them (a phrase said on its own, "one, two"),
            # they are spoken as words that waited too long are: the lookahead may be seconds away. Later in a
            # sentence a voice running low speaks its words anyway, and after a comma it waits for a phrase chunk.
            overdue = self._waited_too_long() or (command.paused and not synthesizer.sentence_started)
            urgency = Urgency(resuming=self._silent(), overdue=overdue, urgent=overdue or self._urgent())
            move = self._move(command)
            policy = waiting = synthesizer.policy
            if move == WAIT and isinstance(policy, LookaheadPolicy):
                synthesizer.policy = waiting = replace(policy, k=policy.k + 1)
            try:
                if command.kind == "feed":
                    made = synthesizer.feed(command.words, command.hint, hurry=self._should_hurry(), urgency=urgency)
                if self._should_hurry():
                    made += synthesizer.hurry(sentence_start=overdue, urgency=urgency)
                self._restore(policy, waiting)
                if move == NOW:
                    made += self._speak_now(urgency)
                if any(piece.hurried for piece in made):
                    self.hurried += 1
                self._release()  # before a speculation's compute
                if self._should_hurry():  # still low: make the next tentative words ready in case they come
                    # the pieces just made restarted a silent voice: it is no longer resuming, and the tentative
                    # words need not make a whole phrase chunk (they seldom do, so nothing was made ahead)
                    synthesizer.speculate(replace(urgency, resuming=self._silent()))
            finally:
                self._restore(policy, waiting)
            if not synthesizer.unspoken_words:
                self._waiting_since = None
            return
        if command.kind == "end_sentence":
            self.synthesizer.end_sentence()
        elif command.kind == "flush":
            self.synthesizer.flush()
        elif command.kind == "reset":
            self.synthesizer.cancel()  # pieces still held were made before the cancel: ``_release`` drops them
            self._voice_until = None  # the owner stops the voice with a cancel
        self._release()
        self._waiting_since = None  # each of these leaves no fed word waiting

    def _apply_pace(self) -> None:
        """The latest pace's policy and rate, in this thread (the synthesizer and the voice are this thread's)."""
        pace = self._pace
        if pace is self._applied:
            return
        if pace.policy is not None and (self._applied is None or pace.policy is not self._applied.policy):
            self.synthesizer.policy = pace.policy
        self._applied = pace
        self._apply_rate()

    def _apply_rate(self) -> None:
        rate = self._pace.rate
        if rate is not None and self.synthesizer.voice.rate != rate:
            self.synthesizer.voice.rate = rate

    def _move(self, command: _Command) -> int:
        """The learned policy's move for this step (``RULE`` without one): asked before the step's words are fed,
        when the step brings words or fed words wait."""
        advisor = self.advisor
        if advisor is None:
            return RULE
        synthesizer = self.synthesizer
        now = self._now()
        words = command.words if command.kind == "feed" else ()
        hint = command.hint if command.kind == "feed" else None
        advisor.heard(words, hint, command.at_s if command.at_s is not None else now)
        if not words and not synthesizer.unspoken_words:
            return RULE
        in_hand = self._audio_in_hand(now) if self._audio_in_hand is not None else 0.0
        waiting = now - self._waiting_since if self._waiting_since is not None else 0.0
        return advisor.decide(
            now,
            synthesizer.pending_phonemes(),
            words,
            hint or (),
            in_hand,
            self.hurry_below_s,
            waiting,
            self.next_step_s,
        )

    def _restore(self, policy: TtsPolicy, waiting: TtsPolicy) -> None:
        """The synthesizer's policy back from a ``WAIT`` (unless the session has set another meanwhile)."""
        if self.synthesizer.policy is waiting:
            self.synthesizer.policy = policy

    def _speak_now(self, urgency: Urgency) -> list[AudioPiece]:
        """The learned policy's ``NOW``: every fed word still waiting is spoken at once (the last chunk short if need
        be), with the lookahead there is and the whole left context."""
        synthesizer = self.synthesizer
        if not synthesizer.unspoken_words:
            return []
        return synthesizer.hurry(sentence_start=True, urgency=replace(urgency, urgent=True, short_context=False))

    def _decide(self, command: _Command) -> None:
        """One READ/SPEAK decision of the driver's agent on this step's words."""
        assert self.driver is not None
        if command.kind == "feed":
            self._hint = command.hint
        now = self._now()
        in_hand = self._audio_in_hand(now) if self._audio_in_hand is not None else 0.0
        at = command.at_s if command.at_s is not None else now
        self.driver.step(command.words, at, in_hand, hint=self._hint)
        self._release()

    def _short_restart(self, piece: AudioPiece) -> bool:
        """``piece`` would start the voice from silence and end before another could follow it (a sentence's last
        piece never waits: a pause may follow it), and its words came after the voice fell silent."""
        return 0 < piece.audio_s < self.restart_min_s and not piece.sentence_end and self._silent() and self._starved()

    def _starved(self) -> bool:
        """The voice fell silent before the words being made arrived, so a wait now is the speaker's (METRICS.md's
        ``starved_s``). Had they come while it still spoke, holding their piece would itself make a gap whose words
        were there, an underrun, for one that might never come (the sonnet at ``--cpu-slowdown 2``: both underruns
        of a run were pieces held so, whose next pieces were ready before they would have ended)."""
        until, arrived = self._voice_until, self._command_at
        return until is None or arrived is None or until < arrived

    def _emit(self, piece: AudioPiece) -> None:
        """Hand ``piece`` on and note when the voice will now end."""
        self._on_piece(piece)
        self._apply_rate()  # the piece played at once (a file run) may have set the voice catching up
        if self._audio_in_hand is not None:
            now = self._now()
            self._voice_until = now + self._audio_in_hand(now)

    def _release_after_error(self) -> None:
        """The pieces held before a failure are still spoken."""
        try:
            self._release()
        except Exception:
            self._held.clear()
            log.exception("pieces held before the failure could not be delivered")

    def _release(self) -> None:
        """Deliver the held pieces, in order (none made before a cancel)."""
        held, self._held = self._held, []
        for generation, piece in held:
            if generation == self._generation:
                self._emit(piece)

    def _waited_too_long(self) -> bool:
        """The oldest fed word not yet in a piece arrived more than ``max_wait_s`` ago."""
        if self._waiting_since is None:
            return False
        return self._now() - self._waiting_since > self.max_wait_s

    def _now(self) -> float:
        span = self._span
        if span is not None:
            return span.now_s()
        return self.clock.now() if self.clock is not None else time.monotonic()

    def _silent(self) -> bool:
        """The voice has nothing left to play: it waits for words (holding back words while it still speaks would
        make a gap whose words were there, an underrun)."""
        return self._audio_in_hand is not None and self._audio_in_hand(self._now()) <= SILENT_S

    def _urgent(self) -> bool:
        """Less than ``URGENT_FRACTION`` of the hurry threshold in hand: the voice runs out before another command
        comes and its piece is made (the threshold is sized for two such rounds, ``pipeline.pace``)."""
        return self._in_hand_below(URGENT_FRACTION * self.hurry_below_s)

    def _should_hurry(self) -> bool:
        return self._in_hand_below(self.hurry_below_s)

    def _in_hand_below(self, seconds: float) -> bool:
        """Less voice than ``seconds`` left to play (never without ``audio_in_hand`` or a hurry threshold)."""
        if self._audio_in_hand is None or self.hurry_below_s <= 0:
            return False
        return self._audio_in_hand(self._now()) < seconds
