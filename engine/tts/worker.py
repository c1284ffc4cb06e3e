"""Runs the incremental synthesizer in a background thread behind a bounded command queue.

Commands are handled in order, except ``cancel``, which takes effect at once: it drops queued commands and
stops a synthesis under way before its next chunk.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.tts.pieces import AudioPiece
from engine.tts.synthesizer import IncrementalSynthesizer

log = logging.getLogger(__name__)

COMMAND_QUEUE_SIZE = 256


@dataclass(frozen=True, slots=True)
class _Command:
    kind: str  # "feed", "end_sentence", "flush", "reset", "stop"
    words: tuple[str, ...] = ()


class SynthesisWorker:
    """``feed``/``end_sentence``/``flush``/``cancel`` from any thread; pieces go to ``on_piece`` in the worker thread.

    ``on_error`` receives an exception raised by the synthesizer; the worker then keeps serving commands.
    """

    def __init__(
        self,
        synthesizer: IncrementalSynthesizer,
        on_piece: Callable[[AudioPiece], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.synthesizer = synthesizer
        self._on_piece = on_piece
        self._on_error = on_error
        self._commands: queue.Queue[_Command] = queue.Queue(COMMAND_QUEUE_SIZE)
        self._generation = 0  # bumped by cancel: pieces of an older generation are dropped
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._run, name="tts-worker", daemon=True)
        self._thread.start()

    def feed(self, words: Sequence[str] | str) -> None:
        self._put(_Command("feed", (words,) if isinstance(words, str) else tuple(words)))

    def end_sentence(self) -> None:
        self._put(_Command("end_sentence"))

    def flush(self) -> None:
        self._put(_Command("flush"))

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
                if generation == self._generation:  # pieces made after a cancel are dropped
                    self._on_piece(piece)

            self.synthesizer.on_piece = deliver
            try:
                if command.kind == "feed":
                    self.synthesizer.feed(command.words)
                elif command.kind == "end_sentence":
                    self.synthesizer.end_sentence()
                elif command.kind == "flush":
                    self.synthesizer.flush()
                else:
                    self.synthesizer.cancel()
            except Exception as exc:  # keep the worker alive; the owner decides what to show
                log.exception("synthesis failed")
                if self._on_error is not None:
                    self._on_error(exc)
            if self._commands.empty():
                self._idle.set()
