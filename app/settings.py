"""Settings remembered between runs: one INI file in the user config folder (``LIVESHADOW_CONFIG_DIR`` moves it)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from engine import paths

SETTINGS_FILE_NAME = "liveshadow.ini"


def settings_path() -> Path:
    return paths.config_dir() / SETTINGS_FILE_NAME


def app_settings() -> QSettings:
    """The app's settings store; every call reads the same file."""
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return QSettings(str(path), QSettings.Format.IniFormat)
