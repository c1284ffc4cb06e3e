"""The route shown before Start: what is heard, and how the voice's own sound is kept out of it (a loop in orange);
on speakers with no echo guard, the suggestion to cancel the echo, with a button that does it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.widgets.settings_panel import SettingsPanel
from engine.audio.device_menu import MenuDevice
from engine.audio.devices import AudioDeviceError
from engine.pipeline.sources import plan_source

HEADPHONES = (
    "Use headphones. With speakers the voice reaches the microphone and is recognized and spoken again: on "
    "speakers, use echo cancellation (Echo guard “cancel”), which removes the voice's own sound from the microphone."
)
ON_SPEAKERS = (
    "{output} plays on speakers: the voice will reach the microphone and be spoken again. Use echo cancellation "
    "(Echo guard “cancel”), which removes the voice's own sound from the microphone, or headphones."
)
LOOP_COLOUR, ROUTE_COLOUR = "#b36b00", "#555555"
PRACTISE_ROUTE = (
    "Practising: the recording plays on {output} (wear headphones: without them it reaches the "
    "microphone and is scored as you); you are heard on {mic}; liveshadow's voice stays silent."
)
PRACTISE_HEARD_ROUTE = (
    "Practising on this computer's sound: play a talk or a video in another application and shadow it (wear "
    "headphones); you are heard on {mic}; Stop ends the practice and scores it."
)


class RouteBanner(QWidget):
    def __init__(self, use_cancel: Callable[[], None]) -> None:
        super().__init__()
        self.route_label = QLabel()
        self.route_label.setWordWrap(True)
        self.route_label.setAccessibleName("Route")
        self.route_label.setToolTip("What is heard, and how the voice's own sound is kept out of it")
        self.headphones = QLabel(HEADPHONES)
        self.headphones.setWordWrap(True)
        self.headphones.setStyleSheet(f"color: {LOOP_COLOUR};")
        self.headphones.setAccessibleName("Headphones or echo cancellation")
        self.use_cancel_button = QPushButton("Use echo cancellation")
        self.use_cancel_button.setAccessibleName("Use echo cancellation")
        self.use_cancel_button.setToolTip("Set Echo guard to “cancel”: the speaker is heard while the voice plays")
        self.use_cancel_button.clicked.connect(use_cancel)
        suggestion = QHBoxLayout()
        suggestion.addWidget(self.headphones, 1)
        suggestion.addWidget(self.use_cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.route_label)
        layout.addLayout(suggestion)

    def show_route(
        self,
        panel: SettingsPanel,
        output: MenuDevice | None,
        mic: str,
        input_device: str | None,
        output_device: str | None,
    ) -> None:
        """The route for the panel's settings, heard on ``mic`` (its name) and played on ``output``."""
        live = panel.live_source()
        on_speakers = output is not None and bool(output.speakers)
        headphones = output is not None and output.speakers is False
        suggest = live == "mic" and panel.echo_guard.currentText() == "off" and not headphones
        self.headphones.setText(
            ON_SPEAKERS.format(output=output.label) if output is not None and on_speakers else HEADPHONES
        )
        practising = panel.practising()
        self.headphones.setVisible(suggest and not practising)
        self.use_cancel_button.setVisible(suggest and not practising)
        if practising:
            output_name = output.label if output is not None else "the speaker"
            route = PRACTISE_HEARD_ROUTE if live == "system" else PRACTISE_ROUTE
            self._say(route.format(output=output_name, mic=mic), on_speakers)
            return
        if live is None:
            self._say("Hearing a recording: the voice is not heard again.", False)
            return
        try:
            plan = plan_source(live, panel.config(input_device, output_device))
        except (ValueError, AudioDeviceError) as exc:
            self._say(f"Cannot hear {panel.source.currentText().lower()}: {exc}", True)
            return
        heard = mic if live == "mic" else plan.label
        self._say(f"Hearing {heard}; {plan.route}.", plan.loops)

    def _say(self, text: str, loops: bool) -> None:
        self.route_label.setText(text)
        self.route_label.setStyleSheet(f"color: {LOOP_COLOUR if loops else ROUTE_COLOUR};")


def message_label() -> QLabel:
    """The line under the route where errors and warnings are shown (selectable, to copy them)."""
    label = QLabel()
    label.setWordWrap(True)
    label.setAccessibleName("Message")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
