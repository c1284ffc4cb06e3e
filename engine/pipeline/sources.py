"""What a live session hears: the microphone, this computer's sound (an output's monitor), or a named source.

Choosing a source also chooses the route against the voice's echo. When the capture is the monitor of the output
the voice plays on, the voice would be heard again: it is then gated (not heard while it plays), or with the echo
guard ``cancel`` asked for, cancelled as an exact digital copy (experimental: in the test server's runs the voice
was still heard again). When the voice plays elsewhere (headphones on another output), nothing is needed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from engine.audio.devices import AudioDeviceError
from engine.pipeline.config import ShadowConfig

log = logging.getLogger(__name__)

MIC, SYSTEM = "mic", "system"


@dataclass
class LiveSource:
    capture: object  # engine.audio.capture.Capture or engine.audio.server_capture.ServerCapture
    label: str  # what the window and the terminal call it
    route: str  # how the voice's echo is kept out, in words
    config: ShadowConfig  # the session's settings, with the echo guard the route needs
    system: bool = False  # this computer's sound (ducking applies)
    loops: bool = False  # the voice plays on the output captured: its own sound is cancelled, and not ducked


def open_source(source: str, config: ShadowConfig) -> LiveSource:
    """``source``: "mic" (the input device of ``config``), "system" (the default output's monitor), or the name or
    description of a sound-server source. Raises ``AudioDeviceError`` with what to do when it cannot be had."""
    from engine.audio import sound_server
    from engine.audio.capture import Capture
    from engine.audio.server_capture import ServerCapture

    if source == MIC:
        route = "speakers: " + config.echo_guard if config.echo_guard != "off" else "headphones (no echo guard)"
        return LiveSource(Capture(config.input_device), "microphone", route, config)
    if source == SYSTEM:
        device = sound_server.monitor_source()
    else:
        found = sound_server.find_source(source)
        if found is None:  # a PortAudio input device by name or index
            return LiveSource(Capture(source), f"input {source!r}", "as the microphone", config)
        device = found
    capture = ServerCapture(device.name, device.description)
    if device.kind != "monitor":
        return LiveSource(capture, device.description, "as the microphone", config)
    voice_output = config.output_device if isinstance(config.output_device, str) else None
    loops = device.monitor_of == _voice_sink(voice_output)
    if loops and config.echo_guard == "cancel":  # asked for: the digital path does not yet keep the voice out
        route = (f"the voice plays on {device.description.removeprefix('Monitor of ')}: its own sound is cancelled "
                 "(experimental: the voice may be heard again)")  # fmt: skip
        config = replace(config, echo_hint_ms=0.0, echo_path="digital")
    elif loops:
        route = (f"the voice plays on {device.description.removeprefix('Monitor of ')}: it is not heard while it "
                 "plays (gate); to hear every word, play the voice on another output (--output)")  # fmt: skip
        config = replace(config, echo_guard="gate")
    else:
        route = "the voice plays on another output: nothing to cancel"
    return LiveSource(capture, f"this computer's sound ({device.description})", route, config, system=True, loops=loops)


def _voice_sink(output: str | None) -> str | None:
    """The server output the voice plays on: a server output named by ``output``, else the default output."""
    from engine.audio import sound_server

    try:
        devices = sound_server.server_devices()
        return (output and sound_server.output_name(output, devices)) or sound_server.output_name(None, devices)
    except AudioDeviceError:
        return None
