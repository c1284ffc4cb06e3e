"""``liveshadow sentence-clips``: every sentence of the development sets cut tight into a recording of its own."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from engine.cli.common import EXIT_OK, EXIT_USAGE, fail, manifest_path

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    clips = sub.add_parser(
        "sentence-clips", parents=[common], help="cut every sentence of recordings into a clip of its own (a dev set)"
    )
    clips.add_argument("--out", metavar="DIR", required=True, help="write manifest.jsonl and wav/ here")
    clips.add_argument(
        "--manifest",
        metavar="JSONL",
        action="append",
        help="recordings to cut (repeat for several; default ../shared/speech and speech-hard)",
    )
    clips.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from engine.audio.io import AudioFileError
    from engine.eval.sentence_clips import ClipError, build

    default = manifest_path(None)
    manifests = (
        [Path(m) for m in args.manifest]
        if args.manifest
        else [default, default.parent.parent / "speech-hard" / "manifest.jsonl"]
    )
    missing = [m for m in manifests if not m.is_file()]
    if missing:
        return fail(f"manifest not found: {', '.join(map(str, missing))}", EXIT_USAGE)
    try:
        counts = build(manifests, Path(args.out), progress=lambda text: log.info("sentence-clips: %s", text))
    except (ClipError, AudioFileError, OSError) as exc:
        return fail(str(exc))
    print(
        f"{counts['clips']} clips, {counts['audio_s'] / 60:.1f} minutes ({counts['left_out']} sentences left out): "
        f"{Path(args.out) / 'manifest.jsonl'}"
    )
    return EXIT_OK
