"""Session settings: mode and source (shown in the window's top bar), then the preset and the knobs under it
(recognizer, commit policy, lookahead and chunk sizes, voice, echo guard), shown in a side panel that folds away.

Every value is read from and written to the app's settings, so the next run starts with the same choices. The preset
is not stored: it is whichever preset the knobs match, or "Custom".
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QWidget,
)

from engine.asr.languages import COMMON_LANGUAGES
from engine.audio.media import FILE_FILTER
from engine.modelstore.store import RECOGNIZER, VOICE, ModelInfo
from engine.pipeline.config import AUTO_LANGUAGE, ECHO_GUARDS, ShadowConfig
from engine.pipeline.presets import CUSTOM, PRESETS, Preset, matching, preset

KEY_PREFIX = "session/"
COMMIT_POLICIES = ("la2", "hold2", "waitk", "offline")
# the voice's policy picker: (label, ShadowConfig.tts_policy)
VOICE_POLICIES = (
    ("Lookahead rules", "lookahead"),
    ("Learned (lookahead-1 or now)", "learned"),
    ("Whole sentences", "full"),
)
SOURCE_MIC = "Microphone"
SOURCE_SYSTEM = "This computer's sound"
SOURCE_FILE = "Recording (file)"
LIVE_SOURCES = {SOURCE_MIC: "mic", SOURCE_SYSTEM: "system"}  # the picker's live sources: engine.pipeline.sources
AUTO_DETECTED = "Auto (detected from the first seconds)"
AUTO_ENGLISH = "Auto (English)"  # practising shadowing: the recording is English unless another language is chosen
MODE_SHADOW = "Shadow (English)"
MODE_INTERPRET = "Interpret into English"
MODE_PRACTISE = "Practise shadowing"  # the person shadows a recording and is scored (engine.practice)
MODE_PRACTISE_INTERPRET = "Practise interpreting"  # ... or interprets it (into English, or the language chosen)
RENAMED_MODES = {"Practise interpreting into English": MODE_PRACTISE_INTERPRET}  # as older settings name them


def preset_figures_text(item: Preset | None) -> str:
    """What a preset's figures say, for the label beside the picker."""
    if item is None:
        return "Custom settings: not measured"
    if item.figures is None:
        return item.summary
    f = item.figures
    return (
        f"lag median {f.lag_median_s:.1f} s (p90 {f.lag_p90_s:.1f} s) · wer_spoken {f.wer_spoken:.2f} "
        f"· measured on {f.machine}"
    )


def _add_row(form: QFormLayout, label: str, widget: QWidget) -> None:
    """A form row whose field is named for screen readers by its label."""
    if not widget.accessibleName():
        widget.setAccessibleName(label or widget.objectName())
    form.addRow(label, widget)


def _path_row(edit: QLineEdit, button: QPushButton) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(edit, 1)
    layout.addWidget(button)
    return row


class SettingsPanel(QWidget):
    changed = Signal()

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.source = QComboBox()
        self.source.addItems([SOURCE_MIC, SOURCE_SYSTEM, SOURCE_FILE])
        self.source.setToolTip(
            "Microphone: a person in the room (with headphones, or speakers with Echo guard “cancel”).\n"
            "This computer's sound: what plays on this computer (a call, a lecture, a video). The voice's own sound "
            "is cancelled from it; on another output (headphones) the other applications are lowered while the "
            "voice speaks.\nRecording: an audio or video file (WAV, FLAC, MP3, M4A, Opus, MP4, MKV, WebM…)."
        )
        self.source_file = QLineEdit()
        self.source_file.setPlaceholderText("a recording or video to shadow")
        self.source_browse = QPushButton("Browse…")
        self.source_browse.clicked.connect(lambda: self._browse(self.source_file, FILE_FILTER))
        self.mode = QComboBox()
        self.mode.addItems([MODE_SHADOW, MODE_INTERPRET, MODE_PRACTISE, MODE_PRACTISE_INTERPRET])
        self.mode.setToolTip(
            "Shadow: the English the speaker says, re-voiced. Interpret: another language, spoken in English as it is "
            "recognized (multilingual Whisper base translating; slower than tiny.en). Practise: you shadow (or "
            "interpret) a recording, headphones on, and are scored; the voice stays silent."
        )
        self.language = QComboBox()
        self.language.addItem(AUTO_DETECTED, AUTO_LANGUAGE)
        for code, name in COMMON_LANGUAGES.items():
            self.language.addItem(f"{name} ({code})", code)
        self.backend = QComboBox()
        self.backend.addItems(["whisper", "vosk"])
        self.model = QLineEdit()
        self.model.setPlaceholderText("whisper: bundled tiny.en, or base · vosk: a model folder")
        self.model_browse = QPushButton("Browse…")
        self.model_browse.clicked.connect(self._browse_model)
        self.commit = QComboBox()
        self.commit.addItems(COMMIT_POLICIES)
        self.commit.setToolTip("la2: commit what two hypotheses in a row agree on (Liu et al. 2020)")
        self.policy = QComboBox()
        for label, name in VOICE_POLICIES:
            self.policy.addItem(label, name)
        self.policy.setToolTip(
            "When the voice speaks. Lookahead rules: each chunk waits for k chunks after it, with the hurry and comma "
            "rules below. Learned: lookahead-1, with a policy trained on recordings choosing where waiting words are "
            "spoken at once instead (docs/learned_policy.md). Whole sentences: waits for each sentence's end (the "
            "most natural voice)."
        )
        self.k = QSpinBox()
        self.k.setRange(0, 4)
        self.k.setToolTip("Lookahead chunks the voice waits for before speaking a chunk (Ma et al. 2020)")
        self.first_chunk = QSpinBox()
        self.first_chunk.setRange(4, 60)
        self.chunk = QSpinBox()
        self.chunk.setRange(4, 60)
        self.phrase_chunk = QSpinBox()
        self.phrase_chunk.setRange(0, 60)
        self.phrase_chunk.setSpecialValueText("no pause")
        self.phrase_chunk.setToolTip(
            "After a comma (or ; :) the voice resumes only once this many phonemes of the next words are final, "
            "as a reader pauses there: it keeps its lag steady instead of falling into word-by-word speech. "
            "0 = no pause."
        )
        self.voice = QLineEdit()
        self.voice.setPlaceholderText("bundled en_US-joe-medium")
        self.voice_browse = QPushButton("Browse…")
        self.voice_browse.clicked.connect(lambda: self._browse(self.voice, "Piper voices (*.onnx)"))
        self.voice_rate = QDoubleSpinBox()
        self.voice_rate.setRange(0.5, 2.0)
        self.voice_rate.setSingleStep(0.05)
        self.tentative_lookahead = QCheckBox("use tentative words as lookahead")
        self.tentative_lookahead.setToolTip(
            "The voice may read the recognizer's not-yet-final words as lookahead context (never speaks them): "
            "it starts each chunk sooner."
        )
        self.whole_pass = QCheckBox("recognize the whole recording again after a session")
        self.whole_pass.setToolTip(
            "When a recorded session ends, its recording is recognized again as a whole (in the background): the "
            "session's captions and transcript.txt take those words, which are more often right than the ones "
            "committed live. The live words stay in committed.srt. Not for the speakers route (its recording "
            "holds the voice's echo) nor for interpreting."
        )
        self.hurry = QDoubleSpinBox()
        self.hurry.setRange(0.0, 5.0)
        self.hurry.setSingleStep(0.1)
        self.hurry.setSuffix(" s")
        self.hurry.setToolTip(
            "With less voice than this left to play mid-sentence, the voice speaks the committed words at once "
            "instead of waiting for its lookahead: fewer gaps, slightly less natural phrasing. 0 = never."
        )
        self.echo_guard = QComboBox()
        self.echo_guard.addItems(ECHO_GUARDS)
        self.echo_guard.setToolTip(
            "gate: while the voice plays, the microphone is ignored, so speakers cannot feed the voice back into "
            "the recognizer. What the speaker says meanwhile is not heard.\ncancel: the voice's own sound is removed "
            "from the microphone (echo cancellation), so the speaker is still heard while the voice plays; in loud "
            "double talk it also loses some of the speaker's words.\nWith headphones choose off."
        )

        self.preset = QComboBox()
        for item in PRESETS:
            self.preset.addItem(item.name, item.key)
            self.preset.setItemData(self.preset.count() - 1, item.summary, Qt.ItemDataRole.ToolTipRole)
        self.preset.addItem(CUSTOM, CUSTOM)
        self.preset.setToolTip("Presets trade lag against the voice's naturalness; changing a knob makes it Custom")
        self.preset_figures = QLabel()
        self.preset_figures.setWordWrap(True)
        self.preset_figures.setAccessibleName("What the preset measured")
        for button, name in (
            (self.source_browse, "recording"),
            (self.model_browse, "recognizer model"),
            (self.voice_browse, "voice"),
        ):
            button.setAccessibleName(f"Browse for the {name}")
        # mode and source: shown in the window's top bar (``source_box``)
        self.source_box = QWidget()
        top = QGridLayout(self.source_box)
        top.setContentsMargins(0, 0, 0, 0)
        self.source_file.setAccessibleName("Recording")
        recording = _path_row(self.source_file, self.source_browse)
        rows = (
            (("Mode", self.mode), ("Spoken language", self.language)),
            (("Source", self.source), ("Recording", recording)),
        )
        for row, pairs in enumerate(rows):
            for column, (label, widget) in enumerate(pairs):
                if not widget.accessibleName():
                    widget.setAccessibleName(label)
                top.addWidget(QLabel(label), row, 2 * column)
                top.addWidget(widget, row, 2 * column + 1)
        top.setColumnStretch(1, 1)
        top.setColumnStretch(3, 2)
        # the preset and its knobs: the side panel
        form = QFormLayout(self)
        _add_row(form, "Preset", self.preset)
        form.addRow(self.preset_figures)
        _add_row(form, "Recognizer", self.backend)
        self.model.setAccessibleName("Recognizer model")
        form.addRow("Recognizer model", _path_row(self.model, self.model_browse))
        _add_row(form, "Commit policy", self.commit)
        _add_row(form, "Voice policy", self.policy)
        _add_row(form, "Lookahead k (chunks)", self.k)
        _add_row(form, "First chunk (phonemes)", self.first_chunk)
        _add_row(form, "Later chunks (phonemes)", self.chunk)
        _add_row(form, "After a comma (phonemes)", self.phrase_chunk)
        self.voice.setAccessibleName("Voice")
        form.addRow("Voice", _path_row(self.voice, self.voice_browse))
        _add_row(form, "Voice rate", self.voice_rate)
        self.tentative_lookahead.setAccessibleName("Use tentative words as lookahead")
        self.whole_pass.setAccessibleName("Recognize the whole recording again after a session")
        form.addRow("", self.tentative_lookahead)
        _add_row(form, "Hurry below", self.hurry)
        _add_row(form, "Echo guard", self.echo_guard)
        form.addRow("", self.whole_pass)
        self.load()
        for combo in (self.mode, self.language, self.source, self.backend, self.commit, self.policy, self.echo_guard):
            combo.currentIndexChanged.connect(self._save)
        self.mode.currentIndexChanged.connect(self._update_enabled)
        for spin in (self.k, self.first_chunk, self.chunk, self.phrase_chunk, self.voice_rate, self.hurry):
            spin.valueChanged.connect(self._save)
        self.tentative_lookahead.toggled.connect(self._save)
        self.whole_pass.toggled.connect(self._save)
        for edit in (self.source_file, self.model, self.voice):
            edit.editingFinished.connect(self._save)
        self.source.currentIndexChanged.connect(self._update_enabled)
        self.preset.activated.connect(self._preset_chosen)
        self._update_enabled()
        self._show_preset()

    def _update_enabled(self) -> None:
        practising = self.practising()
        if practising and self.source.currentText() == SOURCE_MIC:
            self.source.setCurrentText(SOURCE_FILE)  # the microphone is the person's: the source is played or heard
        from_file = self.source.currentText() == SOURCE_FILE
        self.source_file.setEnabled(from_file)
        self.source_browse.setEnabled(from_file)
        interpreting = self.interpreting()
        self.language.setEnabled(interpreting or practising)
        shadowing_practice = practising and not self.practice_interpreting()
        self.language.setItemText(
            self.language.findData(AUTO_LANGUAGE), AUTO_ENGLISH if shadowing_practice else AUTO_DETECTED
        )
        if self.practice_interpreting():
            self.language.setToolTip("The recording's language; you speak English (Auto: detected)")
        elif practising:
            self.language.setToolTip("Practise: the recording's language, which you shadow in (Auto: English)")
        else:
            self.language.setToolTip("The speaker's language (interpreting)")
        for widget in (self.backend, self.model, self.model_browse):  # interpreting runs Whisper base
            widget.setEnabled(not interpreting)

    def _show_preset(self) -> None:
        """The picker shows the preset the knobs match, or Custom; the label its figures."""
        try:
            item = matching(self.config(None, None))
        except ValueError:  # a combination the session would refuse matches no preset
            item = None
        self.preset.blockSignals(True)
        self.preset.setCurrentIndex(self.preset.findData(item.key if item else CUSTOM))
        self.preset.blockSignals(False)
        self.preset_figures.setText(preset_figures_text(item))

    def _preset_chosen(self, _index: int) -> None:
        key = self.preset.currentData()
        if key != CUSTOM:
            self.apply_preset(preset(str(key)))

    def apply_preset(self, item: Preset) -> None:
        """Set the knobs ``item`` names (one save and one ``changed`` for all of them)."""
        knobs = item.knobs
        widgets = (
            self.commit,
            self.policy,
            self.k,
            self.first_chunk,
            self.chunk,
            self.phrase_chunk,
            self.hurry,
            self.tentative_lookahead,
        )
        for widget in widgets:
            widget.blockSignals(True)
        self.commit.setCurrentText(str(knobs["commit"]))
        self.policy.setCurrentIndex(max(self.policy.findData(str(knobs["tts_policy"])), 0))
        self.k.setValue(int(knobs["k"]))
        self.first_chunk.setValue(int(knobs["first_chunk"]))
        self.chunk.setValue(int(knobs["chunk"]))
        self.phrase_chunk.setValue(int(knobs["phrase_chunk"]))
        self.hurry.setValue(float(knobs["hurry_below_s"]))
        self.tentative_lookahead.setChecked(bool(knobs["tentative_lookahead"]))
        for widget in widgets:
            widget.blockSignals(False)
        self._save()

    def interpreting(self) -> bool:
        return self.mode.currentText() == MODE_INTERPRET

    def practising(self) -> bool:
        return self.mode.currentText() in (MODE_PRACTISE, MODE_PRACTISE_INTERPRET)

    def practice_interpreting(self) -> bool:
        return self.mode.currentText() == MODE_PRACTISE_INTERPRET

    def practice_language(self) -> str | None:
        """The recording's language in a practice session. Shadowing: Auto is English (tiny.en); interpreting: Auto is
        None, detected."""
        code = str(self.language.currentData())
        if code != AUTO_LANGUAGE:
            return code
        return None if self.practice_interpreting() else "en"

    def translate_from(self) -> str | None:
        """The spoken language for ``ShadowConfig.translate_from`` (None: shadowing)."""
        return str(self.language.currentData()) if self.interpreting() else None

    def _browse(self, edit: QLineEdit, filter_text: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a file", edit.text(), filter_text)
        if path:
            edit.setText(path)
            self._save()

    def _browse_model(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a recognizer model folder", self.model.text())
        if path:
            self.model.setText(path)
            self._save()

    def load(self) -> None:
        d = ShadowConfig()
        s = self._settings

        def value(key: str, default: object, kind: type) -> Any:
            return s.value(KEY_PREFIX + key, default, type=kind)

        mode = str(value("mode", MODE_SHADOW, str))
        self.mode.setCurrentText(RENAMED_MODES.get(mode, mode))
        index = self.language.findData(str(value("translate_from", AUTO_LANGUAGE, str)))
        self.language.setCurrentIndex(max(index, 0))
        self.source.setCurrentText(str(value("source", SOURCE_MIC, str)))
        self.source_file.setText(str(value("source_file", "", str)))
        self.backend.setCurrentText(str(value("backend", d.backend, str)))
        self.model.setText(str(value("model", "", str)))
        self.commit.setCurrentText(str(value("commit", d.commit, str)))
        self.policy.setCurrentIndex(max(self.policy.findData(str(value("tts_policy", d.tts_policy, str))), 0))
        self.k.setValue(int(value("k", d.k, int)))
        self.first_chunk.setValue(int(value("first_chunk", d.first_chunk, int)))
        self.chunk.setValue(int(value("chunk", d.chunk, int)))
        self.phrase_chunk.setValue(int(value("phrase_chunk", d.phrase_chunk, int)))
        self.voice.setText(str(value("voice", "", str)))
        self.voice_rate.setValue(float(value("voice_rate", d.voice_rate, float)))
        self.hurry.setValue(float(value("hurry_below_s", d.hurry_below_s, float)))
        self.echo_guard.setCurrentText(str(value("echo_guard", d.echo_guard, str)))
        self.tentative_lookahead.setChecked(bool(value("tentative_lookahead", d.tentative_lookahead, bool)))
        self.whole_pass.setChecked(bool(value("whole_pass", True, bool)))

    def _save(self) -> None:
        s = self._settings
        for key, val in {
            "mode": self.mode.currentText(),
            "translate_from": self.language.currentData(),
            "source": self.source.currentText(),
            "source_file": self.source_file.text(),
            "backend": self.backend.currentText(),
            "model": self.model.text(),
            "commit": self.commit.currentText(),
            "tts_policy": self.policy.currentData(),
            "k": self.k.value(),
            "first_chunk": self.first_chunk.value(),
            "chunk": self.chunk.value(),
            "phrase_chunk": self.phrase_chunk.value(),
            "voice": self.voice.text(),
            "voice_rate": self.voice_rate.value(),
            "hurry_below_s": self.hurry.value(),
            "echo_guard": self.echo_guard.currentText(),
            "tentative_lookahead": self.tentative_lookahead.isChecked(),
            "whole_pass": self.whole_pass.isChecked(),
        }.items():
            s.setValue(KEY_PREFIX + key, val)
        s.sync()
        self._show_preset()
        self.changed.emit()

    # ----- the Models page (app/widgets/models_dialog.py)
    def current_models(self) -> dict[str, str]:
        """What the settings use, per kind: a model's path, or "" for the bundled voice / Whisper tiny.en."""
        recognizer = self.model.text().strip()
        if self.backend.currentText() != "whisper" and not recognizer:
            recognizer = "(none)"  # vosk without a model uses nothing listed
        return {VOICE: self.voice.text().strip(), RECOGNIZER: recognizer}

    def use_model(self, info: ModelInfo) -> None:
        if info.kind == VOICE:
            self.voice.setText(info.setting or "")
        else:
            self.backend.setCurrentText(info.engine if info.engine in ("whisper", "vosk") else "whisper")
            self.model.setText(info.setting or "")
        self._save()

    def use_bundled(self, info: ModelInfo) -> None:
        """``info`` is gone: its kind goes back to the bundled model."""
        if info.kind == VOICE:
            self.voice.setText("")
        else:
            self.backend.setCurrentText("whisper")
            self.model.setText("")
        self._save()

    def live_source(self) -> str | None:
        """The live source for ``engine.pipeline.sources`` ("mic", "system"), None for a recording."""
        return LIVE_SOURCES.get(self.source.currentText())

    def source_path(self) -> str | None:
        """The recording to shadow, or None for a live source."""
        return self.source_file.text().strip() or "" if self.source.currentText() == SOURCE_FILE else None

    def config(self, input_device: str | None, output_device: str | None) -> ShadowConfig:
        """The session's settings; raises ValueError with a readable message for a bad combination."""
        interpreting = self.interpreting()
        return ShadowConfig(
            backend="whisper" if interpreting else self.backend.currentText(),
            model=None if interpreting else self.model.text().strip() or None,
            translate_from=self.translate_from(),
            commit=self.commit.currentText(),
            tts_policy=str(self.policy.currentData()),
            k=self.k.value(),
            first_chunk=self.first_chunk.value(),
            chunk=self.chunk.value(),
            phrase_chunk=self.phrase_chunk.value(),
            voice=self.voice.text().strip() or None,
            voice_rate=self.voice_rate.value(),
            echo_guard=self.echo_guard.currentText(),
            input_device=input_device,
            output_device=output_device,
            tentative_lookahead=self.tentative_lookahead.isChecked(),
            hurry_below_s=self.hurry.value(),
        )


def settings_dock(panel: SettingsPanel, parent: QWidget) -> QDockWidget:
    """The settings as a side panel that folds away (scrolled when the window is short)."""
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(panel)
    dock = QDockWidget("Settings", parent)
    dock.setObjectName("settings")
    dock.setWidget(scroll)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable | QDockWidget.DockWidgetFeature.DockWidgetMovable)
    return dock
