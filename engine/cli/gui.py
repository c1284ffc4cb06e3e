"""``liveshadow gui`` (the default): the desktop app."""

from __future__ import annotations

import argparse
import sys

from engine.cli.common import EXIT_ERROR


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    gui = sub.add_parser("gui", parents=[common], help="start the desktop app (the default)")
    gui.add_argument("--screenshot", metavar="PNG", help="render the main window to a PNG file and exit")
    gui.add_argument("--quit-after", type=float, metavar="SECONDS", help="close the app after this long")
    gui.add_argument("--shadow", metavar="WAV", help="start shadowing this recording when the window opens")
    gui.add_argument(
        "--screenshot-after",
        type=float,
        metavar="SECONDS",
        help="with --screenshot: take it this long after the window opened",
    )
    gui.set_defaults(func=_run_gui)


def _run_gui(args: argparse.Namespace) -> int:
    # Imported here so headless subcommands never load Qt.
    from app.main import AppStartError, run_app

    try:
        return run_app(
            screenshot=args.screenshot,
            quit_after_s=args.quit_after,
            shadow_file=args.shadow,
            screenshot_after_s=args.screenshot_after,
        )
    except AppStartError as exc:
        print(f"liveshadow: {exc}", file=sys.stderr)
        return EXIT_ERROR
