"""``liveshadow stress-set``: the stress set made from real recordings."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.cli.common import EXIT_OK, EXIT_USAGE, comma_list, fail, manifest_path


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    stress = sub.add_parser("stress-set", parents=[common], help="make the stress set from real recordings")
    stress.add_argument("--out", metavar="DIR", required=True, help="write manifest.jsonl and wav/ here")
    stress.add_argument("--manifest", metavar="JSONL", help="recordings to start from (default ../shared/speech)")
    stress.add_argument("--recordings", metavar="IDS", help="ids for the per-recording conditions, or all")
    stress.set_defaults(func=_run_stress_set)


def _run_stress_set(args: argparse.Namespace) -> int:
    from engine.asr.bench import load_manifest
    from engine.audio.io import AudioFileError
    from engine.eval.stress import StressSetError, build

    manifest = manifest_path(args.manifest)
    if not manifest.is_file():
        return fail(f"manifest not found: {manifest}", EXIT_USAGE)
    ids = None
    if args.recordings == "all":
        ids = [e["id"] for e in load_manifest(manifest)]
    elif args.recordings:
        ids = comma_list(args.recordings)
    try:
        entries = build(manifest, Path(args.out), ids)
    except (StressSetError, AudioFileError, OSError) as exc:
        return fail(str(exc))
    total = sum(e["duration_s"] for e in entries)
    print(f"{len(entries)} recordings, {total / 60:.1f} minutes: {Path(args.out) / 'manifest.jsonl'}")
    return EXIT_OK
