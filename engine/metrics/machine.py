"""The ``machine`` block of every report: cores, CPU model, library versions."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPORTED_PACKAGES = (
    "liveshadow", "numpy", "onnxruntime", "onnx", "piper-tts", "faster-whisper", "ctranslate2", "vosk",
    "silero-vad", "torch", "sounddevice", "soxr", "PySide6-Essentials",
)  # fmt: skip


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, or what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def package_versions(names: tuple[str, ...] = REPORTED_PACKAGES) -> dict[str, str | None]:
    result: dict[str, str | None] = {}
    for name in names:
        try:
            result[name] = version(name)
        except PackageNotFoundError:
            result[name] = None
    return result


def machine_info() -> dict[str, object]:
    cores = os.cpu_count() or 1
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = cores
    return {
        "cores": usable,
        "cpu_count": cores,
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": package_versions(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),  # numpy's BLAS threads (``engine`` sets 1)
    }
