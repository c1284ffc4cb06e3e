"""liveshadow's desktop window (PySide6) over the engine."""

import engine  # noqa: F401 - first: it limits numpy's BLAS threads before any module loads numpy
