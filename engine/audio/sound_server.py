"""The sound server's own view of the devices (PulseAudio, or PipeWire through its PulseAudio server), and ducking.

PortAudio on a PulseAudio/PipeWire desktop shows one device, "default (ALSA)". The server knows the real ones by
the names people know them by ("Built-in Audio Analog Stereo", "Monitor of Headphones"); ``pulsectl`` (MIT) asks
it. A *monitor* is what plays on an output: capturing it hears this computer's sound.

Ducking lowers the other applications' streams while the voice speaks (their sink inputs' volumes) and restores
them when it pauses. What was lowered is also written to a small file first, so a liveshadow that crashed while
ducking has the streams restored at its next start (``restore_leftover_duck``).
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from engine.audio.devices import AudioDeviceError

log = logging.getLogger(__name__)

CLIENT = "liveshadow"
DEFAULT_DUCK_DB = 15.0
Kind = Literal["microphone", "monitor", "output"]


@dataclass(frozen=True, slots=True)
class ServerDevice:
    name: str  # the server's stable name (remembered by the settings): "alsa_output.pci-0000_00_1f.3.analog-stereo"
    description: str  # what people call it: "Built-in Audio Analog Stereo"
    kind: Kind
    monitor_of: str | None = None  # a monitor: the output it hears
    is_default: bool = False
    speakers: bool | None = None  # an output: its active port is speakers (True), headphones (False), or not said

    @property
    def label(self) -> str:
        return f"{self.description} (default)" if self.is_default else self.description


@contextmanager
def _pulse() -> Iterator[object]:
    try:
        import pulsectl
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise AudioDeviceError("talking to the sound server needs the 'pulsectl' package") from exc
    try:
        client = pulsectl.Pulse(CLIENT)
    except pulsectl.PulseError as exc:
        raise AudioDeviceError(
            "no PulseAudio or PipeWire sound server answered; start it (or use PipeWire's pipewire-pulse) to "
            "capture this computer's sound"
        ) from exc
    try:
        yield client
    finally:
        client.close()


def server_devices() -> list[ServerDevice]:
    """Microphones, the monitors of the outputs, and the outputs, as the sound server names them."""
    with _pulse() as pulse:
        info = pulse.server_info()  # type: ignore[attr-defined]
        sinks = {s.index: s for s in pulse.sink_list()}  # type: ignore[attr-defined]
        devices = []
        for source in pulse.source_list():  # type: ignore[attr-defined]
            monitored = sinks.get(source.monitor_of_sink)
            devices.append(
                ServerDevice(
                    source.name,
                    source.description,
                    "monitor" if monitored is not None else "microphone",
                    monitored.name if monitored is not None else None,
                    source.name == info.default_source_name,
                )
            )
        for sink in sinks.values():
            devices.append(
                ServerDevice(
                    sink.name, sink.description, "output", None, sink.name == info.default_sink_name, _speakers(sink)
                )
            )
    return devices


def _speakers(sink: object) -> bool | None:
    """Whether an output plays on speakers, from its active port ("analog-output-speaker", "…-headphones")."""
    port = getattr(sink, "port_active", None)
    words = f"{getattr(port, 'name', '')} {getattr(port, 'description', '')}".lower()
    if "headphone" in words or "headset" in words:
        return False
    if "speaker" in words:
        return True
    return None


def default_output() -> str:
    """The name of the output the server plays on by default."""
    with _pulse() as pulse:
        return str(pulse.server_info().default_sink_name)  # type: ignore[attr-defined]


def output_name(output: str | None, devices: list[ServerDevice]) -> str | None:
    """The server's name of the output named or described ``output`` (None: the default output); None when no
    output is known by it."""
    if output is None:
        return next((d.name for d in devices if d.kind == "output" and d.is_default), None) or default_output()
    return next((d.name for d in devices if d.kind == "output" and output in (d.name, d.description)), None)


def monitor_source(output: str | None = None) -> ServerDevice:
    """The monitor of ``output`` (its name or description; None: the default output): this computer's sound."""
    devices = server_devices()
    target = output_name(output, devices) or output
    for device in devices:
        if device.kind == "monitor" and device.monitor_of == target:
            return device
    outputs = ", ".join(d.description for d in devices if d.kind == "output") or "none"
    raise AudioDeviceError(f"no monitor of the output {target!r} (outputs: {outputs})")


def find_source(name: str) -> ServerDevice | None:
    """The server's source named (or described) ``name``; None when the server has none by that name."""
    try:
        devices = server_devices()
    except AudioDeviceError:
        return None
    return next((d for d in devices if d.kind != "output" and name in (d.name, d.description)), None)


def _state_file() -> Path:
    from engine import paths

    return paths.data_dir() / "duck.json"


def volume_factor(db: float) -> float:
    """The factor on a stream's volume that lowers its sound by ``db``: the server's volume scale is cubic in
    amplitude (a volume of 0.5 is −18 dB), so a factor of 10^(−db/20) would lower it three times as much."""
    return 10 ** (-db / 60)


DUCK_SETTLE_S = 0.3  # a lowering is undone in a capture from this long after it was made (see Ducker.gain_at)


class Ducker:
    """Lowers every other application's stream by ``db`` while ``set(True)``; ``set(False)`` restores them.

    Thread-safe; ``close()`` restores and forgets. Streams that start while ducked are lowered at the next
    ``set(True)`` after a restore. With a ``clock``, ``gain_at(t)`` tells by how much the other streams were lowered
    at time ``t`` (a capture of them can be raised back by as much)."""

    def __init__(
        self, db: float = DEFAULT_DUCK_DB, state_file: Path | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        if not 0 < db <= 60:
            raise ValueError(f"ducking lowers by 1 to 60 dB, not {db}")
        self.db = db
        self.state_file = state_file or _state_file()
        self._saved: dict[int, list[float]] = {}  # sink input → its volumes before ducking
        self._lock = threading.Lock()
        self.ducked = False
        self.times_ducked = 0
        self._clock = clock
        self._changes: collections.deque[tuple[float, bool]] = collections.deque(maxlen=256)

    def gain_at(self, t_s: float) -> float:
        """The gain to undo at ``t_s`` on ``clock``: the duck's from ``DUCK_SETTLE_S`` after each lowering to the
        next restore, 1 elsewhere.

        A change is heard in a capture some time after it is made (the server's buffers), and a capture's times are
        known only as well as its latency. Raising sound that was not lowered makes it 15 dB too loud, which loses
        words; leaving lowered sound as it is only makes it quiet for a moment. So the duck is undone only once it
        is surely heard, and no longer from the moment it is lifted."""
        ducked_at: float | None = None
        for at, state in list(self._changes):
            if at > t_s:
                break
            ducked_at = at if state else None
        if ducked_at is None or t_s - ducked_at < DUCK_SETTLE_S:
            return 1.0
        return 10 ** (-self.db / 20)

    def raise_back(self, samples: np.ndarray, start_s: float, rate: int) -> np.ndarray:
        """A capture block of the other streams (its first sample at ``start_s`` on ``clock``) with the duck undone
        sample by sample, as ``gain_at`` says: a block the restore falls in is raised only up to it (raised whole,
        its end came 15 dB too loud, the sound no longer lowered)."""
        out: np.ndarray | None = None
        ducked_at: float | None = None
        end_s = start_s + samples.size / rate
        for at, state in [*list(self._changes), (float("inf"), False)]:
            if state:
                ducked_at = at if ducked_at is None else ducked_at
                continue
            if ducked_at is not None:
                lo, hi = max(ducked_at + DUCK_SETTLE_S, start_s), min(at, end_s)
                if hi > lo:
                    out = samples.copy() if out is None else out
                    a, b = int(round((lo - start_s) * rate)), int(round((hi - start_s) * rate))
                    out[a:b] /= 10 ** (-self.db / 20)
            ducked_at = None
            if at >= end_s:
                break
        return samples if out is None else out

    def set(self, duck: bool) -> None:
        with self._lock:
            if duck == self.ducked:
                return
            # a restore counts from before it is made (the capture must not raise what is no longer lowered), a
            # lowering from after (it is undone only once surely heard)
            before = self._clock() if self._clock is not None and not duck else None
            try:
                self._duck() if duck else self._restore()
            except AudioDeviceError as exc:
                log.warning("ducking: %s", exc)
                return
            if self._clock is not None:
                self._changes.append((before if before is not None else self._clock(), duck))

    def close(self) -> None:
        self.set(False)

    def _duck(self) -> None:
        factor = volume_factor(self.db)
        own = str(os.getpid())
        with _pulse() as pulse:
            inputs = [
                i
                for i in pulse.sink_input_list()  # type: ignore[attr-defined]
                if i.proplist.get("application.process.id") != own
            ]
            self._saved = {i.index: list(i.volume.values) for i in inputs}
            self._write_state()
            for item in inputs:
                volume = item.volume
                volume.values = [v * factor for v in volume.values]
                _set_volume(pulse, item, volume)
        self.ducked = True
        self.times_ducked += 1

    def _restore(self) -> None:
        with _pulse() as pulse:
            _restore_volumes(pulse, self._saved)
        self._saved = {}
        self.state_file.unlink(missing_ok=True)
        self.ducked = False

    def _write_state(self) -> None:
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        state = {"server": os.environ.get("PULSE_SERVER", ""), "volumes": self._saved}
        self.state_file.write_text(json.dumps(state), encoding="utf-8")


def _restore_volumes(pulse: object, saved: dict[int, list[float]]) -> int:
    present = {i.index: i for i in pulse.sink_input_list()}  # type: ignore[attr-defined]
    restored = 0
    for index, values in saved.items():
        item = present.get(int(index))
        if item is None:  # the stream ended meanwhile
            continue
        volume = item.volume
        if len(volume.values) == len(values):
            volume.values = values
            restored += _set_volume(pulse, item, volume)
    return restored


def _set_volume(pulse: object, item: object, volume: object) -> bool:
    """Set a stream's volume; False when the stream ended between listing it and now (not an error)."""
    import pulsectl

    try:
        pulse.volume_set(item, volume)  # type: ignore[attr-defined]
    except pulsectl.PulseOperationFailed:
        log.debug("the stream %s ended before its volume was set", getattr(item, "index", "?"))
        return False
    return True


def restore_leftover_duck(state_file: Path | None = None) -> int:
    """Restore the streams a liveshadow that did not stop cleanly left lowered; returns how many were restored."""
    path = state_file or _state_file()
    if not path.is_file():
        return 0
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("server", "") != os.environ.get("PULSE_SERVER", ""):
            return 0  # another sound server's streams: not ours to touch
        with _pulse() as pulse:
            restored = _restore_volumes(pulse, {int(k): v for k, v in state.get("volumes", {}).items()})
    except (OSError, ValueError, AudioDeviceError) as exc:
        log.warning("could not restore the streams lowered by an earlier session: %s", exc)
        return 0
    path.unlink(missing_ok=True)
    if restored:
        log.info("restored %d stream(s) an earlier session left lowered", restored)
    return restored
