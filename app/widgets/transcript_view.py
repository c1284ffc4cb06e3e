"""The transcript in three states: tentative (dimmed, may change), committed (final), spoken (highlighted).

It follows the newest words unless the user has scrolled back to read; Ctrl+plus / Ctrl+minus change its font size
(the window remembers it). Colours come from the palette, so a dark system theme stays readable.
"""

from __future__ import annotations

import collections
import html

from PySide6.QtCore import QTimer, QUrl, Signal
from PySide6.QtGui import QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QTextBrowser, QWidget

from engine.pipeline.records import WordRecord

MAX_WORDS = 600  # the view keeps the recent words; the whole transcript is in the session folder
RENDER_INTERVAL_MS = 100
DEFAULT_POINT_SIZE = 16
POINT_SIZES = (10, 28)
AT_END_PX = 24  # a scroll position this close to the end counts as following the newest words


class TranscriptView(QTextBrowser):
    point_size_changed = Signal(int)
    word_clicked = Signal(float)  # the clicked word's start on the source clock (a finished session's replay)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Transcript")
        self.setPlaceholderText(
            "The transcript appears here: dimmed words may still change, committed words are final, and the words "
            "the voice has spoken are highlighted."
        )
        # key -> (text, spoken, source start)
        self._words: collections.OrderedDict[tuple[int, int], tuple[str, bool, float]] = collections.OrderedDict()
        self._anchors: list[float] = []  # the rendered words' source starts, by anchor number
        self.clickable = False  # words link to their time (set when a finished session is shown)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self._tentative: list[str] = []
        self._dirty = False
        self.point_size = DEFAULT_POINT_SIZE
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._render)
        self._timer.start(RENDER_INTERVAL_MS)  # at most 10 renders a second, however fast words come
        for keys, step in (((QKeySequence.StandardKey.ZoomIn, "Ctrl+="), 1), ((QKeySequence.StandardKey.ZoomOut,), -1)):
            for key in keys:
                shortcut = QShortcut(QKeySequence(key), self)  # active anywhere in the window
                shortcut.activated.connect(lambda s=step: self.set_point_size(self.point_size + s))

    def set_clickable(self, clickable: bool) -> None:
        self.clickable = clickable
        self._dirty = True

    def _on_anchor(self, url: QUrl) -> None:
        name = url.toString()
        if self.clickable and name.startswith("w") and name[1:].isdigit() and int(name[1:]) < len(self._anchors):
            self.word_clicked.emit(self._anchors[int(name[1:])])

    def set_point_size(self, size: int) -> None:
        size = min(max(int(size), POINT_SIZES[0]), POINT_SIZES[1])
        if size != self.point_size:
            self.point_size = size
            self._dirty = True
            self.point_size_changed.emit(size)

    def clear_words(self) -> None:
        self._words.clear()
        self._tentative = []
        self._dirty = True

    def set_tentative(self, words: list[str]) -> None:
        self._tentative = list(words)
        self._dirty = True

    def add_committed(self, records: list[WordRecord]) -> None:
        for record in records:
            self._words[record.key] = (record.text, False, record.source_start_s)
        while len(self._words) > MAX_WORDS:
            self._words.popitem(last=False)
        self._dirty = True

    def mark_spoken(self, records: list[WordRecord]) -> None:
        for record in records:
            if record.key in self._words:
                self._words[record.key] = (record.text, True, record.source_start_s)
        self._dirty = True

    @property
    def tentative_words(self) -> list[str]:
        return list(self._tentative)

    @property
    def counts(self) -> tuple[int, int, int]:
        """(tentative, committed not yet spoken, spoken) words in view."""
        spoken = sum(1 for _, s, _ in self._words.values() if s)
        return len(self._tentative), len(self._words) - spoken, spoken

    @property
    def following(self) -> bool:
        """True while the view shows the newest words (the user has not scrolled back)."""
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - AT_END_PX

    def _render(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        palette = self.palette()
        mark = palette.color(QPalette.ColorRole.Highlight).name()
        marked = palette.color(QPalette.ColorRole.HighlightedText).name()
        dim = palette.color(QPalette.ColorRole.PlaceholderText).name()
        parts = []
        self._anchors = []
        text_colour = palette.color(QPalette.ColorRole.Text).name()
        for text, spoken, start in self._words.values():
            word = html.escape(text)
            if self.clickable:
                colour = marked if spoken else text_colour
                word = f'<a href="w{len(self._anchors)}" style="color:{colour}; text-decoration:none;">{word}</a>'
                self._anchors.append(start)
            parts.append(f'<span style="background:{mark}; color:{marked};">{word}</span>' if spoken else word)
        if self._tentative:
            parts.append(f'<span style="color:{dim};">{html.escape(" ".join(self._tentative))}</span>')
        bar = self.verticalScrollBar()
        follow, position = self.following, bar.value()
        self.setHtml(f'<p style="font-size:{self.point_size}pt; line-height:140%;">{" ".join(parts)}</p>')
        bar.setValue(bar.maximum() if follow else position)
