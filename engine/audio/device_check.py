"""Checking the devices before a session: the microphone's level while idle, and a sound played on the speaker
(the voice's test sentence: ``engine.tts.speaker_check``).

Both say what went wrong in words a user can act on (``AudioDeviceError``): a device that is missing, busy or gone.
"""

from __future__ import annotations

import logging

import numpy as np

from engine.audio.capture import Capture
from engine.audio.devices import AudioDeviceError, device_label
from engine.audio.player import Player

log = logging.getLogger(__name__)

SILENT_DB = -120.0
WHAT_TO_DO = "Choose another speaker, or close the program that is using it, and press Refresh devices."
DRAIN_MARGIN_S = 5.0


def level_db(samples: np.ndarray) -> float:
    """RMS level in dBFS (``SILENT_DB`` for nothing)."""
    if samples.size == 0:
        return SILENT_DB
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return max(20.0 * np.log10(max(rms, 1e-6)), SILENT_DB)


class LevelMonitor:
    """The microphone's level while no session runs. ``level()`` is called from the GUI's timer; the capture's
    callback only enqueues (bounded: a few seconds)."""

    def __init__(self, device: int | str | None) -> None:
        self.device = device
        self._capture = Capture(device, queue_s=2.0)
        self._last_db = SILENT_DB

    def start(self) -> None:
        try:
            self._capture.start()
        except AudioDeviceError as exc:
            busy = "Is another program using the microphone? Choose another one, or close that program."
            raise AudioDeviceError(f"{exc}. {busy}") from exc

    def level(self) -> float:
        """The level of what arrived since the last call (the last level when nothing did)."""
        self._capture.check()
        blocks = self._capture.read_available()
        if blocks:
            self._last_db = level_db(np.concatenate([b.samples for b in blocks]))
        return self._last_db

    def stop(self) -> None:
        self._capture.stop()


def play_on(device: int | str | None, audio: np.ndarray, rate: int, what: str = "the test sentence") -> None:
    """Play ``audio`` on the output ``device`` and wait until it has played; a device that fails is named with what to
    do (``AudioDeviceError``)."""
    seconds = audio.size / rate
    try:
        with Player(rate, device=device) as player:
            player.enqueue(audio, key="test", last=True)
            if not player.drain(timeout=seconds + DRAIN_MARGIN_S):
                player.check()
                raise AudioDeviceError(f"{device_label(device, 'output')} did not play {what} (busy or stalled?)")
    except AudioDeviceError as exc:
        raise AudioDeviceError(f"{exc}. {WHAT_TO_DO}") from exc
    except Exception as exc:  # PortAudio's own errors, e.g. a device that went away
        raise AudioDeviceError(f"cannot play on {device_label(device, 'output')}: {exc}. {WHAT_TO_DO}") from exc
