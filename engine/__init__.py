"""liveshadow engine: everything that is not GUI. Nothing in this package imports Qt."""

import os
from importlib.metadata import PackageNotFoundError, version

# Before anything imports numpy: its BLAS (OpenBLAS) starts a thread per core, and those threads keep spinning after
# each call. The recognizer's feature extraction makes one call a step, so on 2 cores they took time from the voice
# and the recognizer, each of which has one core (the voice's piece beside the
# recognizer 0.47 -> 0.30 s). Nothing in a session gains from a second BLAS thread. A value the user set stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    __version__ = version("liveshadow")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

APP_NAME = "liveshadow"
