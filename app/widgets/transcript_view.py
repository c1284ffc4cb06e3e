"""The transcript in three states: tentative (grey, may change), committed (final), spoken (highlighted)."""

from __future__ import annotations

import collections
import html

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QTextBrowser, QWidget

from engine.pipeline.session import WordRecord

MAX_WORDS = 600  # the view keeps the recent words; the whole transcript is in the session folder
RENDER_INTERVAL_MS = 100


class TranscriptView(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("The transcript appears here: grey words may still change, spoken words are marked.")
        self._words: collections.OrderedDict[tuple[int, int], tuple[str, bool]] = collections.OrderedDict()
        self._tentative: list[str] = []
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._render)
        self._timer.start(RENDER_INTERVAL_MS)  # at most 10 renders a second, however fast words come

    def clear_words(self) -> None:
        self._words.clear()
        self._tentative = []
        self._dirty = True

    def set_tentative(self, words: list[str]) -> None:
        self._tentative = list(words)
        self._dirty = True

    def add_committed(self, records: list[WordRecord]) -> None:
        for record in records:
            self._words[record.key] = (record.text, False)
        while len(self._words) > MAX_WORDS:
            self._words.popitem(last=False)
        self._dirty = True

    def mark_spoken(self, records: list[WordRecord]) -> None:
        for record in records:
            if record.key in self._words:
                self._words[record.key] = (record.text, True)
        self._dirty = True

    @property
    def tentative_words(self) -> list[str]:
        return list(self._tentative)

    @property
    def counts(self) -> tuple[int, int, int]:
        """(tentative, committed not yet spoken, spoken) words in view."""
        spoken = sum(1 for _, s in self._words.values() if s)
        return len(self._tentative), len(self._words) - spoken, spoken

    def _render(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        parts = []
        for text, spoken in self._words.values():
            word = html.escape(text)
            parts.append(f'<span style="background:#ffe08a;">{word}</span>' if spoken else word)
        if self._tentative:
            parts.append(f'<span style="color:#888888;">{html.escape(" ".join(self._tentative))}</span>')
        self.setHtml(f'<p style="font-size:14pt; line-height:140%;">{" ".join(parts)}</p>')
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
