"""``liveshadow self-test``: every bundled model loaded and used once, and the window rendered."""

from __future__ import annotations

import argparse

from engine import __version__
from engine.cli.common import EXIT_ERROR


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    selftest = sub.add_parser(
        "self-test", parents=[common], help="load every bundled model, speak and recognize a sentence, open the window"
    )
    selftest.add_argument("--no-window", action="store_true", help="skip the main window check (no Qt)")
    selftest.set_defaults(func=_run_self_test)


def _window_check() -> str:
    # Imported when the check runs, so the engine's checks run even where Qt cannot load.
    from app.window_check import render_main_window

    return render_main_window()


def _run_self_test(args: argparse.Namespace) -> int:
    from engine.selftest import checks, run_checks

    passed = failed = 0
    print(f"liveshadow {__version__} self-test", flush=True)
    for result in run_checks(checks(window=None if args.no_window else _window_check)):
        print(result.line(), flush=True)
        passed, failed = passed + result.ok, failed + (not result.ok)
    print(f"{passed} passed, {failed} failed")
    return EXIT_ERROR if failed else 0
