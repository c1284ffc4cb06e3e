"""Past sessions in the window: the Sessions dialog, a finished session's transcript opened again (its words
clickable), and replaying a session's input and voice from a word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QStatusBar, QWidget

from app.session_controller import sessions_dir
from app.widgets.meters_panel import MetersPanel
from app.widgets.sessions_dialog import SessionsDialog
from app.widgets.transcript_view import TranscriptView
from engine.audio.devices import AudioDeviceError
from engine.audio.io import AudioFileError
from engine.audio.replay import Replay, output_rate
from engine.pipeline.captions import read_transcript
from engine.pipeline.history import TOGETHER, replay_blocks
from engine.pipeline.recorder import REPORT, TRANSCRIPT
from engine.pipeline.records import WordRecord

REPLAY_CHECK_MS = 200


class SessionWindow(Protocol):
    """What the past sessions need of the window."""

    transcript: TranscriptView
    meters: MetersPanel

    def busy(self) -> bool: ...

    def output_device(self) -> str | None: ...

    def show_error(self, text: str) -> None: ...

    def pass_again(self, folder: Path) -> bool: ...

    def statusBar(self) -> QStatusBar: ...  # Qt's name


class PastSessions(QObject):
    """``replay``: the replay playing (None when none); ``shown_folder``: the finished session shown."""

    def __init__(self, window: SessionWindow, parent: QWidget) -> None:
        super().__init__(parent)
        self.window = window
        self._parent = parent
        self.dialog: SessionsDialog | None = None
        self.replay: Replay | None = None
        self.replay_mode = TOGETHER  # a word clicked in a finished session's transcript replays from it this way
        self.shown_folder: Path | None = None
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._check_replay)

    def show_dialog(self) -> SessionsDialog:
        if self.dialog is None:
            self.dialog = SessionsDialog(sessions_dir(), parent=self._parent)
            self.dialog.opened.connect(self.open)
            self.dialog.replay_requested.connect(lambda folder, mode: self.play(folder, mode))
            self.dialog.pass_requested.connect(self.pass_again)
        self.dialog.refresh()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def pass_again(self, folder: Path) -> bool:
        """A past session's whole recording recognized again for its captions (the status bar says how far)."""
        window = self.window
        if window.busy():
            window.show_error("A session is running; recognize a past one again once it has stopped.")
            return False
        if not window.pass_again(folder):
            window.show_error("Cannot recognize it now: the models are still loading, or another recording is.")
            return False
        return True

    def open(self, folder: Path) -> bool:
        """Show a past session's transcript (words clickable to replay from them) and summary."""
        window = self.window
        if window.busy():
            window.show_error("A session is running; stop it before opening another.")
            return False
        try:
            committed, spoken = read_transcript(folder / TRANSCRIPT)
            report = json.loads((folder / REPORT).read_text(encoding="utf-8")) if (folder / REPORT).is_file() else {}
        except (OSError, ValueError) as exc:
            window.show_error(f"Cannot open the session in {folder}: {exc}")
            return False
        self.stop()
        window.transcript.clear_words()
        window.transcript.add_committed([_record(e) for e in committed])
        window.transcript.mark_spoken([_record(e) for e in spoken])
        window.transcript.set_clickable(True)
        window.meters.reset()
        window.meters.show_summary(report)
        self.shown_folder = folder
        window.statusBar().showMessage(f"Opened {folder.name}: click a word to replay from it", 10000)
        return True

    def play(
        self, folder: Path | None, mode: str | None, start_s: float = 0.0, recordings: tuple[Path, Path] | None = None
    ) -> bool:
        """Play a finished session's input and voice from ``start_s`` (the shown session when ``folder`` is None);
        ``recordings``: two other files on one clock (a practice's source and attempt)."""
        window = self.window
        folder = folder or self.shown_folder
        if folder is None or window.busy():
            return False
        mode = mode or self.replay_mode
        self.replay_mode = mode
        self.stop()
        device = window.output_device()
        try:
            rate = output_rate(device)
            replay = Replay(replay_blocks(folder, mode, rate, max(start_s, 0.0), recordings=recordings), rate, device)
            replay.start()
        except (AudioDeviceError, AudioFileError, ValueError) as exc:
            window.show_error(f"Cannot replay: {exc}")
            return False
        self.replay = replay
        self._timer.start(REPLAY_CHECK_MS)
        window.statusBar().showMessage(f"Replaying {folder.name} {mode} from {max(start_s, 0.0):.1f} s (Esc stops)")
        return True

    def stop(self) -> None:
        replay, self.replay = self.replay, None
        self._timer.stop()
        if replay is not None:
            replay.stop()

    def _check_replay(self) -> None:
        replay = self.replay
        if replay is not None and replay.finished:
            replay.wait(0)
            self.stop()
            if replay.error:
                self.window.show_error(f"The replay stopped: {replay.error}")
            self.window.statusBar().showMessage("Replay finished", 4000)


def _record(event: dict) -> WordRecord:
    """A word of a recorded ``transcript.jsonl`` as the transcript view takes it."""
    return WordRecord(
        int(event["sentence"]),
        int(event["index"]),
        str(event["text"]),
        float(event["source_start_s"]),
        float(event["source_end_s"]),
        float(event.get("commit_s") or 0.0),
    )
