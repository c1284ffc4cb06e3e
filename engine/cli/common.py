"""What the subcommands share: exit codes, the error line, argument helpers and JSON output."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from engine.pipeline.config import ShadowConfig

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2  # also what a subcommand that is not implemented yet returns


def fail(message: str, code: int = EXIT_ERROR) -> int:
    print(f"liveshadow: {message}", file=sys.stderr)
    return code


def comma_list(text: str | None) -> list[str]:
    """The names of a comma-separated option ("la2, hold2,"): stripped, empty ones dropped; none for no option."""
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def manifest_path(arg: str | None) -> Path:
    """The manifest given on the command line, else ../shared/speech's."""
    from engine import paths

    return Path(arg) if arg else paths.shared_speech_dir() / "manifest.jsonl"


def part_manifest(manifest: Path, part: str) -> Path:
    """``manifest`` itself for ``all``; else a manifest of its recordings to choose levers on (``choose``) or of the
    fifth held back to confirm them (``confirm``), written to a temporary folder, with absolute paths."""
    if part == "all":
        return manifest
    import json
    import tempfile

    from engine.asr.bench import load_manifest
    from engine.eval.devsplit import select

    lines = load_manifest(manifest)
    kept = [
        {**{k: v for k, v in e.items() if k != "path"}, "wav": str(Path(e["path"]).resolve())}
        for e in select(lines, part)
    ]
    folder = Path(tempfile.mkdtemp(prefix=f"liveshadow-{part}-"))
    out = folder / "manifest.jsonl"
    out.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
    log.info("%s: %d of the %d recordings of %s", part, len(kept), len(lines), manifest)
    return out


def json_default(value: object) -> object:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def finite(value: object) -> object:
    from engine.metrics.jsonsafe import json_safe

    return json_safe(value)


def seconds_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def slowdown_config(slowdown: float) -> ShadowConfig:
    """The default configuration, with every stage's compute charged × ``slowdown`` on the simulated clock."""
    return ShadowConfig(cpu_slowdown=slowdown)


def add_cpu_slowdown(parser: argparse.ArgumentParser) -> None:
    text = "charge every stage's compute x F on the simulated clock: a CPU F times slower (1)"
    parser.add_argument("--cpu-slowdown", type=float, default=1.0, metavar="F", help=text)


def add_echo_hint(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--echo-hint-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="the echo canceller's reference this much earlier: a known delay from the speakers to "
        "the microphone (0: the canceller finds it)",
    )


POLICY_HELP = (
    "when the voice speaks: lookahead (Ma et al.'s, with --k; the default), learned (lookahead-1 with "
    "trained moves), wait-K-steps, full (whole sentences) or naive"
)


def voice_policy(text: str) -> str:
    """A voice policy name as the command line takes it (``lookahead`` with ``--k``, or one ``eval`` names)."""
    from engine.eval.runner import tts_config

    try:
        tts_config(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text
