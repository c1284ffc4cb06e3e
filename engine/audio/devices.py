"""Audio devices through sounddevice (PortAudio), with errors that say what to do."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Literal

log = logging.getLogger(__name__)

Direction = Literal["input", "output"]
SERVER_PREFIX = "pulse:"  # a device named by the sound server: "pulse:alsa_output.pci-0000_00_1f.3.analog-stereo"
_SERVER_ENV = {"input": "PULSE_SOURCE", "output": "PULSE_SINK"}
_env_lock = threading.Lock()


def device_arg(text: str | None) -> str | int | None:
    """A device as the command line names it: an index (digits) or a name."""
    return int(text) if text is not None and text.isdigit() else text


class AudioDeviceError(RuntimeError):
    """No audio system, or no device that fits: the message says what the user can do."""


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    index: int
    name: str
    hostapi: str
    max_input_channels: int
    max_output_channels: int
    default_samplerate: float
    is_default_input: bool = False
    is_default_output: bool = False

    def supports(self, direction: Direction) -> bool:
        return (self.max_input_channels if direction == "input" else self.max_output_channels) > 0

    @property
    def label(self) -> str:
        return f"{self.name} ({self.hostapi})"


def device_label(device: int | str | None, direction: Direction) -> str:
    """How a message names a device: "the default input device", "the output device 'USB headset'"."""
    if device is None:
        return f"the default {direction} device"
    name = server_name(device)
    return f"the {direction} device {device!r}" if name is None else f"the sound server's {direction} {name!r}"


def server_name(device: int | str | None) -> str | None:
    """The sound server's name of a device given as ``SERVER_PREFIX`` + name, else None."""
    if isinstance(device, str) and device.startswith(SERVER_PREFIX):
        return device[len(SERVER_PREFIX) :]
    return None


@contextmanager
def opened_as(device: int | str | None, direction: Direction) -> Iterator[int | str | None]:
    """The PortAudio device to open (check, query or start a stream on) for ``device``.

    PortAudio sees a PulseAudio/PipeWire desktop as one device, "pulse". A server's own device (``SERVER_PREFIX`` +
    its name, as the window's pickers list them) is opened as "pulse" with the server told which one through
    ``PULSE_SOURCE``/``PULSE_SINK``, which the server's client library reads when the stream is opened."""
    name = server_name(device)
    if name is None:
        yield device
        return
    variable = _SERVER_ENV[direction]
    with _env_lock:
        before = os.environ.get(variable)
        os.environ[variable] = name
        try:
            yield "pulse"
        finally:
            if before is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = before


def stream_stopped(stream: object | None) -> bool:
    """An open PortAudio stream that is no longer active: it stopped by itself (its device went away)."""
    return stream is not None and not stream.active  # type: ignore[attr-defined]


def device_stopped(device: int | str | None, direction: Direction) -> AudioDeviceError:
    """The error for a stream that stopped by itself: its device went away."""
    what = "stopped delivering audio" if direction == "input" else "stopped playing"
    return AudioDeviceError(f"{device_label(device, direction)} {what} (unplugged?)")


def negotiate_rate(device: int | str | None, direction: Direction, rate: int, channels: int = 1) -> int:
    """``rate`` when the device takes it, else the device's own default rate (the caller resamples)."""
    sd = sounddevice_module()
    check = sd.check_input_settings if direction == "input" else sd.check_output_settings
    with opened_as(device, direction) as opened:
        try:
            check(device=opened, samplerate=rate, channels=channels, dtype="float32")
            return rate
        except Exception:  # PortAudioError or ValueError: rate not supported, or no such device
            pass
        try:
            info = sd.query_devices(opened, direction)
        except (ValueError, sd.PortAudioError) as exc:
            raise AudioDeviceError(f"{device_label(device, direction)} is not available: {exc}") from exc
    device_rate = int(info["default_samplerate"])
    log.info("%s %s does not take %d Hz; using %d Hz", direction, info["name"], rate, device_rate)
    return device_rate


def sounddevice_module() -> ModuleType:
    """Import sounddevice, turning a missing PortAudio into an actionable error."""
    try:
        import sounddevice
    except OSError as exc:  # raised at import when libportaudio is missing
        raise AudioDeviceError(
            "the PortAudio library was not found; on Debian/Ubuntu install it with 'sudo apt-get install libportaudio2'"
        ) from exc
    return sounddevice


def rescan() -> None:
    """Make PortAudio look for devices again (after a sound server started or a device was plugged in)."""
    sd = sounddevice_module()
    sd._terminate()
    sd._initialize()


def list_devices(direction: Direction | None = None) -> list[DeviceInfo]:
    """The devices PortAudio sees, optionally only those that can record (input) or play (output)."""
    sd = sounddevice_module()
    try:
        raw = sd.query_devices()
        hostapis = sd.query_hostapis()
        default_in, default_out = sd.default.device
    except sd.PortAudioError as exc:
        raise AudioDeviceError(f"cannot list audio devices: {exc}") from exc
    devices = []
    for entry in raw:
        info = DeviceInfo(
            index=int(entry["index"]),
            name=str(entry["name"]),
            hostapi=str(hostapis[entry["hostapi"]]["name"]),
            max_input_channels=int(entry["max_input_channels"]),
            max_output_channels=int(entry["max_output_channels"]),
            default_samplerate=float(entry["default_samplerate"]),
            is_default_input=int(entry["index"]) == default_in,
            is_default_output=int(entry["index"]) == default_out,
        )
        if direction is None or info.supports(direction):
            devices.append(info)
    log.debug("found %d %s device(s)", len(devices), direction or "audio")
    return devices


def default_device(direction: Direction) -> DeviceInfo:
    """The system's default device for a direction, or the first that fits; a clear error when there is none."""
    devices = list_devices(direction)
    if not devices:
        raise AudioDeviceError(
            f"no audio {direction} device found; connect one, or check that the sound server "
            "(PulseAudio or PipeWire) is running"
        )
    for device in devices:
        if device.is_default_input if direction == "input" else device.is_default_output:
            return device
    return devices[0]
