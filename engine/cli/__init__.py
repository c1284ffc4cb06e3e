"""The ``liveshadow`` command: the app by default, and headless subcommands that share the engine's code path. Each
subcommand is a module of this package with its options (``add_parser``) and its runner."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from engine import __version__
from engine.cli import (
    bench,
    evaluate,
    gui,
    practice,
    selftest,
    sentence_clips,
    shadow,
    speak,
    stress_set,
    train_policy,
    transcribe,
)
from engine.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from engine.logsetup import setup_logging

__all__ = ["EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

log = logging.getLogger(__name__)

SUBCOMMANDS = (
    gui,
    speak,
    transcribe,
    bench,
    shadow,
    evaluate,
    practice,
    selftest,
    stress_set,
    sentence_clips,
    train_policy,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="liveshadow",
        description="Real-time speech shadowing: recognize a speaker and re-voice the words while they talk.",
        epilog="With no subcommand, the desktop app starts.",
    )
    parser.add_argument("--version", action="version", version=f"liveshadow {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more to stderr (-v info, -vv debug)")
    # -v also after the subcommand; SUPPRESS keeps a subcommand from resetting what came before it
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for command in SUBCOMMANDS:  # in the order --help lists them
        command.add_parser(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args([*(argv if argv is not None else sys.argv[1:]), "gui"])
    log_path = setup_logging(args.verbose)
    log.debug("liveshadow %s, command %s, log file %s", __version__, args.command, log_path)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
