"""Live meters: ear-voice lag, time balance (bar + rolling plots), latencies, underruns, input level, CPU load,
and the machine's pace (with a warning when it cannot keep up)."""

from __future__ import annotations

import collections
import math

import pyqtgraph as pg
from PySide6.QtWidgets import QFormLayout, QGridLayout, QLabel, QProgressBar, QWidget

from engine.asr.languages import language_name
from engine.pipeline.session import MeterSnapshot

HISTORY_S = 60.0
BALANCE_WARN_S = 0.3  # the bar turns red below this much audio in hand: an underrun is near
BALANCE_FULL_S = 5.0


def _seconds(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.2f} s"


class MetersPanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.updates = 0  # how many snapshots were shown (tests check the refresh rate)
        self.lag = QLabel("–")
        self.lag_median = QLabel("–")
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
        self.pace_warning.setStyleSheet("color: #d62728; font-weight: bold;")
        self.balance_bar = QProgressBar()
        self.balance_bar.setRange(0, int(BALANCE_FULL_S * 1000))
        self.balance_bar.setFormat("%v ms")
        self.level_bar = QProgressBar()
        self.level_bar.setRange(-60, 0)
        self.level_bar.setFormat("%v dBFS")
        for label in (self.lag, self.lag_median):
            label.setStyleSheet("font-size: 16pt; font-weight: bold;")

        figures = QFormLayout()
        figures.addRow("Ear-voice lag (last word)", self.lag)
        figures.addRow("Ear-voice lag (median)", self.lag_median)
        figures.addRow("Time balance", self.balance_bar)
        figures.addRow("ASR commit latency", self.commit_latency)
        figures.addRow("TTS first-audio latency", self.first_audio)
        figures.addRow("Underruns", self.underruns)
        figures.addRow("Words committed / spoken", self.words)
        figures.addRow("Input level", self.level_bar)
        figures.addRow("CPU load", self.cpu)
        figures.addRow("Machine pace", self.pace)
        figures.addRow("Spoken language", self.language)
        figures.addRow("", self.echo)
        figures.addRow(self.pace_warning)

        pg.setConfigOptions(antialias=False, background="w", foreground="k")
        self.lag_plot = pg.PlotWidget()
        self.lag_plot.setLabel("left", "lag", units="s")
        self.lag_plot.setLabel("bottom", "session time", units="s")
        self.lag_plot.setMinimumHeight(120)
        self._lag_curve = self.lag_plot.plot(pen=pg.mkPen("#1f77b4", width=2), symbol="o", symbolSize=4)
        self.balance_plot = pg.PlotWidget()
        self.balance_plot.setLabel("left", "balance", units="s")
        self.balance_plot.setLabel("bottom", "session time", units="s")
        self.balance_plot.setMinimumHeight(120)
        self._balance_curve = self.balance_plot.plot(pen=pg.mkPen("#2ca02c", width=2))
        self._lag_points: collections.deque[tuple[float, float]] = collections.deque(maxlen=2000)
        self._balance_points: collections.deque[tuple[float, float]] = collections.deque(maxlen=2000)

        grid = QGridLayout(self)
        grid.addLayout(figures, 0, 0, 2, 1)
        grid.addWidget(self.lag_plot, 0, 1)
        grid.addWidget(self.balance_plot, 1, 1)
        grid.setColumnStretch(1, 1)

    def reset(self) -> None:
        self._lag_points.clear()
        self._balance_points.clear()
        self._lag_curve.setData([], [])
        self._balance_curve.setData([], [])

    def show_snapshot(self, snap: MeterSnapshot, cpu_percent: float | None) -> None:
        self.updates += 1
        self.lag.setText(_seconds(snap.lag_s))
        self.lag_median.setText(_seconds(snap.lag_median_s))
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
        self.balance_bar.setStyleSheet("QProgressBar::chunk { background: %s; }" % ("#d62728" if warn else "#2ca02c"))
        self.level_bar.setValue(int(max(min(snap.input_level_db, 0), -60)))
        t = snap.session_s
        if snap.lag_s is not None and (not self._lag_points or self._lag_points[-1][1] != snap.lag_s):
            self._lag_points.append((t, snap.lag_s))
        self._balance_points.append((t, snap.time_balance_s))
        while self._balance_points and self._balance_points[0][0] < t - HISTORY_S:
            self._balance_points.popleft()
        while self._lag_points and self._lag_points[0][0] < t - HISTORY_S:
            self._lag_points.popleft()
        if self._lag_points:
            xs, ys = zip(*self._lag_points, strict=True)
            self._lag_curve.setData(list(xs), list(ys))
        xs, ys = zip(*self._balance_points, strict=True)
        self._balance_curve.setData(list(xs), list(ys))
