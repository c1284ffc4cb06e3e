"""``liveshadow practice``: the subcommand's options and what it prints."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.practice.score import ACCURACY, EVS_S, LONGEST_LOST_S, MISSED_WORDS, RATE_RATIO

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    practice = sub.add_parser(
        "practice", parents=[common], help="score a person's shadowing of a recording: ear-voice span, words missed"
    )
    practice.add_argument("source", help="the recording that was shadowed (WAV, FLAC, OGG)")
    practice.add_argument("--voice", metavar="ATTEMPT", required=True,
                          help="the person's recording, begun when the source began (else --offset-s)")  # fmt: skip
    practice.add_argument("--lang", default="en", metavar="L",
                          help="the language spoken (en, es, fr, de, ...; default en)")  # fmt: skip
    practice.add_argument("--offset-s", type=float, default=0.0, metavar="S",
                          help="the attempt began this long after the source (negative: before)")  # fmt: skip
    practice.add_argument("--json", action="store_true", help="print the whole report as JSON")
    practice.add_argument("--report", metavar="JSON", help="also write the whole report here")
    practice.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.audio.io import AudioFileError
    from engine.practice.attempt import practice_file

    for path in (args.source, args.voice):
        if not Path(path).is_file():
            print(f"liveshadow: no such file: {path}", file=sys.stderr)
            return EXIT_USAGE
    if args.report and not Path(args.report).resolve().parent.is_dir():
        print(f"liveshadow: the folder of {args.report} does not exist", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = practice_file(Path(args.source), Path(args.voice), args.lang, args.offset_s)
    except (AsrError, AudioFileError, OSError) as exc:
        print(f"liveshadow: {exc}", file=sys.stderr)
        return EXIT_ERROR
    text = json.dumps(report, indent=1, allow_nan=False)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    if args.json:
        print(text)
        return EXIT_OK
    print(summary(report))
    return EXIT_OK


def summary(report: dict) -> str:
    evs = report[EVS_S]
    lines = [f"source: {report['source_text']}", f"you:    {report['attempt_text']}"]
    if evs["count"]:
        lines.append(f"ear-voice span: median {evs['median']:.2f} s, p90 {evs['p90']:.2f} s, max {evs['max']:.2f} s "
                     f"({evs['count']} words said of {report['source_words']})")  # fmt: skip
    else:
        lines.append(f"no word of the source's {report['source_words']} was said")
    accuracy = report[ACCURACY]
    rate = report[RATE_RATIO]
    lines.append(f"accuracy {accuracy:.0%}" if accuracy is not None else "accuracy: the source has no words")
    lines[-1] += (f"; missed {report[MISSED_WORDS]}, substituted {report['substituted_words']}, "
                  f"added {report['added_words']}; longest stretch lost {report[LONGEST_LOST_S]:.1f} s")  # fmt: skip
    if rate is not None:
        lines[-1] += f"; your rate {rate:.2f}x the source's"
    return "\n".join(lines)
