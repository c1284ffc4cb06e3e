"""The sound server's own view of the devices (PulseAudio, or PipeWire through its PulseAudio server), and what
ducking needs of it.

PortAudio on a PulseAudio/PipeWire desktop shows one device, "default (ALSA)". The server knows the real ones by
the names people know them by ("Built-in Audio Analog Stereo", "Monitor of Headphones"); ``pulsectl`` (MIT) asks
it. A *monitor* is what plays on an output: capturing it hears this computer's sound.

Ducking (``engine.audio.ducker``) lowers the other applications' streams while the voice speaks (their sink inputs'
volumes) and restores them when it pauses. What was lowered is also written to a small file first, so a liveshadow
that crashed while ducking has the streams restored at its next start (``restore_leftover_duck``).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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
def pulse_client() -> Iterator[object]:
    """A connection to the sound server, closed at the end of the block."""
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
    with pulse_client() as pulse:
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
    with pulse_client() as pulse:
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


def state_file_path() -> Path:
    """Where a duck's saved volumes are kept while it lasts (``restore_leftover_duck`` reads it)."""
    from engine import paths

    return paths.data_dir() / "duck.json"


def save_duck_state(path: Path, saved: dict[int, list[float]]) -> None:
    """The volumes a duck is about to lower, kept until it is restored (a crash leaves them for the next start)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {"server": os.environ.get("PULSE_SERVER", ""), "volumes": saved}
    path.write_text(json.dumps(state), encoding="utf-8")


def volume_factor(db: float) -> float:
    """The factor on a stream's volume that lowers its sound by ``db``: the server's volume scale is cubic in
    amplitude (a volume of 0.5 is −18 dB), so a factor of 10^(−db/20) would lower it three times as much."""
    return 10 ** (-db / 60)


def restore_volumes(pulse: object, saved: dict[int, list[float]]) -> int:
    """Set the streams still playing back to the volumes saved for them; returns how many were set."""
    present = {i.index: i for i in pulse.sink_input_list()}  # type: ignore[attr-defined]
    restored = 0
    for index, values in saved.items():
        item = present.get(int(index))
        if item is None:  # the stream ended meanwhile
            continue
        volume = item.volume
        if len(volume.values) == len(values):
            volume.values = values
            restored += set_volume(pulse, item, volume)
    return restored


def set_volume(pulse: object, item: object, volume: object) -> bool:
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
    path = state_file or state_file_path()
    if not path.is_file():
        return 0
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("server", "") != os.environ.get("PULSE_SERVER", ""):
            return 0  # another sound server's streams: not ours to touch
        with pulse_client() as pulse:
            restored = restore_volumes(pulse, {int(k): v for k, v in state.get("volumes", {}).items()})
    except (OSError, ValueError, AudioDeviceError) as exc:
        log.warning("could not restore the streams lowered by an earlier session: %s", exc)
        return 0
    path.unlink(missing_ok=True)
    if restored:
        log.info("restored %d stream(s) an earlier session left lowered", restored)
    return restored
