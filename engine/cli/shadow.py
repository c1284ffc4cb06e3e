"""``liveshadow shadow``: a recording or a live source recognized and re-voiced."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    POLICY_HELP,
    add_cpu_slowdown,
    add_echo_hint,
    fail,
    finite,
    json_default,
    voice_policy,
)
from engine.metrics import names as metric_names
from engine.pipeline.config import ECHO_CANCELLERS, ECHO_GUARDS, ShadowConfig
from engine.pipeline.presets import PRESETS, preset

PRESET_KEYS = tuple(p.key for p in PRESETS)


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    shadow = sub.add_parser(
        "shadow", parents=[common], help="shadow a recording or the microphone: recognize and re-voice it live"
    )
    shadow.add_argument("file", nargs="?", help="a recording to shadow (or --live for the microphone)")
    shadow.add_argument("--live", action="store_true", help="from the microphone to the speaker")
    shadow.add_argument("--input", metavar="DEV", help="input device for --live (name or index)")
    shadow.add_argument(
        "--source",
        default="mic",
        metavar="SOURCE",
        help="--live: what to hear: mic (the --input device), system (this computer's sound: what "
        "plays on the default output), or a sound-server source by name or description (mic)",
    )
    shadow.add_argument(
        "--duck",
        type=float,
        metavar="DB",
        help="--live: lower the other applications by this much while the voice speaks (on at "
        "15 dB when hearing this computer's sound)",
    )
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
    shadow.add_argument(
        "--translate-from",
        metavar="LANG",
        help="interpret: the speaker's language (es, fr, ... or auto), spoken in English",
    )
    shadow.add_argument(
        "--preset",
        choices=PRESET_KEYS,
        help="the lag/voice trade-off: lowest-lag, balanced (the defaults) or best-voice; the knobs "
        "below, when given, change it",
    )
    shadow.add_argument("--commit", help="la2 (default), hold2, waitk or offline")
    shadow.add_argument("--policy", type=voice_policy, metavar="POLICY", help=f"{POLICY_HELP} (lookahead)")
    shadow.add_argument("--k", type=int, help="lookahead chunks (1)")
    shadow.add_argument("--first-chunk", type=int, metavar="PHONEMES", help="first chunk size (12)")
    shadow.add_argument("--chunk", type=int, metavar="PHONEMES", help="later chunk size (12)")
    shadow.add_argument(
        "--phrase-chunk",
        type=int,
        metavar="PHONEMES",
        help="after a comma, wait for this many phonemes of final words (24; 0 = no pause)",
    )
    shadow.add_argument("--voice", metavar="ONNX", help="a Piper voice (.onnx beside its .onnx.json)")
    shadow.add_argument("--voice-rate", type=float, default=1.0, help="speaking rate of the voice (1.0)")
    shadow.add_argument(
        "--final-lookahead",
        action="store_true",
        help="lookahead from final (committed) words only, not the recognizer's tentative ones",
    )
    shadow.add_argument(
        "--hurry",
        type=float,
        metavar="SECONDS",
        help="with less voice than this left mid-sentence, speak without waiting for lookahead (1.0; 0 = never)",
    )
    shadow.add_argument(
        "--echo-guard",
        choices=ECHO_GUARDS,
        default="off",
        help="for speakers: gate ignores the microphone while the voice plays; cancel removes the "
        "voice's echo from it (off)",
    )
    add_echo_hint(shadow)
    shadow.add_argument(
        "--echo-canceller",
        choices=ECHO_CANCELLERS,
        default=ShadowConfig.echo_canceller,
        help="with --echo-guard cancel: kalman keeps the speaker's words while the voice plays; "
        "webrtc is the browsers' AEC3 (%(default)s)",
    )
    shadow.add_argument(
        "--noise-suppression",
        action="store_true",
        help="with --echo-guard cancel: WebRTC's noise suppression after the canceller",
    )
    shadow.add_argument("--out", metavar="WAV", help="write the voice here, placed at its play times")
    shadow.add_argument("--report", metavar="JSON", help="write the measurements here")
    shadow.add_argument("--record", metavar="DIR", help="record the session into this folder")
    shadow.add_argument(
        "--no-whole-pass",
        action="store_true",
        help="with --record: keep the captions as committed live (by default the recording is recognized again "
        "after the session, whole, and the captions and transcript take those words)",
    )
    add_cpu_slowdown(shadow)
    shadow.add_argument(
        "--catch-up",
        type=float,
        default=ShadowConfig.catch_up,
        metavar="RATE",
        help="speak up to this much faster while far behind or with a faster speaker (%(default)s; 1 = never)",
    )
    shadow.set_defaults(func=_run_shadow)


def _shadow_config(args: argparse.Namespace) -> ShadowConfig:
    """The session's settings: the defaults, then ``--preset``'s knobs, then the knobs given one by one."""
    from engine.audio.devices import device_arg

    knobs = dict(preset(args.preset).knobs) if args.preset else {}
    given = {
        "commit": args.commit,
        "tts_policy": args.policy,
        "k": args.k,
        "first_chunk": args.first_chunk,
        "chunk": args.chunk,
        "phrase_chunk": args.phrase_chunk,
        "hurry_below_s": args.hurry,
        "tentative_lookahead": False if args.final_lookahead else None,
    }
    knobs.update({name: value for name, value in given.items() if value is not None})
    return ShadowConfig(
        backend=args.backend,
        model=args.model,
        voice=args.voice,
        echo_guard=args.echo_guard,
        echo_hint_ms=args.echo_hint_ms,
        echo_canceller=args.echo_canceller,
        noise_suppression=args.noise_suppression,
        input_device=device_arg(args.input),
        output_device=device_arg(args.output),
        voice_rate=args.voice_rate,
        cpu_slowdown=args.cpu_slowdown,
        catch_up=args.catch_up,
        translate_from=args.translate_from.lower() if args.translate_from else None,
        **knobs,
    )


def _run_shadow(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.asr.commit import make_commit_policy
    from engine.asr.vad import VadError
    from engine.audio.devices import AudioDeviceError
    from engine.audio.io import AudioFileError
    from engine.pipeline.recorder import RecorderError
    from engine.tts.voice_split import VoiceSplitError

    if (args.file is None) == (not args.live):
        return fail("give a recording to shadow, or --live for the microphone", EXIT_USAGE)
    if args.cpu_slowdown != 1.0 and (args.live or args.realtime or args.play):
        return fail(
            "--cpu-slowdown is simulated: it works on the simulated clock, not with --live, --realtime or --play",
            EXIT_USAGE,
        )
    if not args.live and (args.source != "mic" or args.duck is not None or args.no_duck):
        return fail("--source, --duck and --no-duck are for --live", EXIT_USAGE)
    if args.duck is not None and (args.no_duck or not 0 < args.duck <= 60):
        return fail("--duck takes 1 to 60 dB, and not with --no-duck", EXIT_USAGE)
    for path in (args.report, args.out):
        if path and not Path(path).resolve().parent.is_dir():
            return fail(f"the folder of {path} does not exist", EXIT_USAGE)
    try:
        config = _shadow_config(args)
        make_commit_policy(config.commit)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    try:
        if args.live:
            report = _shadow_live(args, config)
        else:
            from engine.pipeline.shadow import shadow_file

            report = shadow_file(
                Path(args.file),
                config,
                out=Path(args.out) if args.out else None,
                record_dir=Path(args.record) if args.record else None,
                realtime=args.realtime or args.play,
                play=args.play,
                keep_on_error=True,
                whole_pass=bool(args.record) and not args.no_whole_pass,
                progress=_whole_pass_progress(),
            )
    except (AsrError, VadError, AudioFileError, AudioDeviceError, VoiceSplitError, RecorderError, RuntimeError) as exc:
        return fail(str(exc))
    if args.report:
        Path(args.report).write_text(json.dumps(finite(report), indent=1, allow_nan=False, default=json_default))
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
        return fail(report["error"])
    return EXIT_OK


def _whole_pass_progress():
    """Tells on stderr how far the whole pass after a recorded session is, every tenth."""
    from engine.audio.io import by_percent

    def tell(share: float) -> None:
        if int(share * 100) % 10 == 0:
            print(f"recognizing the whole recording again: {share:.0%}", file=sys.stderr)

    return by_percent(tell)


def _print_pace(pace: dict) -> None:
    """What the session measured of the machine, when it had to give something up to keep up."""
    if pace.get("highest_level"):
        cost = pace.get("step_cost_s")
        names = pace["degrade_order"][1 : pace["highest_level"] + 1]
        print(f"this machine is slow (recognizer step {cost or 0:.2f} s): {'; '.join(names)}", file=sys.stderr)


def _shadow_live(args: argparse.Namespace, config) -> dict:
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
    assert source.capture is not None
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
    if record is not None and not args.no_whole_pass and interrupts < 2 and not report.get("error"):
        from engine.pipeline.whole_pass import WholePassError, WholePassSkipped, run_whole_pass

        try:
            run_whole_pass(record, models.backend, _whole_pass_progress())
        except WholePassSkipped:
            pass  # a session the pass is not for (speakers, interpreting, vosk)
        except WholePassError as exc:
            print(exc, file=sys.stderr)
    return report
