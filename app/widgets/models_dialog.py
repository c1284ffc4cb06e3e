"""The Models page: the installed voices and recognizer models; add one from a file or an address, use it, remove it.

Adding runs in a worker thread (``engine.modelstore``); its progress, result or error come back as Qt signals, so
the window stays responsive and a download can be cancelled. A partly downloaded file stays beside its target and the
next attempt at the same address resumes it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.modelstore.download import DownloadCancelled, DownloadError, Progress
from engine.modelstore.store import RECOGNIZER, VOICE, ModelError, ModelInfo, ModelStore

log = logging.getLogger(__name__)

COLUMNS = ("", "Kind", "Name", "Engine", "Size", "Licence", "Location")
IN_USE = "●"


def describe_progress(progress: Progress) -> str:
    """ "12.3 of 61.0 MB · 4.2 MB/s · 11 s left" (what is known of it)."""
    done = f"{progress.done_bytes / 1e6:.1f}"
    parts = [f"{done} of {progress.total_bytes / 1e6:.1f} MB" if progress.total_bytes else f"{done} MB"]
    parts.append(f"{progress.bytes_per_s / 1e6:.1f} MB/s")
    remaining = progress.remaining_s
    if remaining is not None:
        parts.append(f"{remaining:.0f} s left")
    return " · ".join(parts)


def split_address(text: str) -> tuple[str, str | None]:
    """ "URL [SHA-256]" as typed into the address box."""
    parts = text.split()
    if len(parts) == 2 and re.fullmatch(r"[0-9a-fA-F]{64}", parts[1]):
        return parts[0], parts[1].lower()
    return text.strip(), None


class _Relay(QObject):
    """Carries the worker thread's news to the GUI thread (queued connections)."""

    progress = Signal(object)
    finished = Signal(object)  # a ModelInfo
    failed = Signal(str)


class ModelsDialog(QDialog):
    """``current()`` says what the session settings hold, per kind (VOICE, RECOGNIZER): a model's path, or "" for the
    bundled one; ``use(info)`` puts a model into them; ``fallback(info)`` is called when a model in use is removed
    (the settings go back to the bundled one)."""

    def __init__(
        self,
        store: ModelStore,
        current: Callable[[], dict[str, str]],
        use: Callable[[ModelInfo], None],
        fallback: Callable[[ModelInfo], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.resize(900, 420)
        self.store = store
        self._current, self._use, self._fallback = current, use, fallback
        self._models: list[ModelInfo] = []
        self._cancel: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._relay = _Relay()
        self._relay.progress.connect(self._on_progress)
        self._relay.finished.connect(self._on_added)
        self._relay.failed.connect(self._on_failed)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._update_buttons)

        self.use_button = QPushButton("Use")
        self.use_button.setToolTip("Use this model in the next session")
        self.add_file_button = QPushButton("Add from file…")
        self.add_file_button.setToolTip("A Piper voice (.onnx beside its .onnx.json) or a Vosk model (folder or .zip)")
        self.add_url_button = QPushButton("Add from address…")
        self.add_url_button.setToolTip("The address of a Piper voice (.onnx) or of a Vosk model archive (.zip)")
        self.remove_button = QPushButton("Remove")
        self.use_button.clicked.connect(self._use_selected)
        self.add_file_button.clicked.connect(self._add_file)
        self.add_url_button.clicked.connect(self._add_url)
        self.remove_button.clicked.connect(self._remove_selected)
        buttons = QHBoxLayout()
        for button in (self.use_button, self.add_file_button, self.add_url_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)

        self.progress = QProgressBar()
        self.progress_label = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.progress_label)
        progress_row.addWidget(self.cancel_button)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        layout.addLayout(progress_row)
        layout.addWidget(self.message)
        self._show_progress(False)
        self.refresh()

    # ----- list
    def refresh(self) -> None:
        self._models = self.store.installed()
        self.table.setRowCount(len(self._models))
        for row, info in enumerate(self._models):
            used = self.in_use(info)
            cells = (
                IN_USE if used else "",
                info.kind,
                info.name,
                info.engine,
                f"{info.size_bytes / 1e6:.0f} MB",
                info.licence,
                str(info.path),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == len(COLUMNS) - 1 and info.source:
                    item.setToolTip(f"from {info.source}")
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        self._update_buttons()

    def in_use(self, info: ModelInfo) -> bool:
        return self._current().get(info.kind) == (info.setting or "")

    def selected(self) -> ModelInfo | None:
        rows = self.table.selectionModel().selectedRows()
        return self._models[rows[0].row()] if rows else None

    def select(self, name: str) -> None:
        for row, info in enumerate(self._models):
            if info.name == name:
                self.table.selectRow(row)

    def _update_buttons(self) -> None:
        busy = self._thread is not None
        info = self.selected()
        self.use_button.setEnabled(info is not None and not busy)
        self.remove_button.setEnabled(info is not None and not info.bundled and not busy)
        self.add_file_button.setEnabled(not busy)
        self.add_url_button.setEnabled(not busy)

    # ----- use and remove
    def _use_selected(self) -> None:
        info = self.selected()
        if info is not None:
            self._use(info)
            self.message.setText(f"{info.name} will be used in the next session.")
            self.refresh()

    def _remove_selected(self) -> None:
        info = self.selected()
        if info is not None:
            self.remove(info)

    def remove(self, info: ModelInfo) -> None:
        was_used = self.in_use(info)
        try:
            self.store.remove(info)
        except (ModelError, OSError) as exc:
            self.message.setText(f"Not removed: {exc}")
            return
        text = f"Removed {info.name}."
        if was_used:
            self._fallback(info)
            bundled = "voice" if info.kind == VOICE else "recognizer (Whisper tiny.en)"
            text += f" It was in use; the bundled {bundled} is used now."
        self.message.setText(text)
        self.refresh()

    # ----- add
    def _add_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Add a model", str(Path.home()), "Piper voices and Vosk archives (*.onnx *.zip);;All files (*)"
        )
        if not path:
            folder = QFileDialog.getExistingDirectory(self, "…or choose a Vosk model folder", str(Path.home()))
            path = folder
        if path:
            self.add_path(path)

    def add_path(self, path: str) -> None:
        target = Path(path)
        if target.suffix == ".onnx":
            self._start(f"Adding {target.name}", lambda progress, cancel: self.store.add_voice(target))
        else:
            self._start(f"Adding {target.name}", lambda progress, cancel: self.store.add_vosk(target))

    def _add_url(self) -> None:
        text, ok = QInputDialog.getText(
            self,
            "Add a model from an address",
            "Address of a .onnx voice or a .zip model, optionally followed by its SHA-256 checksum:",
        )
        if ok and text.strip():
            url, sha256 = split_address(text)
            self.add_url(url, sha256)

    def add_url(self, url: str, sha256: str | None = None) -> None:
        self._start(
            f"Downloading {url.rsplit('/', 1)[-1]}",
            lambda progress, cancel: self.store.add_from_url(url, sha256, progress, cancel),
        )

    def _start(self, what: str, work: Callable[[Callable[[Progress], None], threading.Event], ModelInfo]) -> None:
        if self._thread is not None:
            return
        cancel = self._cancel = threading.Event()
        relay = self._relay

        def run() -> None:
            try:
                info = work(relay.progress.emit, cancel)
            except DownloadCancelled as exc:
                relay.failed.emit(f"Cancelled: {exc}. Adding the same address again resumes the download.")
            except (DownloadError, ModelError, OSError) as exc:
                relay.failed.emit(f"Not added: {exc}")
            except Exception as exc:
                log.exception("adding a model failed")
                relay.failed.emit(f"Not added: {exc}")
            else:
                relay.finished.emit(info)

        self.message.setText(what + "…")
        self.progress.setRange(0, 0)  # busy until the size is known
        self.progress_label.setText("")
        self._show_progress(True)
        self._thread = threading.Thread(target=run, name="model-add", daemon=True)
        self._thread.start()
        self._update_buttons()

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def busy(self) -> bool:
        return self._thread is not None

    def _on_progress(self, progress: Progress) -> None:
        if progress.total_bytes:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * (progress.fraction or 0.0)))
        self.progress_label.setText(describe_progress(progress))

    def _on_added(self, info: ModelInfo) -> None:
        self._done()
        kind = "voice" if info.kind == VOICE else "recognizer model"
        self.message.setText(f"Added the {kind} {info.name}. Select it and press Use to shadow with it.")
        self.refresh()
        self.select(info.name)

    def _on_failed(self, text: str) -> None:
        self._done()
        self.message.setText(text)
        self.refresh()

    def _done(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        self._thread = self._cancel = None
        self._show_progress(False)
        self._update_buttons()

    def _show_progress(self, shown: bool) -> None:
        for widget in (self.progress, self.progress_label, self.cancel_button):
            widget.setVisible(shown)

    def reject(self) -> None:  # closing the page cancels a download under way
        self.cancel()
        super().reject()


__all__ = ["RECOGNIZER", "VOICE", "ModelsDialog", "describe_progress"]
