"""Logging for the CLI and the app: stderr at a chosen level, plus a rotating file in the user log folder."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from engine import APP_NAME, paths

LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
LOG_FILE_BYTES = 1_000_000
LOG_FILE_BACKUPS = 3

_HANDLER_TAG = "_liveshadow_handler"


def verbosity_to_level(verbose: int) -> int:
    """0 → WARNING, 1 (-v) → INFO, 2+ (-vv) → DEBUG."""
    if verbose <= 0:
        return logging.WARNING
    if verbose == 1:
        return logging.INFO
    return logging.DEBUG


def remove_handlers() -> None:
    """Take ``setup_logging``'s handlers off the root logger and close them (the others stay)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _HANDLER_TAG, False):
            root.removeHandler(handler)
            handler.close()


def setup_logging(verbose: int = 0, log_file: bool = True) -> Path | None:
    """Configure the root logger once; calling again replaces our handlers. Returns the log file path, if any.

    The file always records INFO and above, whatever the console level, so a user's bug report has context.
    """
    root = logging.getLogger()
    remove_handlers()
    console_level = verbosity_to_level(verbose)
    root.setLevel(min(console_level, logging.INFO))

    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(logging.Formatter(LOG_FORMAT))
    setattr(console, _HANDLER_TAG, True)
    root.addHandler(console)

    if not log_file:
        return None
    path = paths.log_dir() / f"{APP_NAME}.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_FILE_BYTES, backupCount=LOG_FILE_BACKUPS, encoding="utf-8"
        )
    except OSError as exc:
        logging.getLogger(__name__).warning("cannot write the log file %s: %s", path, exc)
        return None
    file_handler.setLevel(logging.INFO if console_level > logging.DEBUG else logging.DEBUG)
    file_handler.setFormatter(logging.Formatter(LOG_FORMAT))
    setattr(file_handler, _HANDLER_TAG, True)
    root.addHandler(file_handler)
    return path
