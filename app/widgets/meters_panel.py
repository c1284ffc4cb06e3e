"""Live figures, large and plain: the ear-voice lag as a big number with its rolling plot and the time balance as a
bar; then, smaller, commit latency, first audio, underruns, words, input level, CPU and the machine's pace. After a
session the same place shows its summary and the lag over the whole session."""

from __future__ import annotations

import collections
import math

import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from engine.asr.languages import language_name
from engine.metrics import names as m
from engine.pipeline.records import MeterSnapshot

HISTORY_S = 60.0
BALANCE_WARN_S = 0.3  # the bar turns red below this much audio in hand: an underrun is near
BALANCE_FULL_S = 5.0
WARN = "#d62728"
GOOD = "#2ca02c"


def _seconds(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.2f} s"


def level_bar_value(level_db: float) -> int:
    """A level in dBFS as an input-level bar shows it (-60 to 0)."""
    return int(max(min(level_db, 0), -60))


def summary_text(report: dict, wer_committed: float | None = None) -> str:
    """One paragraph on a finished session: duration, words, lag, underruns, commit latency (and ``wer_committed``)."""
    lag = report.get(m.EAR_VOICE_LAG_S) or {}
    commit = report.get(m.COMMIT_LATENCY_S) or {}
    words = report.get("words") or []
    spoken = [w for w in words if w.get("speak_end_s") is not None]
    underruns = int(report.get(m.UNDERRUNS) or 0)
    duration = max([report.get("audio_s_heard") or 0.0] + [w["speak_end_s"] for w in spoken])
    parts = [
        f"{duration:.0f} s",
        f"{len(words)} words committed, {len(spoken)} spoken",
        f"ear-voice lag median {_seconds(lag.get('median'))}, p90 {_seconds(lag.get('p90'))}",
        f"{underruns} underrun{'' if underruns == 1 else 's'}",
        f"commit latency median {_seconds(commit.get('median'))}",
    ]
    if wer_committed is not None:
        parts.append(f"wer_committed {wer_committed:.3f}")
    if report.get("error"):
        parts.append(f"stopped by an error: {report['error']}")
    return "Last session: " + " · ".join(parts)


class MetersPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.updates = 0  # how many snapshots were shown (tests check the refresh rate)
        self.lag = QLabel("–")
        self.lag_median = QLabel("median –")
        self.commit_latency = QLabel("–")
        self.first_audio = QLabel("–")
        self.underruns = QLabel("0")
        self.cpu = QLabel("–")
        self.words = QLabel("0 / 0")
        self.echo = QLabel("")
        self.language = QLabel("")  # interpreting: the spoken language (chosen or detected)
        self.pace = QLabel("–")  # the recognizer's step cost and what the session gave up to keep up
        self.pace_warning = QLabel("")
        self.pace_warning.setWordWrap(True)
        self.pace_warning.setStyleSheet(f"color: {WARN}; font-weight: bold;")
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.balance_bar = QProgressBar()
        self.balance_bar.setRange(0, int(BALANCE_FULL_S * 1000))
        self.balance_bar.setFormat("%v ms in hand")
        self.level_bar = QProgressBar()
        self.level_bar.setRange(-60, 0)
        self.level_bar.setFormat("%v dBFS")
        self.level_bar.setValue(-60)
        self.lag.setStyleSheet("font-size: 30pt; font-weight: bold;")
        self.lag_median.setStyleSheet("font-size: 14pt;")
        for widget, name in (
            (self.lag, "Ear-voice lag, last word"),
            (self.lag_median, "Ear-voice lag, median"),
            (self.balance_bar, "Time balance"),
            (self.level_bar, "Input level"),
            (self.summary, "Session summary"),
        ):
            widget.setAccessibleName(name)
        title = QLabel("Ear-voice lag")
        title.setStyleSheet("font-weight: bold;")
        balance_title = QLabel("Time balance (voice in hand)")
        balance_title.setStyleSheet("font-weight: bold;")

        headline = QGridLayout()
        headline.addWidget(title, 0, 0)
        headline.addWidget(balance_title, 0, 2)
        headline.addWidget(self.lag, 1, 0)
        headline.addWidget(self.lag_median, 1, 1)
        headline.addWidget(self.balance_bar, 1, 2)
        headline.setColumnStretch(2, 1)
        small = QGridLayout()  # two columns of label and value
        rows: tuple[tuple[str, QWidget], ...] = (
            ("Commit latency", self.commit_latency),
            ("First audio", self.first_audio),
            ("Underruns", self.underruns),
            ("Words committed / spoken", self.words),
            ("Input level", self.level_bar),
            ("CPU load", self.cpu),
            ("Machine pace", self.pace),
            ("Spoken language", self.language),
        )
        for i, (label, cell) in enumerate(rows):
            row, column = i % 4, 2 * (i // 4)
            small.addWidget(QLabel(label), row, column)
            small.addWidget(cell, row, column + 1)
            if not cell.accessibleName():
                cell.setAccessibleName(label)
        small.setColumnStretch(1, 1)
        small.setColumnStretch(3, 1)
        figures = QVBoxLayout()
        figures.addLayout(headline)
        figures.addLayout(small)
        figures.addWidget(self.echo)
        figures.addStretch(1)

        self.lag_plot = pg.PlotWidget()
        self.lag_plot.setAccessibleName("Ear-voice lag over time")
        self._style_plot()
        self.lag_plot.setLabel("left", "ear-voice lag", units="s")
        self.lag_plot.setLabel("bottom", "session time", units="s")
        self.lag_plot.setMinimumHeight(110)
        self._lag_curve = self.lag_plot.plot(pen=pg.mkPen("#1f77b4", width=2), symbol="o", symbolSize=4)
        self._lag_points: collections.deque[tuple[float, float]] = collections.deque(maxlen=2000)

        grid = QGridLayout(self)
        grid.setContentsMargins(4, 4, 4, 4)
        grid.addLayout(figures, 0, 0)
        grid.addWidget(self.lag_plot, 0, 1)
        grid.addWidget(self.pace_warning, 1, 0, 1, 2)
        grid.addWidget(self.summary, 2, 0, 1, 2)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)

    def _style_plot(self) -> None:
        """The plot takes the window's colours (light or dark theme)."""
        palette = self.palette()
        self.lag_plot.setBackground(palette.color(QPalette.ColorRole.Base))
        text = palette.color(QPalette.ColorRole.Text)
        for side in ("left", "bottom"):
            axis = self.lag_plot.getAxis(side)
            axis.setPen(text)
            axis.setTextPen(text)

    def reset(self) -> None:
        self._lag_points.clear()
        self._lag_curve.setData([], [])
        self.summary.clear()

    def show_snapshot(self, snap: MeterSnapshot, cpu_percent: float | None) -> None:
        self.updates += 1
        self.lag.setText(_seconds(snap.lag_s))
        self.lag_median.setText(f"median {_seconds(snap.lag_median_s)}")
        self.commit_latency.setText(_seconds(snap.commit_latency_s))
        self.first_audio.setText(_seconds(snap.first_audio_s))
        self.underruns.setText(str(snap.underruns))
        self.words.setText(f"{snap.words_committed} / {snap.words_spoken}")
        self.cpu.setText("–" if cpu_percent is None else f"{cpu_percent:.0f} %")
        self.echo.setText(f"echo guard muted the microphone for {snap.echo_gated_s:.1f} s" if snap.echo_gated_s else "")
        if snap.step_cost_s is not None:
            self.pace.setText(f"recognizer step {snap.step_cost_s:.2f} s · {snap.pace_level}")
        self.pace_warning.setText(snap.pace_message or "")
        if snap.spoken_language is not None:
            language = language_name(snap.spoken_language)
            dropped = f" · {snap.non_english_words} non-English words not spoken" if snap.non_english_words else ""
            self.language.setText(language + dropped)
        balance_ms = int(min(max(snap.time_balance_s, 0.0), BALANCE_FULL_S) * 1000)
        self.balance_bar.setValue(balance_ms)
        speaking = snap.words_spoken > 0 and snap.words_committed > snap.words_spoken
        warn = speaking and snap.time_balance_s < BALANCE_WARN_S
        self.balance_bar.setStyleSheet("QProgressBar::chunk { background: %s; }" % (WARN if warn else GOOD))
        self.show_level(snap.input_level_db)
        t = snap.session_s
        if snap.lag_s is not None and (not self._lag_points or self._lag_points[-1][1] != snap.lag_s):
            self._lag_points.append((t, snap.lag_s))
        while self._lag_points and self._lag_points[0][0] < t - HISTORY_S:
            self._lag_points.popleft()
        if self._lag_points:
            xs, ys = zip(*self._lag_points, strict=True)
            self._lag_curve.setData(list(xs), list(ys))

    def show_level(self, level_db: float) -> None:
        """The input level bar (also fed by the idle device check)."""
        self.level_bar.setValue(level_bar_value(level_db))

    def show_summary(self, report: dict, wer_committed: float | None = None) -> None:
        """A finished session: its summary, and its lag over the whole session (each word at its play time)."""
        self.summary.setText(summary_text(report, wer_committed))
        points = [
            (w["speak_end_s"], w[m.EAR_VOICE_LAG_S])
            for w in report.get("words") or []
            if w.get("speak_end_s") is not None and w.get(m.EAR_VOICE_LAG_S) is not None
        ]
        if points:
            xs, ys = zip(*points, strict=True)
            self._lag_curve.setData(list(xs), list(ys))
