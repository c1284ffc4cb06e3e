"""The Practise mode's view: the source's words marked as the person says them, their ear-voice span (EVS) as a big
number and a plot beside the machine's own lag (the pace-setter), and afterwards the summary and the progress over
past attempts at the same recording. A word of a finished attempt is a link: clicking it replays from there."""

from __future__ import annotations

import html
import time

import pyqtgraph as pg
from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGridLayout, QLabel, QTextBrowser, QVBoxLayout, QWidget

from engine.practice.live_common import PracticeSnapshot
from engine.practice.marks import MarkedWord, WordState, running_median
from engine.practice.summary import figure_lines

COLOURS = {
    WordState.SAID: "#2e7d32",
    WordState.SUBSTITUTED: "#b36b00",
    WordState.MISSED: "#b00020",
    WordState.AHEAD: "#8a8a8a",
}
HEADPHONES = "Wear headphones: without them the source reaches the microphone and is scored as you."
REPLAY_LEAD_S = 1.0  # a replay from a word starts this much before it


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def marked_html(words: list[MarkedWord], links: bool, hide_ahead: bool = False) -> str:
    """The source's words coloured by their mark; a said word's EVS (or what was said instead) in its tooltip.
    ``hide_ahead``: a word not said yet shows as dots (interpreting: the English text is the answer)."""
    parts = []
    for i, word in enumerate(words):
        if hide_ahead and word.state is WordState.AHEAD:
            parts.append(f'<span style="color:{COLOURS[WordState.AHEAD]};">···</span>')
            continue
        colour = COLOURS[word.state]
        tip = word.state.value + ("" if word.evs_s is None else f", EVS {word.evs_s:.2f} s")
        tip += f", heard as “{word.heard_as}”" if word.heard_as else ""
        style = f"color:{colour};" + ("text-decoration:line-through;" if word.state is WordState.MISSED else "")
        text = html.escape(word.text)
        if links:
            parts.append(f'<a href="w{i}" title="{html.escape(tip)}" style="{style}">{text}</a>')
        else:
            parts.append(f'<span title="{html.escape(tip)}" style="{style}">{text}</span>')
    return " ".join(parts)


def summary_text(report: dict) -> str:
    """The attempt's figures as the command line words them, a line each, capitalized (chrF keeps its spelling)."""
    return "\n".join(line if line.startswith("chrF") else line[:1].upper() + line[1:] for line in figure_lines(report))


def report_marks(report: dict) -> list[MarkedWord]:
    """The source's words as a scored attempt marked them (``score.PracticeScore.report``'s ``words``)."""
    marks = []
    for w in report.get("words") or []:
        if w.get("source") is None:
            continue  # a word the person added
        state = {"said": WordState.SAID, "substituted": WordState.SUBSTITUTED}.get(w["mark"], WordState.MISSED)
        heard = w.get("attempt") if state is WordState.SUBSTITUTED else None
        start = w.get("source_start_s", w["source_end_s"])
        marks.append(MarkedWord(w["source"], start, w["source_end_s"], state, w.get("evs_s"), heard))
    return marks


class PracticeView(QWidget):
    word_clicked = Signal(float)  # the source time to replay from

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headphones = QLabel(HEADPHONES)
        self.headphones.setWordWrap(True)
        self.headphones.setStyleSheet("color: #b36b00;")
        self.evs_label = QLabel("–")
        self.evs_label.setAccessibleName("Your ear-voice span")
        self.evs_label.setToolTip("Your ear-voice span: the end of your word − the end of the source's word")
        font = self.evs_label.font()
        font.setPointSize(font.pointSize() * 3)
        font.setBold(True)
        self.evs_label.setFont(font)
        self.median_label = QLabel()
        self.median_label.setAccessibleName("Running median")
        self.machine_label = QLabel()
        self.machine_label.setAccessibleName("liveshadow's own lag")
        self.machine_label.setToolTip("liveshadow's own voice on the same recording: the pace to beat")
        self.position_label = QLabel()
        self.position_label.setAccessibleName("Position")
        self.source_view = QTextBrowser()
        self.source_view.setAccessibleName("Source transcript")
        self.source_view.setOpenLinks(False)
        self.source_view.anchorClicked.connect(self._clicked)
        self.attempt_label = QLabel()
        self.attempt_label.setWordWrap(True)
        self.attempt_label.setAccessibleName("Your words")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setAccessibleName("Practice summary")
        self.evs_plot = pg.PlotWidget()
        self.evs_plot.setAccessibleName("Ear-voice span over the recording")
        self.evs_plot.setLabel("left", "EVS", units="s")
        self.evs_plot.setLabel("bottom", "source time", units="s")
        self.evs_plot.addLegend(offset=(5, 5))
        self.evs_curve = self.evs_plot.plot(pen=pg.mkPen("#1f77b4", width=2), symbol="o", symbolSize=5, name="you")
        self.pace_curve = self.evs_plot.plot(
            pen=pg.mkPen("#8a8a8a", width=1, style=Qt.PenStyle.DashLine), name="liveshadow"
        )
        self.progress_plot = pg.PlotWidget()
        self.progress_plot.setAccessibleName("Progress over attempts")
        self.progress_plot.setLabel("left", "EVS median", units="s")
        self.progress_plot.setLabel("bottom", "attempt")
        self.progress_plot.addLegend(offset=(5, 5))
        self.progress_curve = self.progress_plot.plot(pen=pg.mkPen("#1f77b4", width=2), symbol="o", name="EVS median")
        self.accuracy_curve = self.progress_plot.plot(
            pen=pg.mkPen("#2e7d32", width=2), symbol="t", name="accuracy (1 = all)"
        )
        for plot in (self.evs_plot, self.progress_plot):
            plot.setBackground(self.palette().color(QPalette.ColorRole.Base))
            plot.setMinimumHeight(120)
        figures = QGridLayout()
        self.evs_title = QLabel("Your EVS")
        figures.addWidget(self.evs_title, 0, 0)
        figures.addWidget(self.evs_label, 1, 0)
        figures.addWidget(self.median_label, 2, 0)
        figures.addWidget(self.machine_label, 3, 0)
        figures.addWidget(self.position_label, 4, 0)
        figures.addWidget(self.evs_plot, 0, 1, 5, 1)
        figures.addWidget(self.progress_plot, 0, 2, 5, 1)
        figures.setColumnStretch(1, 2)
        figures.setColumnStretch(2, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.headphones)
        layout.addWidget(self.source_view, 2)
        layout.addWidget(QLabel("You said:"))
        layout.addWidget(self.attempt_label)
        layout.addWidget(self.summary)
        layout.addLayout(figures, 1)
        self._words: list[MarkedWord] = []
        self._speed: float | None = None  # the shown attempt's speed; None: its words are not on the source's clock
        self.hide_ahead = False  # interpreting: words not said yet are not shown
        self.reset()

    def add_controls(self, controls: QWidget) -> None:
        """The practice's own settings (``PracticeControls``), above the source's words."""
        layout = self.layout()
        assert isinstance(layout, QVBoxLayout)
        layout.insertWidget(0, controls)

    def reset(self) -> None:
        self._words = []
        self._speed = None
        self.source_view.clear()
        self.attempt_label.clear()
        self.summary.clear()
        self.summary.hide()
        self.evs_label.setText("–")
        self.evs_title.setText("Your EVS")
        self.median_label.setText("median –")
        self.machine_label.clear()
        self.position_label.clear()
        self.evs_curve.setData([], [])
        self.pace_curve.setData([], [])

    def show_snapshot(self, snap: PracticeSnapshot) -> None:
        """A live session's state (5 Hz or more)."""
        self._words = snap.words
        self.source_view.setHtml(marked_html(snap.words, links=False, hide_ahead=self.hide_ahead))
        self.attempt_label.setText(" ".join(snap.attempt))
        self.evs_label.setText(_seconds(snap.last_evs_s))
        self.median_label.setText(f"median {_seconds(snap.median_evs_s)}")
        if snap.open_ended:  # this computer's sound: no end known, Stop ends it
            ready = "Listening: play something in another application" if not snap.words else None
            where = f"{snap.position_s:.1f} s heard · Stop scores it"
        else:
            ready = "Get ready: the recording starts in a moment" if snap.position_s <= 0 else None
            where = f"{snap.position_s:.1f} of {snap.duration_s:.1f} s"
        self.position_label.setText(ready or where)
        self._plot(snap.evs, snap.pace)

    def _plot(self, evs: list[tuple[float, float]], pace: list[tuple[float, float]]) -> None:
        self.evs_curve.setData([x for x, _ in evs], [y for _, y in evs])
        self.pace_curve.setData([x for x, _ in pace], [y for _, y in pace])
        median = running_median(pace)
        if median is not None:
            self.machine_label.setText(f"liveshadow: {median:.2f} s")

    def show_summary(self, report: dict) -> None:
        """A finished attempt: its words (scored whole) as links to replay from, the summary, the EVS plot."""
        self._words = report_marks(report)
        # a loop's or sentences' words are on their program's clock: a selection of them names no stretch of the source
        self._speed = None if report.get("mode") else float(report.get("speed", 1.0))
        self.source_view.setHtml(marked_html(self._words, links=True))
        self.attempt_label.setText(report.get("attempt_text", ""))
        repeated = report.get("mode") == "sentence by sentence"  # said after each sentence: how soon, not an EVS
        evs = report.get("started_after_s" if repeated else "evs_s") or report.get("sentence_lag_s") or {}
        what = "started after a sentence: median" if repeated else "median"
        self.median_label.setText(f"{what} {_seconds(evs.get('median'))}, p90 {_seconds(evs.get('p90'))}")
        self.evs_label.setText(_seconds(evs.get("median")))
        self.evs_title.setText("You started after" if repeated else "Your EVS")
        if repeated:
            points = [
                (r["speech_end_s"], r["started_after_s"])
                for r in report["sentences"]
                if r["started_after_s"] is not None
            ]
        else:
            points = [(w["source_end_s"], w["evs_s"]) for w in report.get("words") or [] if w.get("evs_s") is not None]
        machine = report.get("machine_lag_s") or {}
        self._plot(points, [tuple(p) for p in machine.get("per_word") or []])
        self.summary.setText(summary_text(report))
        self.summary.show()

    def show_history(self, entries: list[dict]) -> None:
        """Past attempts at this recording, oldest first: EVS median and accuracy per attempt."""
        xs = list(range(1, len(entries) + 1))
        # interpreting attempts: the sentence lag, and chrF / 100 in place of accuracy
        lags = [
            e.get("evs_median_s", e.get("sentence_lag_median_s", e.get("started_after_median_s"))) or 0.0
            for e in entries
        ]
        scores = [e["accuracy"] if "accuracy" in e else (e.get("chrf") or 0.0) / 100 for e in entries]
        self.progress_curve.setData(xs, lags)
        self.accuracy_curve.setData(xs, scores)
        # each attempt's speed under its number (the source slowed is easier: progress is read at the same speed)
        ticks = [
            (x, f"{x}" if e.get("speed", 1.0) == 1.0 else f"{x}\n{e['speed']:g}×") for x, e in enumerate(entries, 1)
        ]
        self.progress_plot.getAxis("bottom").setTicks([ticks] if len(ticks) <= 20 else None)
        if entries:
            last = time.strftime("%d %b %H:%M", time.localtime(entries[-1]["at"]))
            self.progress_plot.setTitle(f"{len(entries)} attempt{'' if len(entries) == 1 else 's'}, last {last}")

    def selected_span(self) -> tuple[float, float] | None:
        """The source's stretch (its own clock, seconds) from the first to the last word selected in a finished
        attempt's transcript; None when nothing is selected or the words are not on the source's clock."""
        cursor = self.source_view.textCursor()
        if self._speed is None or not cursor.hasSelection():
            return None
        start, end = cursor.selectionStart(), cursor.selectionEnd()
        plain, at, chosen = self.source_view.toPlainText(), 0, []
        for word in self._words:
            found = plain.find(word.text, at)
            if found < 0:
                return None
            at = found + len(word.text)
            if found < end and at > start:
                chosen.append(word)
        if not chosen:
            return None
        return chosen[0].start_s * self._speed, chosen[-1].end_s * self._speed

    def _clicked(self, url: QUrl) -> None:
        name = url.toString()
        if name.startswith("w") and name[1:].isdigit() and int(name[1:]) < len(self._words):
            self.word_clicked.emit(max(self._words[int(name[1:])].start_s - REPLAY_LEAD_S, 0.0))
