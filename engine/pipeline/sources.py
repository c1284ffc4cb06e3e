"""What a live session hears: the microphone, this computer's sound (an output's monitor), or a named source.

Choosing a source also chooses the route against the voice's echo. When the capture is the monitor of the output
the voice plays on, the voice would be heard again: its own samples, known exactly, are cancelled there (the echo
guard ``cancel`` on the digital path), or with ``gate`` asked for, the source is not heard while the voice plays.
When the voice plays elsewhere (headphones on another output), nothing is needed.

``plan_source`` says what a choice means (the window shows it before Start); ``open_source`` opens it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine.audio.devices import AudioDeviceError, server_name
from engine.pipeline.config import ShadowConfig

if TYPE_CHECKING:
    from engine.audio.capture import Capture
    from engine.audio.ports import CaptureDevice
    from engine.audio.server_capture import ServerCapture

log = logging.getLogger(__name__)

MIC, SYSTEM = "mic", "system"


@dataclass
class SourcePlan:
    device: int | str | None  # what to open: a PortAudio device (``Capture``), or a server source's name
    server: bool  # opened through the sound server (``ServerCapture``)
    label: str  # what the window and the terminal call it
    route: str  # how the voice's echo is kept out, in words
    config: ShadowConfig  # the session's settings, with the echo guard the route needs
    system: bool = False  # this computer's sound (ducking applies)
    loops: bool = False  # the voice plays on the output captured: its own sound is gated or cancelled, not ducked


@dataclass
class LiveSource(SourcePlan):
    capture: CaptureDevice | None = None  # ``audio.capture.Capture`` or ``audio.server_capture.ServerCapture``


def plan_source(source: str, config: ShadowConfig) -> SourcePlan:
    """``source``: "mic" (the input device of ``config``), "system" (the default output's monitor), or the name or
    description of a sound-server source. Raises ``AudioDeviceError`` with what to do when it cannot be had."""
    from engine.audio import sound_server

    if source == MIC:
        guard = config.echo_guard
        route = "headphones (no echo guard)" if guard == "off" else f"speakers: the voice's echo is {_GUARDED[guard]}"
        return SourcePlan(config.input_device, False, "microphone", route, config)
    if source == SYSTEM:
        device = sound_server.monitor_source()
    else:
        found = sound_server.find_source(server_name(source) or source)
        if found is None:  # a PortAudio input device by name or index
            return SourcePlan(source, False, f"input {source!r}", "as the microphone", config)
        device = found
    if device.kind != "monitor":
        return SourcePlan(device.name, True, device.description, "as the microphone", config)
    voice_output = config.output_device if isinstance(config.output_device, str) else None
    loops = device.monitor_of == _voice_sink(voice_output)
    heard = device.description.removeprefix("Monitor of ")
    if loops and config.echo_guard == "gate":  # asked for
        route = (
            f"the voice plays on {heard}, which is heard: the source is not heard while the voice plays (gate); "
            "to hear every word, choose the echo guard cancel or play the voice on another output"
        )
    elif loops:
        route = f"the voice plays on {heard}, which is heard: the voice's own sound is cancelled from it"
        config = replace(config, echo_guard="cancel", echo_hint_ms=0.0, echo_path="digital")
    else:
        route = "the voice plays on another output: nothing to cancel"
    return SourcePlan(
        device.name, True, f"this computer's sound ({device.description})", route, config, system=True, loops=loops
    )


_GUARDED = {"gate": "gated (not heard while the voice plays)", "cancel": "cancelled"}


def open_source(source: str, config: ShadowConfig) -> LiveSource:
    """The planned source with its capture made (not yet started)."""
    plan = plan_source(source, config)
    return LiveSource(**plan.__dict__, capture=capture_for(plan))


def capture_for(plan: SourcePlan) -> Capture | ServerCapture:
    """The capture a plan opens (not yet started): through the sound server, or a PortAudio input device."""
    from engine.audio.capture import Capture
    from engine.audio.server_capture import ServerCapture

    return ServerCapture(str(plan.device), plan.label) if plan.server else Capture(plan.device)


def ducked(plan: SourcePlan, duck_db: float | None = None, no_duck: bool = False) -> ShadowConfig:
    """The session's settings with the duck asked for (``duck_db``; None: the default), or none (``no_duck``).
    This computer's sound is ducked by default with the voice on another output; on the output it hears, ducking
    would lower the speaker below the voice's own sound, so only when asked."""
    from engine.audio.sound_server import DEFAULT_DUCK_DB

    if not plan.system:
        return plan.config if duck_db is None else replace(plan.config, duck_db=duck_db)
    default = 0.0 if plan.loops else DEFAULT_DUCK_DB
    return replace(plan.config, duck_db=0.0 if no_duck else (default if duck_db is None else duck_db))


def _voice_sink(output: str | None) -> str | None:
    """The server output the voice plays on: a server output named by ``output``, else the default output."""
    from engine.audio import sound_server

    output = server_name(output) or output
    try:
        devices = sound_server.server_devices()
        return (output and sound_server.output_name(output, devices)) or sound_server.output_name(None, devices)
    except AudioDeviceError:
        return None
