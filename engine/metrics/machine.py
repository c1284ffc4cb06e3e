"""The ``machine`` block of every report: cores, CPU model, library versions."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPORTED_PACKAGES = (
    "liveshadow",
    "numpy",
    "onnxruntime",
    "onnx",
    "piper-tts",
    "faster-whisper",
    "ctranslate2",
    "vosk",
    "silero-vad",
    "torch",
    "sounddevice",
    "soxr",
    "PySide6-Essentials",
)
# CTranslate2 (the recognizer) reads these to choose its kernels (CT2_FORCE_CPU_ISA), its matrix products (MKL or
# oneDNN, CT2_USE_MKL) and oneDNN's (ONEDNN_MAX_CPU_ISA); numpy's OpenBLAS, which makes the recognizer's features,
# its own (OPENBLAS_CORETYPE). The same code rounds differently with each, which moves a streamed translation's BLEU
# by up to two points, so a report says when they were set.
CTRANSLATE2_SETTINGS = ("CT2_FORCE_CPU_ISA", "CT2_USE_MKL", "ONEDNN_MAX_CPU_ISA", "OPENBLAS_CORETYPE")


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
        "ctranslate2_settings": {name: os.environ[name] for name in CTRANSLATE2_SETTINGS if name in os.environ},
    }


def describe_machine(machine: dict) -> str:
    """ "2 cores, AMD EPYC" for a report's footer, with the recognizer's kernel settings when any were set."""
    text = f"{machine.get('cores')} cores, {machine.get('cpu_model', '')}"
    settings = machine.get("ctranslate2_settings") or {}
    if settings:
        text += " (CTranslate2 with " + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())) + ")"
    return text
