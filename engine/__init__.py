"""liveshadow engine: everything that is not GUI. Nothing in this package imports Qt."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("liveshadow")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

APP_NAME = "liveshadow"
