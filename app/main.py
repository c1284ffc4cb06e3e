"""Start the desktop app."""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)


class AppStartError(RuntimeError):
    """The app cannot start here; the message says why and what to do instead."""


def display_problem() -> str | None:
    """Why Qt cannot open a window here, or None when it can (or a headless platform was chosen)."""
    if os.environ.get("QT_QPA_PLATFORM") or sys.platform != "linux":
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display found (neither DISPLAY nor WAYLAND_DISPLAY is set). Run liveshadow from a desktop session; "
        "on a headless machine use the command-line subcommands (liveshadow --help)."
    )


def run_app(
    screenshot: str | None = None,
    quit_after_s: float | None = None,
    shadow_file: str | None = None,
    screenshot_after_s: float | None = None,
) -> int:
    """Show the main window until it is closed.

    ``screenshot``: render the window to that PNG and exit, at once or ``screenshot_after_s`` seconds in.
    ``shadow_file``: start shadowing that recording as soon as the window is up (a demo, and how the screenshot of
    a session is taken).
    """
    problem = display_problem()
    if problem and screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a screenshot needs no screen
    elif problem:
        raise AppStartError(problem)

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.main_window import MainWindow
    from app.widgets.settings_panel import SOURCE_FILE

    qt_app = QApplication.instance() or QApplication(sys.argv[:1])
    qt_app.setApplicationName("liveshadow")
    qt_app.setOrganizationName("liveshadow")
    window = MainWindow()
    window.remember_geometry = not screenshot
    window.show()
    if not screenshot:
        window.prepare_models()
    if shadow_file:
        window.settings_panel.source.setCurrentText(SOURCE_FILE)
        window.settings_panel.source_file.setText(shadow_file)
        QTimer.singleShot(0, window.start_session)
    result = {"saved": True}
    if screenshot:

        def take() -> None:
            qt_app.processEvents()
            result["saved"] = window.grab().save(screenshot, "PNG")
            log.info("saved a screenshot of the main window to %s", screenshot)
            window.close()

        if screenshot_after_s is None:
            take()
        else:
            QTimer.singleShot(int(screenshot_after_s * 1000), take)
            qt_app.exec()
        if not result["saved"]:
            raise AppStartError(f"could not write the screenshot {screenshot}")
        return 0
    if quit_after_s is not None:
        QTimer.singleShot(int(quit_after_s * 1000), window.close)
    return int(qt_app.exec())


def main() -> int:
    """Entry point of the ``liveshadow-gui`` launcher (the .desktop file)."""
    from engine.logsetup import setup_logging

    setup_logging(0)
    try:
        return run_app()
    except AppStartError as exc:
        log.error("liveshadow: %s", exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
