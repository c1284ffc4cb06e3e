"""``liveshadow transcribe``: a recording through the streaming recognizer."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.asr.backend import AsrBackend
from engine.cli.common import EXIT_OK, EXIT_USAGE, fail, finite, json_default
from engine.metrics import names as metric_names


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    transcribe = sub.add_parser(
        "transcribe", parents=[common], help="transcribe a WAV file with the streaming recognizer"
    )
    transcribe.add_argument("file", help="a WAV (or FLAC, OGG) recording; any rate and channel count")
    transcribe.add_argument("--backend", choices=("whisper", "vosk"), default="whisper")
    transcribe.add_argument("--model", metavar="PATH", help="model folder (default: the bundled tiny.en)")
    transcribe.add_argument("--commit", default="la2", help="la2 (default), hold2, waitk or offline")
    mode = transcribe.add_mutually_exclusive_group()
    mode.add_argument("--simulate", action="store_true", help="compute-aware simulated clock (the default)")
    mode.add_argument("--realtime", action="store_true", help="pace the input like a microphone")
    transcribe.add_argument("--report", metavar="JSON", help="write the measurements here")
    transcribe.set_defaults(func=_run_transcribe)


def _run_transcribe(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.asr.commit import make_commit_policy
    from engine.asr.transcribe import transcribe_file
    from engine.asr.vad import VadError
    from engine.audio.io import AudioFileError

    try:
        make_commit_policy(args.commit)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    if args.report and not Path(args.report).resolve().parent.is_dir():
        return fail(f"the folder of {args.report} does not exist", EXIT_USAGE)
    try:
        backend: AsrBackend
        if args.backend == "vosk":
            from engine.asr.vosk_backend import VoskBackend

            backend = VoskBackend(args.model)
        else:
            from engine.asr.whisper_backend import WhisperBackend

            backend = WhisperBackend(args.model)
        report = transcribe_file(Path(args.file), backend, args.commit, realtime=args.realtime)
    except (AsrError, VadError, AudioFileError) as exc:
        return fail(str(exc))
    if args.report:
        Path(args.report).write_text(json.dumps(finite(report), indent=1, allow_nan=False, default=json_default))
    print(report["committed_text"])
    latency = report[metric_names.COMMIT_LATENCY_S]
    wer_text = (
        f"; wer_committed {report[metric_names.WER_COMMITTED]:.3f}, wer_offline {report[metric_names.WER_OFFLINE]:.3f}"
        if report[metric_names.WER_COMMITTED] is not None
        else ""
    )
    if latency["n"]:
        print(
            f"commit latency median {latency['median']:.2f} s, p90 {latency['p90']:.2f} s "
            f"({report['commit_latency_reference']}){wer_text}; rtf {report[metric_names.RTF_ASR]:.2f}; "
            f"behind {report[metric_names.BEHIND_S]:.2f} s",
            file=sys.stderr,
        )
    return EXIT_OK
