"""The devices the pickers offer: the sound server's own, by the names people know them by, when a server answers;
PortAudio's otherwise (a desktop without PulseAudio or PipeWire, or another system).

A server's device is offered as ``SERVER_PREFIX`` + its server name: a stable name to remember (the description
may be translated or renamed), which ``engine.audio.devices.opened_as`` opens through PortAudio."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from engine.audio.devices import SERVER_PREFIX, AudioDeviceError, Direction, list_devices

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MenuDevice:
    label: str  # what the picker shows: "Built-in Audio Analog Stereo (default)"
    value: str  # what the settings remember and the session opens
    is_default: bool = False
    speakers: bool | None = None  # an output on speakers (True), on headphones (False), or not known


def menu_devices(direction: Direction) -> list[MenuDevice]:
    """The microphones (``input``) or outputs (``output``) to pick from; ``AudioDeviceError`` when none can be
    listed at all."""
    from engine.audio import sound_server

    try:
        server = sound_server.server_devices()
    except AudioDeviceError as exc:
        log.debug("no sound server: %s; listing PortAudio's devices", exc)
    else:
        kind = "microphone" if direction == "input" else "output"
        return [MenuDevice(d.label, SERVER_PREFIX + d.name, d.is_default, d.speakers) for d in server if d.kind == kind]
    return [MenuDevice(d.label, d.name, d.is_default_input or d.is_default_output) for d in list_devices(direction)]
