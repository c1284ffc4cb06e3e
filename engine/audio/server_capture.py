"""Capture from a sound server's source by name: a microphone, or the monitor of an output (this computer's sound).

PortAudio reaches a PulseAudio/PipeWire desktop through one ALSA device and cannot pick a monitor; ``soundcard``
(BSD) records from any source of the server. Its recorder blocks, so a reader thread does what an audio callback
would: it copies each block into a bounded queue and goes back for the next. The consumer side is ``Capture``'s:
``read``, ``read_available`` (``BlockQueue``), ``check`` (raises when the source went away) and ``stop``.
"""

from __future__ import annotations

import logging
import os
import threading

import numpy as np

from engine.audio.capture import DEFAULT_BLOCK_S, DEFAULT_QUEUE_S, DEFAULT_RATE, BlockQueue
from engine.audio.devices import AudioDeviceError

log = logging.getLogger(__name__)


_connected_under: list[str | None] = []  # the PULSE_SERVER the library last connected under


def _connected_library():
    """soundcard, connected to the sound server of now. It connects once, when imported, so a server restarted
    since (or another one named in ``PULSE_SERVER``, as tests do) would never be reached: a connection found dead, or
    made under another server, is made anew (through the library's module connection, guarded)."""
    import soundcard

    wanted = os.environ.get("PULSE_SERVER")
    if not _connected_under:  # imported just now, under this server
        _connected_under.append(wanted)
        return soundcard
    try:
        from soundcard import pulseaudio

        pulse = pulseaudio._pulse
        ready = pulse._pa_context_get_state(pulse.context) == pulseaudio._pa.PA_CONTEXT_READY
        if not ready or _connected_under[0] != wanted:
            log.info("connecting to the sound server again")
            pulseaudio._pulse = pulseaudio._PulseAudio()
            _connected_under[0] = wanted
    except AttributeError as exc:  # another version of the library: keep its connection
        log.debug("cannot renew the sound server connection: %s", exc)
    return soundcard


class ServerCapture(BlockQueue):
    """Records one channel of the server source ``name`` at ``rate`` (the server resamples)."""

    def __init__(
        self,
        name: str,
        description: str | None = None,
        rate: int = DEFAULT_RATE,
        block_s: float = DEFAULT_BLOCK_S,
        queue_s: float = DEFAULT_QUEUE_S,
    ) -> None:
        super().__init__(rate, block_s, queue_s)
        self.name = name
        self.device = description or name  # how messages name it
        self.blocksize = max(int(block_s * rate), 1)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: str | None = None
        self._started = threading.Event()

    def start(self) -> None:
        try:
            soundcard = _connected_library()
        except (ImportError, OSError, RuntimeError, AssertionError) as exc:  # raised when no sound server answers
            raise AudioDeviceError(f"cannot reach the sound server to record {self.device!r}: {exc}") from exc
        try:
            source = soundcard.get_microphone(self.name, include_loopback=True)
        except (IndexError, ValueError, RuntimeError) as exc:
            raise AudioDeviceError(f"the sound server has no source {self.device!r}: {exc}") from exc
        self._stop.clear()
        self._thread = threading.Thread(target=self._record, args=(source,), name="server-capture", daemon=True)
        self._thread.start()
        self._started.wait(10)
        if self._error is not None:
            raise AudioDeviceError(f"cannot open {self.device!r}: {self._error}")

    def _record(self, source: object) -> None:
        try:
            with source.recorder(samplerate=self.rate, channels=1, blocksize=self.blocksize) as recorder:  # type: ignore[attr-defined]
                self._started.set()
                while not self._stop.is_set():
                    data = recorder.record(numframes=self.blocksize)
                    self._enqueue(np.ascontiguousarray(data[:, 0], np.float32))
        except Exception as exc:  # the source went away, or the server stopped
            log.warning("recording from %s stopped: %s", self.device, exc)
            self._error = str(exc) or type(exc).__name__
        finally:
            self._started.set()

    def check(self) -> None:
        """Raise ``AudioDeviceError`` when recording stopped by itself (the source or the server went away)."""
        thread = self._thread
        if thread is not None and not thread.is_alive() and not self._stop.is_set():
            raise AudioDeviceError(f"the source {self.device!r} stopped delivering audio ({self._error or 'gone'})")

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=2)

    def __enter__(self) -> ServerCapture:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
