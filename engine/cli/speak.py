"""``liveshadow speak``: text spoken by the incremental voice, with its measurements."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from engine.cli.common import EXIT_OK, EXIT_USAGE, POLICY_HELP, fail, finite, json_default, voice_policy
from engine.metrics import names as metric_names


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    speak = sub.add_parser("speak", parents=[common], help="speak text with the incremental TTS engine")
    speak.add_argument("text", nargs="?", help="the text to speak (or --stdin)")
    speak.add_argument("--stdin", action="store_true", help="read words from standard input as they are typed")
    speak.add_argument("--words-per-second", type=float, metavar="R", help="feed the words at this steady rate")
    speak.add_argument("--policy", type=voice_policy, default="lookahead", metavar="POLICY", help=POLICY_HELP)
    speak.add_argument("--k", type=int, default=1, help="lookahead chunks for --policy lookahead (default 1)")
    speak.add_argument("--first-chunk", type=int, default=18, metavar="PHONEMES", help="first chunk size (18)")
    speak.add_argument("--chunk", type=int, default=12, metavar="PHONEMES", help="later chunk size (12)")
    speak.add_argument("--delta", type=int, default=12, metavar="FRAMES", help="vocoder overlap frames (12)")
    speak.add_argument("--seed", type=int, default=0, help="noise seed: the same seed gives the same audio")
    speak.add_argument("--threads", type=int, default=1, help="inference threads (1)")
    speak.add_argument("--voice", metavar="ONNX", help="a Piper voice (.onnx beside its .onnx.json)")
    speak.add_argument("--out", metavar="WAV", help="write the synthesized audio here")
    speak.add_argument("--report", metavar="JSON", help="write the measurements here")
    speak.add_argument("--play", action="store_true", help="play through the output device while synthesizing")
    speak.add_argument("--device", help="output device (name or index) for --play")
    speak.set_defaults(func=_run_speak)


def _run_speak(args: argparse.Namespace) -> int:
    from engine.audio.devices import AudioDeviceError, device_arg
    from engine.tts.frontend import split_words
    from engine.tts.speak import SpeakOptions, paced, speak
    from engine.tts.voice_split import VoiceSplitError

    if (args.text is None) == (not args.stdin):
        return fail("speak needs TEXT or --stdin (one of them)", EXIT_USAGE)
    for name in ("k", "delta", "threads"):
        if getattr(args, name) < 0 or (name == "threads" and args.threads < 1):
            return fail(f"--{name} must be {'positive' if name == 'threads' else 'zero or more'}", EXIT_USAGE)
    if args.first_chunk < 1 or args.chunk < 1:
        return fail("chunk sizes must be at least 1 phoneme", EXIT_USAGE)
    if args.words_per_second is not None and args.words_per_second <= 0:
        return fail("--words-per-second must be positive", EXIT_USAGE)
    for path in (args.out, args.report):
        if path and not Path(path).resolve().parent.is_dir():
            return fail(f"the folder of {path} does not exist", EXIT_USAGE)

    batches: Iterator[list[str]]
    if args.stdin:
        batches = (line.split() for line in sys.stdin)
        if args.words_per_second:
            batches = paced([w for b in batches for w in b], args.words_per_second)
    else:
        words = split_words(args.text)
        batches = paced(words, args.words_per_second) if args.words_per_second else iter([words])
    options = SpeakOptions(
        policy=args.policy,
        k=args.k,
        first_chunk=args.first_chunk,
        chunk=args.chunk,
        delta=args.delta,
        seed=args.seed,
        threads=args.threads,
        play=args.play,
        device=device_arg(args.device),
        voice=args.voice,
    )
    try:
        result = speak(batches, options)
    except (VoiceSplitError, AudioDeviceError) as exc:
        return fail(str(exc))
    report = result.report
    if not report[metric_names.GEN_S]:
        print("liveshadow speak: nothing to say (no speakable words)", file=sys.stderr)
    if args.out:
        import soundfile

        soundfile.write(args.out, result.audio, result.sample_rate, subtype="PCM_16")
    if args.report:
        Path(args.report).write_text(json.dumps(finite(report), indent=1, allow_nan=False, default=json_default) + "\n")
    if report[metric_names.GEN_S]:
        balance = report[metric_names.TIME_BALANCE]
        # the time balance is defined from the second piece on (METRICS.md)
        balance_text = f"min time balance {min(balance):.3f} s" if balance else "one piece, no time balance"
        pieces = len(report["pieces"])
        print(
            f"{pieces} piece{'' if pieces == 1 else 's'}, {sum(report[metric_names.AUDIO_S]):.2f} s of audio; "
            f"first audio after {report[metric_names.FIRST_AUDIO_S]:.3f} s; "
            f"compute ratio median {report[metric_names.COMPUTE_RATIO]['median']:.3f}; "
            f"{balance_text}; underruns {report[metric_names.UNDERRUNS]}"
        )
    return EXIT_OK
