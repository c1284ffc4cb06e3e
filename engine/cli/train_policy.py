"""``liveshadow train-policy``: the learned policy trained (torch, the developer install)."""

from __future__ import annotations

import argparse
import logging

from engine.cli.common import EXIT_OK, fail


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    trainer = sub.add_parser(
        "train-policy",
        parents=[common],
        help="train the learned voice policy (needs torch: the developer install)",
    )
    _add_train_arguments(trainer)
    trainer.set_defaults(func=_run_train_policy)


def _add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """The trainer's options, without importing torch for every command (``engine.learned.train_options`` has them)."""
    try:
        from engine.learned.train_options import add_arguments
    except ImportError:  # the packaged app (the trainer's own imports are lazy; this is a safety net)
        parser.add_argument("--out", required=True)
        return
    add_arguments(parser)


def _run_train_policy(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401 - only to say clearly when it is missing

        from engine.learned.train import ablate, train
        from engine.learned.train_options import settings_from
    except ImportError as exc:
        return fail(f"train-policy needs torch, which only the developer install has (scripts/setup): {exc}")
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)
    try:
        settings = settings_from(args)
        path = train(settings, progress=lambda line: print(line, flush=True))
        if args.ablate:
            ablate(settings, progress=lambda line: print(line, flush=True))
    except (OSError, ValueError) as exc:
        return fail(str(exc))
    print(f"trained policy: {path} (copy it to assets/{path.name} to ship it)")
    return EXIT_OK
