"""PyInstaller runtime hook: PyAV (FFmpeg, ~100 MB) is left out of the bundle.

faster-whisper imports PyAV at the top of its audio module but uses it only to decode files; liveshadow always
hands it samples (files are read with soundfile). A stand-in module lets the import succeed and says what happened
if anything ever asks it to decode.
"""

import sys
import types


def _missing(name: str) -> None:
    raise AttributeError(f"PyAV is not part of the liveshadow bundle (asked for av.{name}); pass samples, not files")


if "av" not in sys.modules:
    _stub = types.ModuleType("av")
    _stub.__getattr__ = _missing  # type: ignore[attr-defined]
    sys.modules["av"] = _stub
