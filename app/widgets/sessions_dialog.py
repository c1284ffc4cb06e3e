"""Past sessions: the recorded folders, newest first, to open again (transcript and summary in the window), to
replay (the input and the voice together, or side by side on the left and right channels) and to recognize again
(the whole recording, for its captions)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from engine.pipeline.history import SIDE_BY_SIDE, TOGETHER, list_sessions


class SessionsDialog(QDialog):
    opened = Signal(object)  # the session folder (Path)
    replay_requested = Signal(object, str)  # folder, mode
    pass_requested = Signal(object)  # the session folder, to recognize its whole recording again

    def __init__(self, root: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Past sessions")
        self.root = root
        self.list = QListWidget()
        self.list.setAccessibleName("Past sessions")
        self.list.itemDoubleClicked.connect(lambda _item: self._open())
        self.empty = QLabel("No recorded session yet. Every session you run is kept here.")
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Show its transcript and summary in the window; click a word to replay from it")
        self.together_button = QPushButton("Replay together")
        self.together_button.setToolTip("The speaker and the voice mixed, as you heard them")
        self.side_button = QPushButton("Replay side by side")
        self.side_button.setToolTip("The speaker on the left channel, the voice on the right")
        self.again_button = QPushButton("Recognize again")
        self.again_button.setToolTip(
            "Recognize the whole recording again, in the background: its captions and transcript.txt take those "
            "words (the live ones stay in committed.srt)"
        )
        close = QPushButton("Close")
        for button in (self.open_button, self.together_button, self.side_button, self.again_button, close):
            button.setAccessibleName(button.text())
        self.open_button.clicked.connect(self._open)
        self.together_button.clicked.connect(lambda: self._replay(TOGETHER))
        self.side_button.clicked.connect(lambda: self._replay(SIDE_BY_SIDE))
        self.again_button.clicked.connect(self._pass_again)
        close.clicked.connect(self.close)
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        buttons = QHBoxLayout()
        for button in (self.open_button, self.together_button, self.side_button, self.again_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.resize(620, 420)
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        for session in list_sessions(self.root):
            item = QListWidgetItem(session.title)
            item.setData(Qt.ItemDataRole.UserRole, str(session.folder))
            item.setToolTip(str(session.folder))
            self.list.addItem(item)
        self.empty.setVisible(self.list.count() == 0)
        if self.list.count():
            self.list.setCurrentRow(0)
        self._update_buttons()

    def selected(self) -> Path | None:
        item = self.list.currentItem()
        return Path(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def _update_buttons(self) -> None:
        chosen = self.selected() is not None
        for button in (self.open_button, self.together_button, self.side_button, self.again_button):
            button.setEnabled(chosen)

    def _open(self) -> None:
        folder = self.selected()
        if folder is not None:
            self.opened.emit(folder)

    def _replay(self, mode: str) -> None:
        folder = self.selected()
        if folder is not None:
            self.replay_requested.emit(folder, mode)

    def _pass_again(self) -> None:
        folder = self.selected()
        if folder is not None:
            self.pass_requested.emit(folder)
