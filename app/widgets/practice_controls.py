"""The Practise mode's own settings, above its view: the source's speed (pitch kept) and how it plays: straight
through to shadow, or sentence by sentence to listen and repeat. Remembered between sessions."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSlider, QWidget

from engine.audio.stretch import SPEEDS

KEY_SPEED = "practice/speed"
KEY_SENTENCES = "practice/sentence_by_sentence"


def speed_text(speed: float) -> str:
    return f"{speed:g}×"


class PracticeControls(QWidget):
    changed = Signal()

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.speed_slider = QSlider(Qt.Orientation.Horizontal)
        self.speed_slider.setRange(0, len(SPEEDS) - 1)
        self.speed_slider.setPageStep(1)
        self.speed_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.speed_slider.setAccessibleName("Speed")
        self.speed_slider.setToolTip("Play the recording slower (or faster) with its pitch kept: your EVS and the "
                                     "words are timed on it as it plays")  # fmt: skip
        self.speed_label = QLabel()
        self.speed_label.setMinimumWidth(40)
        self.sentences = QCheckBox("Sentence by sentence (listen, then repeat)")
        self.sentences.setToolTip("Each sentence plays, then a pause as long as it lets you say it after it; every "
                                  "sentence is scored. Off: you shadow the recording as it plays.")  # fmt: skip
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Speed"))
        layout.addWidget(self.speed_slider, 1)
        layout.addWidget(self.speed_label)
        layout.addSpacing(16)
        layout.addWidget(self.sentences)
        self._load()
        self.speed_slider.valueChanged.connect(self._save)
        self.sentences.toggled.connect(self._save)

    def speed(self) -> float:
        return SPEEDS[self.speed_slider.value()]

    def set_speed(self, speed: float) -> None:
        self.speed_slider.setValue(min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - speed)))

    def sentence_by_sentence(self) -> bool:
        return self.sentences.isChecked()

    def for_recording(self, recording: bool, interpreting: bool = False) -> None:
        """This computer's sound plays at its own speed and has no sentences ahead: only a recording has these. An
        interpreting practice is timed per sentence already."""
        self.speed_slider.setEnabled(recording)
        self.sentences.setEnabled(recording and not interpreting)

    def _load(self) -> None:
        self.set_speed(float(self._settings.value(KEY_SPEED, 1.0, type=float)))
        self.sentences.setChecked(bool(self._settings.value(KEY_SENTENCES, False, type=bool)))
        self.speed_label.setText(speed_text(self.speed()))

    def _save(self) -> None:
        self.speed_label.setText(speed_text(self.speed()))
        self._settings.setValue(KEY_SPEED, self.speed())
        self._settings.setValue(KEY_SENTENCES, self.sentence_by_sentence())
        self._settings.sync()
        self.changed.emit()
