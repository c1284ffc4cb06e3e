"""Python's cyclic garbage collection pinned to the GUI thread while a window is open.

The collector runs in whichever thread allocates past its threshold: an engine thread (the recognizer, the voice's
split) then finalizes Qt and pyqtgraph objects caught in reference cycles, from the wrong thread. In CI that hung
the test process for good: the voice-splitting thread inside a collection waiting for the GIL, the GUI thread holding
it and waiting on Qt. While a window is open the automatic collector is off and a timer in the GUI thread collects
as the automatic one would (the pattern pyqtgraph and calibre use); when the last window closes it is on again.
"""

from __future__ import annotations

import gc
import logging

from PySide6.QtCore import QObject, QTimer

log = logging.getLogger(__name__)

CHECK_MS = 200
_open = 0  # windows holding the collector off


class MainThreadCollector(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._running = False

    def start(self) -> None:
        global _open
        if self._running:
            return
        self._running = True
        _open += 1
        gc.disable()
        self._timer.start(CHECK_MS)

    def check(self) -> None:
        """Collect the generations whose counts passed their thresholds, as the automatic collector would."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        generation = -1
        for g in range(3):
            if counts[g] <= thresholds[g]:
                break
            generation = g
        if generation >= 0:
            gc.collect(generation)

    def stop(self) -> None:
        """Collect what the window left (here, in the GUI thread), then hand collection back."""
        global _open
        if not self._running:
            return
        self._running = False
        self._timer.stop()
        _open -= 1
        gc.collect()
        if _open == 0:
            gc.enable()
