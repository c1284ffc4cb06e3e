"""The engine's layers point down: what a module imports (at its top or inside a function) never reaches a layer above
it. Audio and metrics know no stage; the recognizer and the voice know no pipeline; the pipeline knows neither the
evaluation, the practice, the learned policy's training, the command line nor the window."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "engine"
STAGES = ("asr", "tts", "pipeline", "eval", "practice", "learned", "research", "cli", "selftest")
ABOVE_PIPELINE = ("eval", "practice", "learned", "research", "cli", "selftest")
FORBIDDEN = {  # a module under engine/<key> may import no engine.<name> for these names (nor the app)
    "audio": STAGES,
    "metrics": STAGES,
    "asr": ("tts", "pipeline", *ABOVE_PIPELINE),
    "tts": ("asr", "pipeline", *ABOVE_PIPELINE),
    "pipeline": ABOVE_PIPELINE,
}


def _imported(path: Path) -> set[str]:
    """Every module ``path`` names in an import, anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)  # ``from engine import eval``
    return names


def _layer_of(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] == "app":
        return "app"
    return parts[1] if parts[0] == "engine" and len(parts) > 1 else None


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    files = sorted((ENGINE / layer).rglob("*.py"))
    assert files
    wrong = []
    for path in files:
        for name in _imported(path):
            above = _layer_of(name)
            if above == "app" or above in FORBIDDEN[layer]:
                wrong.append(f"{path.relative_to(ENGINE.parent)} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_the_check_finds_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from engine.pipeline.config import ShadowConfig\n    from engine import eval\n")
    assert {_layer_of(n) for n in _imported(module)} >= {"pipeline", "eval"}


def test_only_engine_research_imports_simuleval() -> None:
    """SimulEval is the optional research install: the app's own modules never need it."""
    wrong = [
        f"{path.relative_to(ENGINE.parent)} imports {name}"
        for path in sorted(ENGINE.rglob("*.py"))
        if not path.is_relative_to(ENGINE / "research")
        for name in _imported(path)
        if name.split(".")[0] == "simuleval"
    ]
    assert not wrong, "\n".join(wrong)
