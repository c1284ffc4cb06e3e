"""What the stages need of an audio device, as Protocols: a source of captured blocks and the voice's player.

The devices are ``capture.Capture`` and ``player.Player``; the taps that record or clean a capture on its way
(``pipeline.intake``, ``practice.tap``), the simulated room and the tests' doubles have the same shapes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from engine.audio.block import AudioBlock

if TYPE_CHECKING:
    from engine.audio.player import PlayedPiece


class BlockSource(Protocol):
    """Blocks of captured audio, their start times on the capture clock (0 = its first sample)."""

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        """The next block, or None when none came within ``timeout``."""
        ...

    def read_available(self) -> list[AudioBlock]:
        """Every block waiting, without blocking."""
        ...

    def check(self) -> None:
        """Raise ``AudioDeviceError`` when the device has gone away."""
        ...


class CaptureDevice(BlockSource, Protocol):
    """A block source that is started and stopped (a microphone, this computer's sound)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class VoicePlayer(Protocol):
    """Plays the voice's pieces and reports when each one's first and last sample reached the speaker."""

    @property
    def device_rate(self) -> int: ...

    @property
    def buffered_s(self) -> float:
        """Seconds of voice written and not yet played."""
        ...

    def start(self) -> None: ...

    def enqueue(self, samples: np.ndarray, key: object = None, last: bool = False) -> None: ...

    def poll(self) -> list[PlayedPiece]:
        """Bring the play times up to date (and hand the played blocks to ``on_output``)."""
        ...

    def take_finished(self) -> list[PlayedPiece]:
        """The pieces that finished playing since the last call, with their times."""
        ...

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything written has played; False when ``timeout`` came first."""
        ...

    def check(self) -> None:
        """Raise when the device has gone away."""
        ...

    def close(self) -> None: ...
