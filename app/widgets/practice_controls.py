"""The Practise mode's own settings, above its view: the source's speed (pitch kept) and how it plays: straight
through to shadow, sentence by sentence to listen and repeat, or an A-B loop of a stretch (its times typed, or the
words selected in the last attempt's transcript); and, interpreting, the language the person interprets into.
Remembered between sessions."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QWidget,
)

from engine.asr.languages import COMMON_LANGUAGES
from engine.audio.stretch import SPEEDS
from engine.practice.loop import MAX_PASSES, UNTIL_STOP, Loop

KEY_SPEED = "practice/speed"
KEY_SENTENCES = "practice/sentence_by_sentence"
KEY_LOOP = "practice/loop"  # on, A, B, passes
KEY_INTO = "practice/into"


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
        self.speed_slider.setToolTip(
            "Play the recording slower (or faster) with its pitch kept: your EVS and the "
            "words are timed on it as it plays"
        )
        self.speed_label = QLabel()
        self.speed_label.setMinimumWidth(40)
        self.sentences = QCheckBox("Sentence by sentence (listen, then repeat)")
        self.sentences.setToolTip(
            "Each sentence plays, then a pause as long as it lets you say it after it; every "
            "sentence is scored. Off: you shadow the recording as it plays."
        )
        self.loop = QCheckBox("Loop from")
        self.loop.setToolTip(
            "Play a stretch again and again, a short gap between passes; every pass is scored, and "
            "the best and the last are shown"
        )
        self.loop_a: QDoubleSpinBox = QDoubleSpinBox()
        self.loop_b: QDoubleSpinBox = QDoubleSpinBox()
        for spin, name in ((self.loop_a, "Loop start (A)"), (self.loop_b, "Loop end (B)")):
            spin.setRange(0.0, 36000.0)
            spin.setDecimals(2)
            spin.setSingleStep(0.5)
            spin.setSuffix(" s")
            spin.setAccessibleName(name)
        self.passes = QSpinBox()
        self.passes.setRange(0, MAX_PASSES)
        self.passes.setSpecialValueText("until Stop")
        self.passes.setSuffix(" times")
        self.passes.setAccessibleName("Loop passes")
        self.loop_selection = QPushButton("Loop the selected words")
        self.loop_selection.setToolTip("Select words in the last attempt's transcript below, then press this")
        self.loop_selection.setEnabled(False)
        self.into = QComboBox()
        self.into.addItem("English", "en")
        for code, name in COMMON_LANGUAGES.items():
            self.into.addItem(f"{name} ({code})", code)
        self.into.setAccessibleName("Interpret into")
        self.into.setToolTip(
            "The language you interpret into. English: the recording's English text is shown word "
            "by word as you say it. Another: you are heard in it (Whisper base) and timed per "
            "sentence; chrF against the recording's name + .es.txt (say) when that lies beside "
            "it"
        )
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        speed = QHBoxLayout()
        speed.addWidget(self.speed_slider, 1)
        speed.addWidget(self.speed_label)
        grid.addWidget(QLabel("Speed"), 0, 0)
        grid.addLayout(speed, 0, 1)
        grid.addWidget(self.sentences, 0, 2)
        loop = QHBoxLayout()
        for widget in (self.loop_a, QLabel("to"), self.loop_b, self.passes, self.loop_selection):
            loop.addWidget(widget)
        loop.addStretch(1)
        grid.addWidget(self.loop, 1, 0)
        grid.addLayout(loop, 1, 1, 1, 2)
        into = QHBoxLayout()
        into.addWidget(QLabel("Interpret into"))
        into.addWidget(self.into)
        into.addStretch(1)
        grid.addLayout(into, 2, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        self._load()
        self.speed_slider.valueChanged.connect(self._save)
        self.sentences.toggled.connect(lambda on: self.loop.setChecked(False) if on else None)
        self.loop.toggled.connect(lambda on: self.sentences.setChecked(False) if on else None)
        for box in (self.sentences, self.loop):
            box.toggled.connect(self._save)
        for field in (self.loop_a, self.loop_b, self.passes):
            field.valueChanged.connect(self._save)
        self.into.currentIndexChanged.connect(self._save)

    def speed(self) -> float:
        return SPEEDS[self.speed_slider.value()]

    def set_speed(self, speed: float) -> None:
        self.speed_slider.setValue(min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - speed)))

    def sentence_by_sentence(self) -> bool:
        return self.sentences.isChecked() and self.sentences.isEnabled()

    def chosen_loop(self) -> Loop | None:
        """The loop chosen (A and B on the source's own clock), or None: the recording straight through."""
        if not self.loop.isChecked() or not self.loop.isEnabled():
            return None
        return Loop(self.loop_a.value(), self.loop_b.value(), self.passes.value() or UNTIL_STOP)

    def interpreting_into(self) -> str | None:
        """The language the person interprets into, None for English (or when not interpreting)."""
        code = str(self.into.currentData())
        return None if code == "en" or not self.into.isEnabled() else code

    def set_loop(self, a_s: float, b_s: float) -> None:
        """A and B from a selection of words; the loop turned on."""
        self.loop_a.setValue(a_s)
        self.loop_b.setValue(b_s)
        self.loop.setChecked(True)

    def for_recording(self, recording: bool, interpreting: bool = False) -> None:
        """This computer's sound plays at its own speed and has no sentences ahead: only a recording has these. An
        interpreting practice is timed per sentence already."""
        self.speed_slider.setEnabled(recording)
        for widget in (self.sentences, self.loop, self.loop_a, self.loop_b, self.passes):
            widget.setEnabled(recording and not interpreting)
        self.into.setEnabled(recording and interpreting)

    def _load(self) -> None:
        s = self._settings
        self.set_speed(float(str(s.value(KEY_SPEED, 1.0, type=float))))
        self.sentences.setChecked(bool(s.value(KEY_SENTENCES, False, type=bool)))
        self.loop.setChecked(bool(s.value(f"{KEY_LOOP}/on", False, type=bool)) and not self.sentences.isChecked())
        self.loop_a.setValue(float(str(s.value(f"{KEY_LOOP}/a_s", 0.0, type=float))))
        self.loop_b.setValue(float(str(s.value(f"{KEY_LOOP}/b_s", 5.0, type=float))))
        self.passes.setValue(int(str(s.value(f"{KEY_LOOP}/passes", 3, type=int))))
        self.into.setCurrentIndex(max(self.into.findData(str(s.value(KEY_INTO, "en", type=str))), 0))
        self.speed_label.setText(speed_text(self.speed()))

    def _save(self) -> None:
        self.speed_label.setText(speed_text(self.speed()))
        s = self._settings
        s.setValue(KEY_SPEED, self.speed())
        s.setValue(KEY_SENTENCES, self.sentences.isChecked())
        for key, value in (
            ("on", self.loop.isChecked()),
            ("a_s", self.loop_a.value()),
            ("b_s", self.loop_b.value()),
            ("passes", self.passes.value()),
        ):
            s.setValue(f"{KEY_LOOP}/{key}", value)
        s.setValue(KEY_INTO, self.into.currentData())
        s.sync()
        self.changed.emit()
