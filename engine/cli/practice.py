"""``liveshadow practice``: a person's shadowing or interpreting scored, recorded or live (``engine.practice``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from engine.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from engine.practice.summary import figure_lines


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    practice = sub.add_parser(
        "practice", parents=[common], help="score a person's shadowing of a recording: ear-voice span, words missed"
    )
    practice.add_argument(
        "source", nargs="?", help="the recording shadowed (WAV, FLAC, MP3, M4A, Opus, a video's sound)"
    )
    practice.add_argument(
        "--voice", metavar="ATTEMPT", help="the person's recording, begun when the source began (else --offset-s)"
    )
    practice.add_argument(
        "--lang",
        metavar="L",
        help="the source's language (en, es, fr, de, ...; default en, or detected with --interpret)",
    )
    practice.add_argument(
        "--interpret",
        action="store_true",
        help="the attempt interprets the source into English (the source in another language), or into --into L",
    )
    practice.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="X",
        help="the source plays (--live) or was played at this speed, 0.5-1.25, its pitch kept; "
        "times are on its clock as played (default 1)",
    )
    practice.add_argument(
        "--sentences",
        action="store_true",
        help="sentence by sentence: each sentence plays (--live) or played, then a pause to repeat "
        "it in; every sentence is scored",
    )
    practice.add_argument(
        "--loop",
        metavar="A-B",
        type=_loop_times,
        help="loop the words from A to B seconds of the source (e.g. 12.5-20): it plays --passes "
        "times, a short gap between, each pass scored",
    )
    practice.add_argument(
        "--passes", type=int, default=3, metavar="N", help="how many times --loop plays (0: until Ctrl+C; default 3)"
    )
    practice.add_argument(
        "--into",
        metavar="L",
        help="with --interpret: the language you interpret into (es, fr, de, ...; default en), "
        "recognized by Whisper base; chrF against SOURCE's name + .L.txt when it lies beside "
        "it",
    )
    practice.add_argument(
        "--offset-s",
        type=float,
        default=0.0,
        metavar="S",
        help="the attempt began this long after the source (negative: before)",
    )
    practice.add_argument(
        "--live",
        action="store_true",
        help="play SOURCE (on headphones) and score you as you shadow it into the microphone",
    )
    practice.add_argument(
        "--hear",
        metavar="WHAT",
        help="practise live on this computer's sound ('system') or a sound-server source by name, in place of a "
        "recording: another application plays it; Ctrl+C ends and scores (kept in the data folder without --record)",
    )
    practice.add_argument("--input", metavar="DEV", help="the microphone for --live (name or index)")
    practice.add_argument("--output", metavar="DEV", help="the output for --live (name or index; use headphones)")
    practice.add_argument("--record", metavar="DIR", help="--live: keep your recording and the report here")
    practice.add_argument("--json", action="store_true", help="print the whole report as JSON")
    practice.add_argument("--report", metavar="JSON", help="also write the whole report here")
    practice.add_argument(
        "--export", metavar="DIR", help="also write the attempt as a Praat TextGrid, an ELAN .eaf and a CSV here"
    )
    practice.add_argument("--history", action="store_true", help="list the past attempts at SOURCE (progress)")
    practice.add_argument("--no-history", action="store_true", help="do not keep this attempt in the history")
    practice.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.audio.devices import AudioDeviceError
    from engine.audio.io import AudioFileError
    from engine.practice import history
    from engine.practice.attempt import practice_file

    if args.hear:
        return run_heard(args)
    if not args.source:
        print("liveshadow: practice needs a SOURCE recording (or --hear system)", file=sys.stderr)
        return EXIT_USAGE
    if (args.input or args.output or args.record) and not args.live:
        print("liveshadow: --input, --output and --record are for --live", file=sys.stderr)
        return EXIT_USAGE
    if not args.voice and not args.history and not args.live:
        print("liveshadow: practice needs --voice ATTEMPT, --live (or --history)", file=sys.stderr)
        return EXIT_USAGE
    if args.live and (args.voice or args.offset_s):
        print("liveshadow: --live records the attempt itself: not with --voice or --offset-s", file=sys.stderr)
        return EXIT_USAGE
    for path in (args.source, args.voice):
        if path and not Path(path).is_file():
            print(f"liveshadow: no such file: {path}", file=sys.stderr)
            return EXIT_USAGE
    if not args.voice and not args.live:
        print(history_text(history.attempts(Path(args.source))))
        return EXIT_OK
    if args.report and not Path(args.report).resolve().parent.is_dir():
        print(f"liveshadow: the folder of {args.report} does not exist", file=sys.stderr)
        return EXIT_USAGE
    from engine.audio.stretch import MAX_SPEED, MIN_SPEED
    from engine.practice.loop import MAX_PASSES

    if not MIN_SPEED <= args.speed <= MAX_SPEED:
        print(f"liveshadow: --speed must lie between {MIN_SPEED} and {MAX_SPEED}, not {args.speed:g}", file=sys.stderr)
        return EXIT_USAGE
    if args.speed != 1.0 and args.interpret and not args.live:
        print("liveshadow: --speed is for shadowing a recorded attempt, or --live", file=sys.stderr)
        return EXIT_USAGE
    if args.into and args.into != "en":
        if not args.interpret:
            print("liveshadow: --into is the language you interpret into: it goes with --interpret", file=sys.stderr)
            return EXIT_USAGE
        from engine.asr.languages import whisper_knows

        if not whisper_knows(args.into):
            print(
                f"liveshadow: Whisper does not transcribe {args.into!r} (a language code: es, fr, de, ...)",
                file=sys.stderr,
            )
            return EXIT_USAGE
    if args.loop and (args.interpret or args.sentences):
        print("liveshadow: --loop is for shadowing practice, and not with --sentences", file=sys.stderr)
        return EXIT_USAGE
    if args.loop and not 0 <= args.passes <= MAX_PASSES:
        print(f"liveshadow: --passes must lie between 0 (until Ctrl+C) and {MAX_PASSES}", file=sys.stderr)
        return EXIT_USAGE
    if (args.sentences or args.loop) and args.export and not args.live:
        print(
            "liveshadow: --export of a recorded attempt sentence by sentence or looped: export the --live session, "
            "which keeps what it played",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.sentences and args.interpret:
        print(
            "liveshadow: --sentences is for shadowing practice (interpreting is timed per sentence already)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.export and args.interpret:
        print("liveshadow: --export is for shadowing practice (interpreting is scored per sentence)", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.live:
            report = run_live(args)
            if report is None:
                return EXIT_ERROR
        elif args.interpret and args.into and args.into != "en":
            from engine.practice.interpret_into import interpret_into_file

            report = interpret_into_file(
                Path(args.source), Path(args.voice), args.into, args.lang or "en", args.offset_s
            )
        elif args.interpret:
            from engine.practice.interpreting import interpret_practice_file

            report = interpret_practice_file(Path(args.source), Path(args.voice), args.lang, args.offset_s)
        else:
            report = practice_file(
                Path(args.source),
                Path(args.voice),
                args.lang or "en",
                args.offset_s,
                speed=args.speed,
                sentence_by_sentence=args.sentences,
                loop=_loop(args),
            )
    except (AsrError, AudioFileError, AudioDeviceError, OSError, ValueError) as exc:  # ValueError: a loop, a speed
        print(f"liveshadow: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return finish(args, report, Path(args.source))


def finish(args: argparse.Namespace, report: dict, source: Path) -> int:
    """Keep the attempt in the history (known by ``source``), write and print the report."""
    from engine.practice import history

    if not args.no_history:
        try:
            history.record(report, source)
        except OSError as exc:  # the score is still printed and written
            print(f"liveshadow: the attempt was not kept in the history: {exc}", file=sys.stderr)
    text = json.dumps(report, indent=1, allow_nan=False)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    if getattr(args, "export", None):
        from engine.practice.export import export_attempt

        try:
            written = export_attempt(report, Path(args.export), source)
        except (OSError, ValueError) as exc:  # the score is still printed
            print(f"liveshadow: the export was not written: {exc}", file=sys.stderr)
        else:
            print(f"liveshadow: exported {', '.join(p.name for p in written)} to {args.export}", file=sys.stderr)
    if args.json:
        print(text)
        return EXIT_OK
    print(interpreting_summary(report) if args.interpret else summary(report))
    return EXIT_OK


def run_heard(args: argparse.Namespace) -> int:
    """``--hear``: this computer's sound (or a server source) is the source, recognized live beside the person."""
    from engine.asr.backend import AsrError
    from engine.audio.devices import AudioDeviceError, device_arg
    from engine.practice import history
    from engine.practice.heard import HeardPracticeSession

    live_only = args.speed != 1.0 or args.sentences or args.loop or (args.into and args.into != "en")
    if args.source or args.voice or args.offset_s or args.output or args.history or live_only:
        print(
            "liveshadow: --hear takes no SOURCE, --voice, --offset-s, --speed, --sentences, --loop, --into, "
            "--output or --history: the source is what it hears, the attempt is recorded live",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.report and not Path(args.report).resolve().parent.is_dir():
        print(f"liveshadow: the folder of {args.report} does not exist", file=sys.stderr)
        return EXIT_USAGE
    folder = Path(args.record) if args.record else history.attempt_dir()
    language = args.lang if args.interpret else args.lang or "en"
    session = HeardPracticeSession(args.hear, language, device_arg(args.input), folder, interpret=args.interpret)
    try:
        print("liveshadow: preparing (the two recognizers)…", file=sys.stderr)
        session.prepare()
        session.start()
    except (AsrError, AudioDeviceError, OSError) as exc:
        print(f"liveshadow: {exc}", file=sys.stderr)
        return EXIT_ERROR
    task = "interpret it into English" if args.interpret else "shadow it"
    print(
        f"liveshadow: listening to {session.label}: play something and {task} (headphones on); Ctrl+C ends",
        file=sys.stderr,
    )
    report = _follow(session)
    if report is None:
        return EXIT_ERROR
    print(f"liveshadow: the recordings and the report are in {folder}", file=sys.stderr)
    return finish(args, report, folder / "source.wav")


def _follow(session) -> dict | None:
    """A line of progress on stderr five times a second until the session ends. Ctrl+C stops it, and what was said is
    scored; twice cancels. The handler is installed here, not left to Python's default: a process started in the
    background of a shell inherits SIGINT ignored, and Ctrl+C (or a test's SIGINT) would then never end the session."""
    import signal

    interrupts = [0]

    def on_interrupt(signum: int, frame: object) -> None:
        interrupts[0] += 1
        session.stop() if interrupts[0] == 1 else session.cancel()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    announced = False
    try:
        while not session.wait(PROGRESS_S):
            if interrupts[0] and not announced:
                print("\nliveshadow: scoring… (Ctrl+C again cancels)", file=sys.stderr, flush=True)
                announced = True
            elif not interrupts[0]:
                print(progress_line(session.snapshot()), end="\r", file=sys.stderr, flush=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    print(file=sys.stderr)
    if session.report is None:
        print(f"liveshadow: {session.error or 'the session was cancelled'}", file=sys.stderr)
        return None
    if session.error:  # a device went away: what was said until then is scored
        print(f"liveshadow: {session.error}; what you said until then is scored", file=sys.stderr)
    if getattr(session, "notice", None):
        print(f"liveshadow: {session.notice}", file=sys.stderr)
    return session.report


def run_live(args: argparse.Namespace) -> dict | None:
    """Play the source and score the person live; a line of progress on stderr five times a second."""
    from engine.asr.languages import language_name
    from engine.audio.devices import device_arg
    from engine.practice.live import PracticeSession

    language = args.lang if args.interpret else args.lang or "en"
    session = PracticeSession(
        Path(args.source),
        language,
        device_arg(args.input),
        device_arg(args.output),
        _record_dir(args),
        interpret=args.interpret,
        speed=args.speed,
        sentence_by_sentence=args.sentences,
        loop=_loop(args),
        into=args.into,
    )
    print("liveshadow: preparing (the recognizer, the source's words)…", file=sys.stderr)
    session.prepare()
    if args.interpret:  # the English text is the answer: not shown before
        into = language_name(args.into) if args.into and args.into != "en" else "English"
        print(f"liveshadow: interpret this into {into} ({session.duration_s:.1f} s; headphones on)", file=sys.stderr)
    elif args.sentences:
        print(
            f"liveshadow: repeat each sentence in the pause after it ({session.duration_s:.1f} s; headphones on)",
            file=sys.stderr,
        )
    else:
        print(
            f"liveshadow: shadow this ({session.duration_s:.1f} s; headphones on): {session.source_text}",
            file=sys.stderr,
        )
    session.start()
    return _follow(session)


def _loop_times(text: str) -> tuple[float, float]:
    """``A-B`` in seconds (argparse's type)."""
    try:
        a, b = (float(part) for part in text.split("-", 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a loop is A-B in seconds (e.g. 12.5-20), not {text!r}") from None
    if not 0 <= a < b:
        raise argparse.ArgumentTypeError(f"a loop's B must come after its A, both from 0 s: {text!r}")
    return a, b


def _loop(args: argparse.Namespace):
    from engine.practice.loop import UNTIL_STOP, Loop

    if not args.loop:
        return None
    return Loop(args.loop[0], args.loop[1], args.passes or UNTIL_STOP)


def _record_dir(args: argparse.Namespace) -> Path | None:
    """Where a live attempt is kept: --record, else the --export folder (the export links the recordings)."""
    folder = args.record or args.export
    return Path(folder) if folder else None


PROGRESS_S = 0.2


def progress_line(snap) -> str:
    said = sum(w.evs_s is not None for w in snap.words)
    missed = sum(w.state == "missed" for w in snap.words)
    evs = "–" if snap.median_evs_s is None else f"{snap.median_evs_s:.2f} s"
    last = "–" if snap.last_evs_s is None else f"{snap.last_evs_s:.2f} s"
    where = f"{snap.position_s:5.1f} s heard" if snap.open_ended else f"{snap.position_s:5.1f}/{snap.duration_s:.1f} s"
    return (
        f"{where}  said {said}/{len(snap.words)}  missed {missed}  "
        f"EVS last {last}, median {evs}  mic {snap.level_db:4.0f} dB "
    )


def history_text(entries: list[dict]) -> str:
    """One line per past attempt, oldest first."""
    if not entries:
        return "no attempt at this recording yet"
    lines = []
    for number, e in enumerate(entries, 1):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e["at"]))
        parts = [f"{number:3d}  {when}"]
        if e.get("speed", 1.0) != 1.0:
            parts.append(f"at {e['speed']:g}x")
        if e.get("evs_median_s") is not None:
            parts.append(f"EVS median {e['evs_median_s']:.2f} s")
        if e.get("started_after_median_s") is not None:
            parts.append(f"sentence by sentence, started {e['started_after_median_s']:.2f} s after (median)")
        if e.get("sentence_lag_median_s") is not None:
            parts.append(f"sentence lag median {e['sentence_lag_median_s']:.2f} s")
        if e.get("accuracy") is not None:
            parts.append(f"accuracy {e['accuracy']:.0%}")
        if e.get("chrf") is not None:
            parts.append(f"chrF {e['chrf']:.1f}")
        lines.append(", ".join(parts))
    return "\n".join(lines)


def interpreting_summary(report: dict) -> str:
    if report.get("into"):
        lines = [f"source: {report['source_text']}", f"you ({report['into']}): {report['attempt_text']}"]
        return "\n".join([*lines, *figure_lines(report)])
    lines = [f"source ({report['chrf_against']}): {report['english_text']}", f"you: {report['attempt_text']}"]
    return "\n".join([*lines, *figure_lines(report)])


def summary(report: dict) -> str:
    lines = [f"source: {report['source_text']}", f"you:    {report['attempt_text']}"]
    return "\n".join([*lines, *figure_lines(report)])
