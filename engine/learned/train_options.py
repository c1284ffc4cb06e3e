"""The trainer's command-line options (``liveshadow train-policy``, or ``python -m engine.learned.train_options``):
parsed into ``TrainSettings`` without importing torch, which only training itself needs."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from engine.learned.environment import RewardWeights
from engine.learned.train import TrainSettings, ablate, train
from engine.tts.learned.moves import MOVES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="folder for episodes, checkpoint, curve and policy")
    parser.add_argument(
        "--speech-dir",
        type=Path,
        action="append",
        help="recordings with manifest.jsonl (repeatable; default ../shared/speech and ../shared/speech-hard)",
    )
    parser.add_argument("--iterations", type=int, default=TrainSettings.iterations)
    parser.add_argument("--batch", type=int, default=TrainSettings.batch, help="training episodes per iteration")
    parser.add_argument(
        "--discount",
        type=float,
        default=TrainSettings.discount,
        help="the cost-to-go's discount per decision (1 = none)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=TrainSettings.lr)
    parser.add_argument("--workers", type=int, default=2, help="replaying processes (one per core)")
    defaults = RewardWeights()
    parser.add_argument("--lag-weight", type=float, default=defaults.lag, help="return: per second of mean lag")
    parser.add_argument("--underrun-weight", type=float, default=defaults.underrun, help="return: per underrun")
    parser.add_argument(
        "--quality-weight",
        type=float,
        default=defaults.quality,
        help="return: per dB of mean word distance from the whole-sentence voice",
    )
    parser.add_argument("--tempos", default="1,1.2", help="training recordings replayed at these tempos")
    parser.add_argument("--slowdowns", default="1,2", help="every recording at these CPU slowdowns")
    parser.add_argument(
        "--moves", default=",".join(MOVES), help=f"the moves the policy may take ({', '.join(MOVES)}; rule always)"
    )
    parser.add_argument(
        "--ablate",
        action="store_true",
        help="after training: the best policy without each feature group (ablation.json)",
    )


def settings_from(args: argparse.Namespace) -> TrainSettings:
    def floats(text: str) -> tuple[float, ...]:
        return tuple(float(x) for x in text.split(",") if x.strip())

    def moves(text: str) -> tuple[str, ...]:
        chosen = tuple(m.strip() for m in text.split(",") if m.strip())
        unknown = [m for m in chosen if m not in MOVES]
        if unknown:
            raise ValueError(f"unknown moves {', '.join(unknown)} (the moves are {', '.join(MOVES)})")
        return tuple(m for m in MOVES if m in chosen or m == MOVES[0])

    return TrainSettings(
        out=args.out,
        speech_dirs=tuple(args.speech_dir or ()),
        iterations=args.iterations,
        batch=args.batch,
        discount=args.discount,
        weights=RewardWeights(lag=args.lag_weight, underrun=args.underrun_weight, quality=args.quality_weight),
        seed=args.seed,
        lr=args.lr,
        workers=args.workers,
        tempos=floats(args.tempos),
        slowdowns=floats(args.slowdowns),
        moves=moves(args.moves),
    )


def run(args: argparse.Namespace, progress=print) -> None:
    settings = settings_from(args)
    train(settings, progress)
    if args.ablate:
        ablate(settings, progress)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.learned.train_options", description="Train the learned voice policy."
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)  # a line per recognizer step otherwise
    run(args, progress=lambda line: print(line, flush=True))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
