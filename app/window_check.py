"""The self-test's window check: open the main window, render it, and look at what it drew."""

from __future__ import annotations

import os
import sys

from app.main import display_problem

MIN_COLOURS = 3  # a window that drew its widgets has text, frames and a background; a blank one has one colour
SAMPLES_PER_SIDE = 40


def render_main_window() -> str:
    """Show the main window (offscreen when there is no display), grab it, and check that it is not blank.

    Returns the size and the platform it was rendered on; raises RuntimeError when nothing was drawn.
    """
    if display_problem():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow

    qt_app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow()
    window.remember_geometry = False  # a check must not move the user's window next time
    try:
        window.show()
        qt_app.processEvents()
        image = window.grab().toImage()
    finally:
        window.close()
    width, height = image.width(), image.height()
    if image.isNull() or width == 0 or height == 0:
        raise RuntimeError(f"the main window rendered nothing on the {QGuiApplication.platformName()} platform")
    step_x, step_y = max(1, width // SAMPLES_PER_SIDE), max(1, height // SAMPLES_PER_SIDE)
    colours = {image.pixel(x, y) for x in range(0, width, step_x) for y in range(0, height, step_y)}
    if len(colours) < MIN_COLOURS:
        raise RuntimeError(f"the main window rendered blank ({len(colours)} colour(s), {width}x{height} px)")
    platform = QGuiApplication.platformName()
    return f"rendered {width}x{height} px on the {platform} platform ({len(colours)} colours sampled)"
