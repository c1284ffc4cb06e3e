"""SimulEval's source and target lists from a liveshadow manifest (one WAV path, one reference a line):

    python -m engine.research.simuleval_lists MANIFEST OUT_DIR [--lang L] [--reference text|translation] [--normalize]

writes OUT_DIR/source.txt and OUT_DIR/target.txt for ``simuleval --source … --target …``; with ``--lang`` only that
language's recordings (SimulEval runs one source language at a time)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.metrics.translation import normalize_for_bleu


def write_lists(
    manifest: Path, out_dir: Path, lang: str | None = None, reference: str = "text", normalize: bool = False
) -> int:
    """The lists for ``manifest``'s recordings (of ``lang`` when given) that have a ``reference``; how many.
    ``normalize``: the references lower-cased without punctuation, as bench interpret scores BLEU."""
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get(reference) and (lang is None or r.get("lang") == lang)]
    out_dir.mkdir(parents=True, exist_ok=True)
    sources = "".join(f"{(manifest.parent / r['wav']).resolve()}\n" for r in rows)
    (out_dir / "source.txt").write_text(sources, encoding="utf-8")
    texts = [normalize_for_bleu(r[reference]) if normalize else " ".join(r[reference].split()) for r in rows]
    (out_dir / "target.txt").write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.research.simuleval_lists", description=__doc__)
    parser.add_argument("manifest", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--lang", help="only the recordings in this language (the manifest's lang)")
    parser.add_argument("--reference", default="text", choices=("text", "translation"))
    parser.add_argument("--normalize", action="store_true", help="references lower-cased without punctuation")
    args = parser.parse_args(argv)
    if not args.manifest.is_file():
        parser.error(f"manifest not found: {args.manifest}")
    count = write_lists(args.manifest, args.out_dir, args.lang, args.reference, args.normalize)
    if not count:
        parser.error(
            f"{args.manifest} has no recordings with a {args.reference}" + (f" in {args.lang}" if args.lang else "")
        )
    print(f"{count} recordings: {args.out_dir / 'source.txt'}, {args.out_dir / 'target.txt'}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
