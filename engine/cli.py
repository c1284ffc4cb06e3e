"""The ``liveshadow`` command: the app by default, and headless subcommands that share the engine's code path."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from engine import __version__
from engine.logsetup import setup_logging

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2  # also what a subcommand that is not implemented yet returns

# Subcommands that later work fills in: name → one-line help. Each exits with EXIT_USAGE and says so.
PLANNED: dict[str, str] = {
    "speak": "speak text with the incremental TTS engine",
    "transcribe": "transcribe a WAV file with the streaming recognizer",
    "shadow": "shadow a WAV file or the microphone: recognize and re-voice it live",
    "eval": "run the evaluation on a manifest of recordings and write reports and plots",
    "bench": "benchmark a stage (tts, asr, shadow) and print figures",
}


def _not_implemented(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(f"liveshadow {name}: not implemented yet", file=sys.stderr)
        return EXIT_USAGE

    return run


def _run_gui(args: argparse.Namespace) -> int:
    # Imported here so headless subcommands never load Qt.
    from app.main import AppStartError, run_app

    try:
        return run_app(screenshot=args.screenshot, quit_after_s=args.quit_after)
    except AppStartError as exc:
        print(f"liveshadow: {exc}", file=sys.stderr)
        return EXIT_ERROR


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

    gui = sub.add_parser("gui", parents=[common], help="start the desktop app (the default)")
    gui.add_argument("--screenshot", metavar="PNG", help="render the main window to a PNG file and exit")
    gui.add_argument("--quit-after", type=float, metavar="SECONDS", help="close the app after this long")
    gui.set_defaults(func=_run_gui)

    for name, help_text in PLANNED.items():
        planned = sub.add_parser(name, parents=[common], help=f"{help_text} (not implemented yet)")
        planned.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        planned.set_defaults(func=_not_implemented(name))
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


if __name__ == "__main__":
    sys.exit(main())
