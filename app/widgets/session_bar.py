"""The row of the window's session buttons: Start, Stop, Cancel, Export…, Sessions…, Models…, Settings, with the
preset in use and the session's state."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

EXPORT_SESSION_TIP = "Copy the last session's folder: audio, captions, transcript, metrics (Ctrl+E)"


class SessionBar(QWidget):
    """The buttons (connected by the window); ``settings`` is the settings dock's show/hide action."""

    def __init__(self, settings: QAction) -> None:
        super().__init__()
        self.start_button = _button("Start", "Start shadowing (Space or Ctrl+Enter)")
        self.stop_button = _button(
            "Stop", "Stop listening; what was already heard is still spoken (Space or Ctrl+Enter)"
        )
        self.cancel_button = _button("Cancel", "Stop at once; pending words are dropped (Esc)")
        self.export_button = _button("Export…", EXPORT_SESSION_TIP)
        self.sessions_button = _button("Sessions…", "Past sessions: open one again, replay its speaker and voice")
        self.models_button = _button("Models…", "The installed voices and recognizer models: add, use, remove")
        settings.setText("Settings")
        settings.setToolTip("Show or hide the settings: presets, recognizer, voice, chunk sizes")
        settings_tool = QToolButton()
        settings_tool.setDefaultAction(settings)
        settings_tool.setAccessibleName("Settings")
        self.preset_label = QLabel()
        self.preset_label.setAccessibleName("Preset")
        self.status_label = QLabel("Ready")
        self.status_label.setAccessibleName("Session state")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for button in (
            self.start_button,
            self.stop_button,
            self.cancel_button,
            self.export_button,
            self.sessions_button,
            self.models_button,
        ):
            row.addWidget(button)
        row.addWidget(settings_tool)
        row.addWidget(self.preset_label)
        row.addStretch(1)
        row.addWidget(self.status_label)


def _button(text: str, tip: str) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    button.setAccessibleName(text.rstrip("…"))
    return button
