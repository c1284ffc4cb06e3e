"""Per-user folders (platformdirs), each overridable by an environment variable.

The overrides let tests and portable installs keep settings, caches and logs away from the user's real ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from engine import APP_NAME

ENV_CONFIG_DIR = "LIVESHADOW_CONFIG_DIR"
ENV_CACHE_DIR = "LIVESHADOW_CACHE_DIR"
ENV_LOG_DIR = "LIVESHADOW_LOG_DIR"
ENV_DATA_DIR = "LIVESHADOW_DATA_DIR"


def _dir(env: str, default: str) -> Path:
    value = os.environ.get(env)
    return Path(value).expanduser() if value else Path(default)


def config_dir() -> Path:
    """Where settings live."""
    return _dir(ENV_CONFIG_DIR, platformdirs.user_config_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Where rebuildable files live (split voice graphs, ...)."""
    return _dir(ENV_CACHE_DIR, platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def log_dir() -> Path:
    """Where the rotating log file lives."""
    return _dir(ENV_LOG_DIR, platformdirs.user_log_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """Where sessions are recorded by default."""
    return _dir(ENV_DATA_DIR, platformdirs.user_data_dir(APP_NAME, appauthor=False))


def repo_root() -> Path:
    """The source tree's root (meaningful in a checkout or an editable install)."""
    return Path(__file__).resolve().parent.parent


def assets_dir() -> Path:
    return repo_root() / "assets"


def shared_speech_dir() -> Path:
    """The project's real-speech recordings: ``$LIVESHADOW_SPEECH_DIR`` or ``../shared/speech`` beside the checkout."""
    env = os.environ.get("LIVESHADOW_SPEECH_DIR")
    if env:
        return Path(env).expanduser()
    return repo_root().parent / "shared" / "speech"
