"""The ``liveshadow`` command: the app by default, and headless subcommands that share the engine's code path."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from engine import __version__
from engine.logsetup import setup_logging
from engine.metrics import names as metric_names
from engine.pipeline.config import ECHO_CANCELLERS, ECHO_GUARDS, ShadowConfig
from engine.pipeline.presets import PRESETS, preset

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2  # also what a subcommand that is not implemented yet returns


def _run_gui(args: argparse.Namespace) -> int:
    # Imported here so headless subcommands never load Qt.
    from app.main import AppStartError, run_app

    try:
        return run_app(
            screenshot=args.screenshot, quit_after_s=args.quit_after, shadow_file=args.shadow,
            screenshot_after_s=args.screenshot_after,
        )  # fmt: skip
    except AppStartError as exc:
        print(f"liveshadow: {exc}", file=sys.stderr)
        return EXIT_ERROR


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


def _fail(message: str, code: int = EXIT_ERROR) -> int:
    print(f"liveshadow: {message}", file=sys.stderr)
    return code


def _run_speak(args: argparse.Namespace) -> int:
    from engine.audio.devices import AudioDeviceError, device_arg
    from engine.tts.frontend import split_words
    from engine.tts.speak import SpeakOptions, paced, speak
    from engine.tts.voice_split import VoiceSplitError

    if (args.text is None) == (not args.stdin):
        return _fail("speak needs TEXT or --stdin (one of them)", EXIT_USAGE)
    for name in ("k", "delta", "threads"):
        if getattr(args, name) < 0 or (name == "threads" and args.threads < 1):
            return _fail(f"--{name} must be {'positive' if name == 'threads' else 'zero or more'}", EXIT_USAGE)
    if args.first_chunk < 1 or args.chunk < 1:
        return _fail("chunk sizes must be at least 1 phoneme", EXIT_USAGE)
    if args.words_per_second is not None and args.words_per_second <= 0:
        return _fail("--words-per-second must be positive", EXIT_USAGE)
    for path in (args.out, args.report):
        if path and not Path(path).resolve().parent.is_dir():
            return _fail(f"the folder of {path} does not exist", EXIT_USAGE)

    if args.stdin:
        batches = (line.split() for line in sys.stdin)
        if args.words_per_second:
            batches = paced([w for b in batches for w in b], args.words_per_second)
    else:
        words = split_words(args.text)
        batches = paced(words, args.words_per_second) if args.words_per_second else iter([words])
    options = SpeakOptions(
        policy=args.policy, k=args.k, first_chunk=args.first_chunk, chunk=args.chunk, delta=args.delta,
        seed=args.seed, threads=args.threads, play=args.play, device=device_arg(args.device), voice=args.voice,
    )  # fmt: skip
    try:
        result = speak(batches, options)
    except (VoiceSplitError, AudioDeviceError) as exc:
        return _fail(str(exc))
    report = result.report
    if not report[metric_names.GEN_S]:
        print("liveshadow speak: nothing to say (no speakable words)", file=sys.stderr)
    if args.out:
        import soundfile

        soundfile.write(args.out, result.audio, result.sample_rate, subtype="PCM_16")
    if args.report:
        Path(args.report).write_text(
            json.dumps(_finite(report), indent=1, allow_nan=False, default=_json_default) + "\n"
        )
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


def _run_transcribe(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.asr.commit import make_commit_policy
    from engine.asr.transcribe import transcribe_file
    from engine.asr.vad import VadError
    from engine.audio.io import AudioFileError

    try:
        make_commit_policy(args.commit)
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE)
    if args.report and not Path(args.report).resolve().parent.is_dir():
        return _fail(f"the folder of {args.report} does not exist", EXIT_USAGE)
    try:
        if args.backend == "vosk":
            from engine.asr.vosk_backend import VoskBackend

            backend = VoskBackend(args.model)
        else:
            from engine.asr.whisper_backend import WhisperBackend

            backend = WhisperBackend(args.model)
        report = transcribe_file(Path(args.file), backend, args.commit, realtime=args.realtime)
    except (AsrError, VadError, AudioFileError) as exc:
        return _fail(str(exc))
    if args.report:
        Path(args.report).write_text(json.dumps(_finite(report), indent=1, allow_nan=False, default=_json_default))
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


def _shadow_config(args: argparse.Namespace) -> ShadowConfig:
    """The session's settings: the defaults, then ``--preset``'s knobs, then the knobs given one by one."""
    from engine.audio.devices import device_arg

    knobs = dict(preset(args.preset).knobs) if args.preset else {}
    given = {"commit": args.commit, "tts_policy": args.policy, "k": args.k, "first_chunk": args.first_chunk,
             "chunk": args.chunk, "phrase_chunk": args.phrase_chunk, "hurry_below_s": args.hurry,
             "tentative_lookahead": False if args.final_lookahead else None}  # fmt: skip
    knobs.update({name: value for name, value in given.items() if value is not None})
    return ShadowConfig(
        backend=args.backend, model=args.model, voice=args.voice, echo_guard=args.echo_guard,
        echo_hint_ms=args.echo_hint_ms, echo_canceller=args.echo_canceller, noise_suppression=args.noise_suppression,
        input_device=device_arg(args.input), output_device=device_arg(args.output), voice_rate=args.voice_rate,
        cpu_slowdown=args.cpu_slowdown, catch_up=args.catch_up,
        translate_from=args.translate_from.lower() if args.translate_from else None, **knobs,
    )  # fmt: skip


def _run_shadow(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.asr.commit import make_commit_policy
    from engine.asr.vad import VadError
    from engine.audio.devices import AudioDeviceError
    from engine.audio.io import AudioFileError
    from engine.pipeline.recorder import RecorderError
    from engine.tts.voice_split import VoiceSplitError

    if (args.file is None) == (not args.live):
        return _fail("give a recording to shadow, or --live for the microphone", EXIT_USAGE)
    if args.cpu_slowdown != 1.0 and (args.live or args.realtime or args.play):
        return _fail("--cpu-slowdown is simulated: it works on the simulated clock, not with --live, --realtime "
                     "or --play", EXIT_USAGE)  # fmt: skip
    if not args.live and (args.source != "mic" or args.duck is not None or args.no_duck):
        return _fail("--source, --duck and --no-duck are for --live", EXIT_USAGE)
    if args.duck is not None and (args.no_duck or not 0 < args.duck <= 60):
        return _fail("--duck takes 1 to 60 dB, and not with --no-duck", EXIT_USAGE)
    for path in (args.report, args.out):
        if path and not Path(path).resolve().parent.is_dir():
            return _fail(f"the folder of {path} does not exist", EXIT_USAGE)
    try:
        config = _shadow_config(args)
        make_commit_policy(config.commit)
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE)
    try:
        if args.live:
            report = _shadow_live(args, config)
        else:
            from engine.pipeline.shadow import shadow_file

            report = shadow_file(
                Path(args.file), config, out=Path(args.out) if args.out else None,
                record_dir=Path(args.record) if args.record else None, realtime=args.realtime or args.play,
                play=args.play, keep_on_error=True,
            )  # fmt: skip
    except (AsrError, VadError, AudioFileError, AudioDeviceError, VoiceSplitError, RecorderError, RuntimeError) as exc:
        return _fail(str(exc))
    if args.report:
        Path(args.report).write_text(json.dumps(_finite(report), indent=1, allow_nan=False, default=_json_default))
    print(report.get("spoken_text", ""))
    lag = report[metric_names.EAR_VOICE_LAG_S]
    if lag["n"]:
        from engine.pipeline.summary import underrun_causes_text

        wer_text = "".join(
            f"; {name} {report[name]:.3f}"
            for name in (metric_names.WER_COMMITTED, metric_names.WER_SPOKEN, metric_names.BLEU, metric_names.CHRF)
            if report.get(name) is not None
        )
        print(
            f"ear-voice lag median {lag['median']:.2f} s, p90 {lag['p90']:.2f} s; underruns "
            f"{report[metric_names.UNDERRUNS]}{underrun_causes_text(report)}; starved "
            f"{report[metric_names.STARVED_S]:.2f} s{wer_text}",
            file=sys.stderr,
        )
    if report.get("language_detected"):
        found = report["language_detected"]
        print(f"spoken language detected: {found['language']} ({found['probability']:.2f})", file=sys.stderr)
    _print_pace(report.get("pace") or {})
    if report.get("error"):
        return _fail(report["error"])
    return EXIT_OK


def _print_pace(pace: dict) -> None:
    """What the session measured of the machine, when it had to give something up to keep up."""
    if pace.get("highest_level"):
        cost = pace.get("step_cost_s")
        names = pace["degrade_order"][1 : pace["highest_level"] + 1]
        print(f"this machine is slow (recognizer step {cost or 0:.2f} s): {'; '.join(names)}", file=sys.stderr)


def _shadow_live(args: argparse.Namespace, config) -> dict:  # noqa: ANN001
    """Microphone → speaker until Ctrl-C (or ``--seconds``); Ctrl-C once drains, twice cancels. A session stopped
    by an error still returns its report (with ``error``), so what it heard and said is written before failing."""
    import signal
    import time

    from engine.audio.sound_server import restore_leftover_duck
    from engine.pipeline.models import Models
    from engine.pipeline.session import ShadowSession
    from engine.pipeline.sources import ducked, open_source

    source = open_source(args.source, config)
    if source.system:
        restore_leftover_duck()
    config = ducked(source, args.duck, args.no_duck)
    print(f"hearing {source.label}; {source.route}", file=sys.stderr)
    models = Models.load(config)
    record = Path(args.record) if args.record else None
    session = ShadowSession(config, models, record_dir=record)
    session.start_live(source.capture)
    print("listening; Ctrl-C stops (what was heard is still spoken), twice cancels", file=sys.stderr)
    interrupts = 0

    def on_interrupt(signum: int, frame: object) -> None:
        nonlocal interrupts
        interrupts += 1
        session.cancel() if interrupts > 1 else session.stop()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while not session.wait(0.2):
            if deadline is not None and time.monotonic() > deadline:
                session.stop()
                deadline = None
    finally:
        signal.signal(signal.SIGINT, previous)
    report = session.figures.report()  # also when a device went away: ``error`` says so, and the caller fails
    report["config"]["mode"] = "live"
    return report


TINY_EN = "tiny.en"  # bench shadow --model: the bundled recognizer
PRESET_KEYS = tuple(p.key for p in PRESETS)
EVAL_TTS = ("full", "naive", "lookahead-0", "lookahead-1", "lookahead-2")
EVAL_COMMITS = ("la2", "hold2", "waitk", "offline")


def _run_eval(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.asr.commit import make_commit_policy
    from engine.audio.io import AudioFileError
    from engine.eval.runner import tts_config

    manifest = _manifest(args.manifest)
    if not manifest.is_file():
        return _fail(f"manifest not found: {manifest}", EXIT_USAGE)
    out = Path(args.out)
    progress = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    if args.translate_from and args.soak is None:
        return _fail("--translate-from is for --soak: eval on a translation manifest interprets each recording from "
                     "its own language", EXIT_USAGE)  # fmt: skip
    try:
        base = _slowdown_config(args.cpu_slowdown)
        if args.soak is not None:
            from engine.eval.soak import run_soak
            from engine.pipeline.speed_probe import probe_text

            if args.translate_from:
                base = replace(base, translate_from=args.translate_from.lower())
            report = run_soak(args.soak, manifest, out, progress=progress, config=base)
            print(f"soak of {args.soak:g} min: lag_drift_s {report[metric_names.LAG_DRIFT_S]}, RSS "
                  f"{report['rss_mb']['first_tenth_median']:.0f} -> {report['rss_mb']['last_tenth_median']:.0f} MB; "
                  f"{out / 'soak.json'}")  # fmt: skip
            if report.get(metric_names.BLEU) is not None:
                passes = " ".join(f"{p[metric_names.BLEU]:.1f}/{p[metric_names.CHRF]:.1f}"
                                  for p in report["bleu_by_pass"]) or "–"  # fmt: skip
                print(f"interpreting from {report['config']['translate_from']}: bleu "
                      f"{report[metric_names.BLEU]:.1f}, chrf {report[metric_names.CHRF]:.1f} over "
                      f"{report['recordings_scored']} recordings heard; each pass over the recordings, bleu/chrf: "
                      f"{passes}")  # fmt: skip
            print(probe_text(report))
            return EXIT_OK
        tts = [t for t in args.tts_policies.split(",") if t]
        commits = [c for c in args.commit.split(",") if c]
        for name in tts:
            tts_config(name)
        for name in commits:
            make_commit_policy(name)
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except (AsrError, AudioFileError, RuntimeError, OSError) as exc:
        return _fail(str(exc))
    from engine.asr.bench import load_manifest
    from engine.eval.interpret import is_translation_manifest, run_interpret_eval
    from engine.eval.runner import run_eval

    try:
        if is_translation_manifest(load_manifest(manifest)):
            report = run_interpret_eval(manifest, out, tts, commits, progress=progress, base=base)
            _print_interpret_eval(report, out)
            return EXIT_OK
        report = run_eval(manifest, out, tts, commits, progress=progress, base=base)
    except (AsrError, AudioFileError, RuntimeError, OSError, ValueError) as exc:
        return _fail(str(exc))
    for name, r in report["results"].items():
        lag = r[metric_names.EAR_VOICE_LAG_S]
        print(f"{name:<22} lag median {lag['median']:.2f} s p90 {lag['p90']:.2f} s; wer_committed "
              f"{r[metric_names.WER_COMMITTED]:.3f}; wer_spoken {r[metric_names.WER_SPOKEN]:.3f}; underruns "
              f"{r[metric_names.UNDERRUNS]}")  # fmt: skip
    print(f"reports and plots in {out}")
    return EXIT_OK


def _print_interpret_eval(report: dict, out: Path) -> None:
    for name, r in report["results"].items():
        print(f"{name:<22} bleu {r[metric_names.BLEU]:.1f} (offline {r[metric_names.BLEU_OFFLINE]:.1f}); chrf "
              f"{r[metric_names.CHRF]:.1f}; al_ca_s {_seconds(r[metric_names.AL_CA_S])}; end_offset_s "
              f"{_seconds(r[metric_names.END_OFFSET_S])}; underruns {r[metric_names.UNDERRUNS]}; non-English words "
              f"{r['non_english_words']}")  # fmt: skip
    print(f"reports and plots in {out}")


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def _slowdown_config(slowdown: float) -> ShadowConfig:
    """The default configuration, with every stage's compute charged × ``slowdown`` on the simulated clock."""
    return ShadowConfig(cpu_slowdown=slowdown)


def _run_stress_set(args: argparse.Namespace) -> int:
    from engine.asr.bench import load_manifest
    from engine.audio.io import AudioFileError
    from engine.eval.stress import StressSetError, build

    manifest = _manifest(args.manifest)
    if not manifest.is_file():
        return _fail(f"manifest not found: {manifest}", EXIT_USAGE)
    ids = None
    if args.recordings == "all":
        ids = [e["id"] for e in load_manifest(manifest)]
    elif args.recordings:
        ids = [i for i in args.recordings.split(",") if i]
    try:
        entries = build(manifest, Path(args.out), ids)
    except (StressSetError, AudioFileError, OSError) as exc:
        return _fail(str(exc))
    total = sum(e["duration_s"] for e in entries)
    print(f"{len(entries)} recordings, {total / 60:.1f} minutes: {Path(args.out) / 'manifest.jsonl'}")
    return EXIT_OK


def _manifest(arg: str | None) -> Path:
    """The manifest given on the command line, else ../shared/speech's."""
    from engine import paths

    return Path(arg) if arg else paths.shared_speech_dir() / "manifest.jsonl"


def _json_default(value: object) -> object:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


POLICY_HELP = ("when the voice speaks: lookahead (Ma et al.'s, with --k; the default), learned (the trained READ/SPEAK "
               "policy), wait-K-steps, full (whole sentences) or naive")  # fmt: skip


def _voice_policy(text: str) -> str:
    """A voice policy name as the command line takes it (``lookahead`` with ``--k``, or one ``eval`` names)."""
    from engine.eval.runner import tts_config

    try:
        tts_config(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return text


def _add_echo_hint(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--echo-hint-ms", type=float, default=0.0, metavar="MS",
                        help="the echo canceller's reference this much earlier: a known delay from the speakers to "
                             "the microphone (0: the canceller finds it)")  # fmt: skip


def _run_bench(args: argparse.Namespace) -> int:
    progress = lambda text: log.info("bench %s: %s", args.stage, text)  # noqa: E731
    if args.stage not in ("shadow", "interpret", "echo") and args.cpu_slowdown != 1.0:
        return _fail("--cpu-slowdown is for bench shadow, interpret and echo", EXIT_USAGE)
    if args.stage != "echo" and (args.echo_db is not None or args.echo_delay_ms is not None):
        return _fail("--echo-db and --echo-delay-ms are for bench echo", EXIT_USAGE)
    if args.stage != "shadow" and (args.model or args.preset or args.policies):
        return _fail("--model, --preset and --policies are for bench shadow", EXIT_USAGE)
    if args.repeat != 1 and args.stage not in ("shadow", "interpret"):
        return _fail("--repeat is for bench shadow and bench interpret", EXIT_USAGE)
    if args.repeat < 1:
        return _fail(f"--repeat must be at least 1, not {args.repeat}", EXIT_USAGE)
    if args.stage == "interpret":
        from engine import paths
        from engine.pipeline import bench_interpret

        manifest = (
            Path(args.manifest) if args.manifest else paths.shared_speech_dir().parent / "speech-xx" / "manifest.jsonl"
        )
        if not manifest.is_file():
            return _fail(f"manifest not found: {manifest} (give one with --manifest)", EXIT_USAGE)
        try:
            config = replace(_slowdown_config(args.cpu_slowdown), translate_from="auto")
            report = bench_interpret.run_bench(manifest, config=config, progress=progress, repeat=args.repeat)
        except ValueError as exc:
            return _fail(str(exc), EXIT_USAGE)
        except ImportError as exc:
            return _fail(f"bench interpret needs the developer install (scripts/setup): {exc}")
        print(bench_interpret.format_repeated(report) if "repeats" in report else bench_interpret.format_table(report))
    elif args.stage == "echo":
        from engine.pipeline import bench_echo

        manifest = _manifest(args.manifest)
        if not manifest.is_file():
            return _fail(f"manifest not found: {manifest} (give one with --manifest)", EXIT_USAGE)
        try:
            config = replace(_slowdown_config(args.cpu_slowdown), echo_hint_ms=args.echo_hint_ms)
            report = bench_echo.run_bench(
                manifest, config,
                echo_db=-6.0 if args.echo_db is None else args.echo_db,
                delay_ms=bench_echo.DEFAULT_DELAY_S * 1000 if args.echo_delay_ms is None else args.echo_delay_ms,
                progress=progress,
            )  # fmt: skip
        except ValueError as exc:
            return _fail(str(exc), EXIT_USAGE)
        print(bench_echo.format_table(report))
    elif args.stage in ("shadow", "asr"):
        if args.stage == "shadow":
            from engine.pipeline import bench as stage_bench
        else:
            from engine.asr import bench as stage_bench  # type: ignore[no-redef]

        manifest = _manifest(args.manifest)
        if not manifest.is_file():
            return _fail(f"manifest not found: {manifest} (give one with --manifest)", EXIT_USAGE)
        if args.stage == "shadow":
            try:
                config = _slowdown_config(args.cpu_slowdown)
            except ValueError as exc:
                return _fail(str(exc), EXIT_USAGE)
            names = [name.strip() for name in (args.model or "").split(",") if name.strip()] or [None]
            try:
                presets = [preset(key.strip()) for key in args.preset.split(",") if key.strip()] if args.preset else []
            except ValueError as exc:
                return _fail(str(exc), EXIT_USAGE)
            try:
                policies = [_voice_policy(p.strip()) for p in (args.policies or "").split(",") if p.strip()]
            except argparse.ArgumentTypeError as exc:
                return _fail(str(exc), EXIT_USAGE)
            from engine.eval.runner import tts_config

            reports = {}
            for name in names:
                for item in presets or [None]:
                    for policy in policies or [None]:
                        run_config = replace(config, model=None if name in (None, TINY_EN) else name)
                        run_config = item.apply(run_config) if item is not None else run_config
                        run_config = replace(run_config, **tts_config(policy)) if policy else run_config
                        parts = (name if len(names) > 1 else None, item and item.key, policy)
                        label = " · ".join(x for x in parts if x)
                        reports[label or TINY_EN] = stage_bench.run_repeated(manifest, args.repeat, run_config,
                                                                             progress)  # fmt: skip
            for label, one in reports.items():
                if len(reports) > 1:
                    print(f"{label}:")
                print(stage_bench.format_repeated(one) if "repeats" in one else stage_bench.format_table(one))
            runs = "models" if len(presets) <= 1 and len(policies) <= 1 else "runs"
            report = next(iter(reports.values())) if len(reports) == 1 else {"bench": "shadow", runs: reports}
        else:
            report = stage_bench.run_bench(manifest, progress=progress)
            print(stage_bench.format_table(report))
    else:
        from engine.tts.bench import format_table, run_bench

        report = run_bench(threads=args.threads, progress=progress)
        print(format_table(report))
    if args.json:
        print(json.dumps(_finite(report), allow_nan=False, default=_json_default))
    return EXIT_OK


def _finite(value: object) -> object:
    from engine.metrics.jsonsafe import json_safe

    return json_safe(value)


def _add_cpu_slowdown(parser: argparse.ArgumentParser) -> None:
    text = "charge every stage's compute x F on the simulated clock: a CPU F times slower (1)"
    parser.add_argument("--cpu-slowdown", type=float, default=1.0, metavar="F", help=text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="liveshadow",
        description="Real-time speech shadowing: recognize a speaker and re-voice the words while they talk.",
        epilog="With no subcommand, the desktop app starts.",
    )
    parser.add_argument("--version", action="version", version=f"liveshadow {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more to stderr (-v info, -vv debug)")
    # -v also after the subcommand; SUPPRESS keeps a subcommand from resetting what came before it
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    gui = sub.add_parser("gui", parents=[common], help="start the desktop app (the default)")
    gui.add_argument("--screenshot", metavar="PNG", help="render the main window to a PNG file and exit")
    gui.add_argument("--quit-after", type=float, metavar="SECONDS", help="close the app after this long")
    gui.add_argument("--shadow", metavar="WAV", help="start shadowing this recording when the window opens")
    gui.add_argument("--screenshot-after", type=float, metavar="SECONDS",
                     help="with --screenshot: take it this long after the window opened")  # fmt: skip
    gui.set_defaults(func=_run_gui)

    speak = sub.add_parser("speak", parents=[common], help="speak text with the incremental TTS engine")
    speak.add_argument("text", nargs="?", help="the text to speak (or --stdin)")
    speak.add_argument("--stdin", action="store_true", help="read words from standard input as they are typed")
    speak.add_argument("--words-per-second", type=float, metavar="R", help="feed the words at this steady rate")
    speak.add_argument("--policy", type=_voice_policy, default="lookahead", metavar="POLICY", help=POLICY_HELP)
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

    bench = sub.add_parser("bench", parents=[common], help="benchmark a stage and print figures")
    bench.add_argument("stage", choices=("tts", "asr", "shadow", "interpret", "echo"))
    bench.add_argument("--json", action="store_true", help="end with one JSON line holding every figure")
    bench.add_argument("--threads", type=int, default=1, help="TTS inference threads (1)")
    bench.add_argument("--manifest", metavar="JSONL", help="recordings for asr and shadow (default ../shared/speech)")
    bench.add_argument(
        "--model", metavar="MODELS", help="shadow: the recognizer model, or several compared in one run (tiny.en,base)"
    )
    bench.add_argument("--preset", metavar="PRESETS",
                       help="shadow: presets compared in one run (lowest-lag,balanced,best-voice)")  # fmt: skip
    bench.add_argument("--policies", metavar="POLICIES",
                       help="shadow: voice policies compared in one run, e.g. lookahead-1,learned (full, naive, "
                            "lookahead-K, wait-K-steps, learned)")  # fmt: skip
    bench.add_argument("--repeat", type=int, default=1, metavar="N",
                       help="shadow, interpret: run N times and give each figure's median and range over the runs; "
                            "one run can differ from the next by several underruns; interpret: run k's recognizer "
                            "steps start (k-1)/N of a step later (1)")  # fmt: skip
    bench.add_argument("--echo-db", type=float, metavar="DB",
                       help="bench echo: the voice's echo against the speaker's speech level (-6)")  # fmt: skip
    bench.add_argument("--echo-delay-ms", type=float, metavar="MS",
                       help="bench echo: from the voice playing to the microphone hearing it (60)")  # fmt: skip
    _add_echo_hint(bench)
    _add_cpu_slowdown(bench)
    bench.set_defaults(func=_run_bench)

    shadow = sub.add_parser(
        "shadow", parents=[common], help="shadow a recording or the microphone: recognize and re-voice it live"
    )
    shadow.add_argument("file", nargs="?", help="a recording to shadow (or --live for the microphone)")
    shadow.add_argument("--live", action="store_true", help="from the microphone to the speaker")
    shadow.add_argument("--input", metavar="DEV", help="input device for --live (name or index)")
    shadow.add_argument("--source", default="mic", metavar="SOURCE",
                        help="--live: what to hear: mic (the --input device), system (this computer's sound: what "
                             "plays on the default output), or a sound-server source by name or description (mic)")
    shadow.add_argument("--duck", type=float, metavar="DB",
                        help="--live: lower the other applications by this much while the voice speaks (on at "
                             "15 dB when hearing this computer's sound)")
    shadow.add_argument("--no-duck", action="store_true", help="--live: never lower the other applications")
    shadow.add_argument("--output", metavar="DEV", help="output device for --live / --play (name or index)")
    shadow.add_argument("--seconds", type=float, help="--live: stop after this long (default: at Ctrl-C)")
    smode = shadow.add_mutually_exclusive_group()
    smode.add_argument("--simulate", action="store_true", help="compute-aware simulated clock (the default)")
    smode.add_argument("--realtime", action="store_true", help="pace the recording like a microphone")
    shadow.add_argument("--play", action="store_true", help="play the voice on the output device (real time)")
    shadow.add_argument("--backend", choices=("whisper", "vosk"), default="whisper")
    shadow.add_argument(
        "--model",
        metavar="PATH",
        help="recognizer model folder, or 'base' for multilingual Whisper base (default: tiny.en)",
    )
    shadow.add_argument("--translate-from", metavar="LANG",
                        help="interpret: the speaker's language (es, fr, ... or auto), spoken in English")  # fmt: skip
    shadow.add_argument("--preset", choices=PRESET_KEYS,
                        help="the lag/voice trade-off: lowest-lag, balanced (the defaults) or best-voice; the knobs "
                             "below, when given, change it")  # fmt: skip
    shadow.add_argument("--commit", help="la2 (default), hold2, waitk or offline")
    shadow.add_argument("--policy", type=_voice_policy, metavar="POLICY", help=f"{POLICY_HELP} (lookahead)")
    shadow.add_argument("--k", type=int, help="lookahead chunks (1)")
    shadow.add_argument("--first-chunk", type=int, metavar="PHONEMES", help="first chunk size (12)")
    shadow.add_argument("--chunk", type=int, metavar="PHONEMES", help="later chunk size (12)")
    shadow.add_argument(
        "--phrase-chunk", type=int, metavar="PHONEMES",
        help="after a comma, wait for this many phonemes of final words (24; 0 = no pause)",
    )  # fmt: skip
    shadow.add_argument("--voice", metavar="ONNX", help="a Piper voice (.onnx beside its .onnx.json)")
    shadow.add_argument("--voice-rate", type=float, default=1.0, help="speaking rate of the voice (1.0)")
    shadow.add_argument(
        "--final-lookahead",
        action="store_true",
        help="lookahead from final (committed) words only, not the recognizer's tentative ones",
    )
    shadow.add_argument("--hurry", type=float, metavar="SECONDS",
                        help="with less voice than this left mid-sentence, speak without waiting for lookahead "
                             "(1.0; 0 = never)")  # fmt: skip
    shadow.add_argument("--echo-guard", choices=ECHO_GUARDS, default="off",
                        help="for speakers: gate ignores the microphone while the voice plays; cancel removes the "
                             "voice's echo from it (off)")  # fmt: skip
    _add_echo_hint(shadow)
    shadow.add_argument("--echo-canceller", choices=ECHO_CANCELLERS, default=ShadowConfig.echo_canceller,
                        help="with --echo-guard cancel: kalman keeps the speaker's words while the voice plays; "
                             "webrtc is the browsers' AEC3 (%(default)s)")  # fmt: skip
    shadow.add_argument("--noise-suppression", action="store_true",
                        help="with --echo-guard cancel: WebRTC's noise suppression after the canceller")
    shadow.add_argument("--out", metavar="WAV", help="write the voice here, placed at its play times")
    shadow.add_argument("--report", metavar="JSON", help="write the measurements here")
    shadow.add_argument("--record", metavar="DIR", help="record the session into this folder")
    _add_cpu_slowdown(shadow)
    shadow.add_argument("--catch-up", type=float, default=ShadowConfig.catch_up, metavar="RATE",
                        help="speak up to this much faster while far behind or with a faster speaker "
                             "(%(default)s; 1 = never)")  # fmt: skip
    shadow.set_defaults(func=_run_shadow)

    ev = sub.add_parser("eval", parents=[common], help="evaluate on a manifest: report.json, report.csv and plots")
    ev.add_argument("manifest", nargs="?", help="a manifest.jsonl (default ../shared/speech)")
    ev.add_argument("--out", metavar="DIR", required=True, help="write the reports and plots here")
    ev.add_argument("--tts-policies", default=",".join(EVAL_TTS), help=f"comma-separated ({','.join(EVAL_TTS)})")
    ev.add_argument("--commit", default=",".join(EVAL_COMMITS), help=f"comma-separated ({','.join(EVAL_COMMITS)})")
    ev.add_argument("--soak", type=float, metavar="MINUTES", help="instead: one session this long, back to back")
    ev.add_argument("--translate-from", metavar="LANG",
                    help="--soak: interpret the recordings in this language (a translation manifest: those of LANG)")
    _add_cpu_slowdown(ev)
    ev.set_defaults(func=_run_eval)

    from engine.practice.command import add_parser as add_practice

    add_practice(sub, common)

    selftest = sub.add_parser(
        "self-test", parents=[common], help="load every bundled model, speak and recognize a sentence, open the window"
    )
    selftest.add_argument("--no-window", action="store_true", help="skip the main window check (no Qt)")
    selftest.set_defaults(func=_run_self_test)

    stress = sub.add_parser("stress-set", parents=[common], help="make the stress set from real recordings")
    stress.add_argument("--out", metavar="DIR", required=True, help="write manifest.jsonl and wav/ here")
    stress.add_argument("--manifest", metavar="JSONL", help="recordings to start from (default ../shared/speech)")
    stress.add_argument("--recordings", metavar="IDS", help="ids for the per-recording conditions, or all")
    stress.set_defaults(func=_run_stress_set)

    trainer = sub.add_parser(
        "train-policy",
        parents=[common],
        help="train the learned READ/SPEAK voice policy (needs torch: the developer install)",
    )
    _add_train_arguments(trainer)
    trainer.set_defaults(func=_run_train_policy)
    return parser


def _add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """The trainer's options, without importing torch for every command (``engine.tts.learned.train`` has them)."""
    try:
        from engine.tts.learned.train import add_arguments
    except ImportError:  # the packaged app (the trainer's own imports are lazy; this is a safety net)
        parser.add_argument("--out", required=True)
        return
    add_arguments(parser)


def _run_train_policy(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401 - only to say clearly when it is missing

        from engine.tts.learned.train import settings_from, train
    except ImportError as exc:
        return _fail(f"train-policy needs torch, which only the developer install has (scripts/setup): {exc}")
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)
    try:
        path = train(settings_from(args), progress=lambda line: print(line, flush=True))
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    print(f"trained policy: {path} (copy it to assets/{path.name} to ship it)")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args([*(argv if argv is not None else sys.argv[1:]), "gui"])
    log_path = setup_logging(args.verbose)
    log.debug("liveshadow %s, command %s, log file %s", __version__, args.command, log_path)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
