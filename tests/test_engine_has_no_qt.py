"""The engine never imports Qt: the CLI, benchmarks and evaluation must run without a GUI stack."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import engine


def test_importing_every_engine_module_loads_no_qt() -> None:
    modules = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.") if m.name != "engine.__main__"]
    assert "engine.audio.ringbuffer" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "qt = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'pyqtgraph')))\n"
        "print(','.join(qt))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
