"""``liveshadow eval``: policies compared on a manifest (reports and plots), or a soak."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from engine.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_cpu_slowdown,
    comma_list,
    fail,
    manifest_path,
    seconds_text,
    slowdown_config,
)
from engine.metrics import names as metric_names

EVAL_TTS = ("full", "naive", "lookahead-0", "lookahead-1", "lookahead-2")
EVAL_COMMITS = ("la2", "hold2", "waitk", "offline")


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    ev = sub.add_parser("eval", parents=[common], help="evaluate on a manifest: report.json, report.csv and plots")
    ev.add_argument("manifest", nargs="?", help="a manifest.jsonl (default ../shared/speech)")
    ev.add_argument("--out", metavar="DIR", required=True, help="write the reports and plots here")
    ev.add_argument("--tts-policies", default=",".join(EVAL_TTS), help=f"comma-separated ({','.join(EVAL_TTS)})")
    ev.add_argument("--commit", default=",".join(EVAL_COMMITS), help=f"comma-separated ({','.join(EVAL_COMMITS)})")
    ev.add_argument("--soak", type=float, metavar="MINUTES", help="instead: one session this long, back to back")
    ev.add_argument(
        "--translate-from",
        metavar="LANG",
        help="--soak: interpret the recordings in this language (a translation manifest: those of LANG)",
    )
    add_cpu_slowdown(ev)
    ev.set_defaults(func=_run_eval)


def _run_eval(args: argparse.Namespace) -> int:
    from engine.asr.backend import AsrError
    from engine.asr.commit import make_commit_policy
    from engine.audio.io import AudioFileError
    from engine.eval.runner import tts_config

    out = Path(args.out)
    progress = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    if args.translate_from and args.soak is None:
        return fail(
            "--translate-from is for --soak: eval on a translation manifest interprets each recording from "
            "its own language",
            EXIT_USAGE,
        )
    tts, commits = comma_list(args.tts_policies), comma_list(args.commit)
    try:  # the arguments first: a wrong one is named before any file is looked for
        base = slowdown_config(args.cpu_slowdown)
        if args.soak is None:
            for name in tts:
                tts_config(name)
            for name in commits:
                make_commit_policy(name)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    manifest = manifest_path(args.manifest)
    if not manifest.is_file():
        return fail(f"manifest not found: {manifest}", EXIT_USAGE)
    try:
        if args.soak is not None:
            from engine.eval.soak import run_soak
            from engine.pipeline.speed_probe import probe_text

            if args.translate_from:
                base = replace(base, translate_from=args.translate_from.lower())
            report = run_soak(args.soak, manifest, out, progress=progress, config=base)
            print(
                f"soak of {args.soak:g} min: lag_drift_s {report[metric_names.LAG_DRIFT_S]}, RSS "
                f"{report['rss_mb']['first_tenth_median']:.0f} -> {report['rss_mb']['last_tenth_median']:.0f} MB; "
                f"{out / 'soak.json'}"
            )
            if report.get(metric_names.BLEU) is not None:
                passes = (
                    " ".join(f"{p[metric_names.BLEU]:.1f}/{p[metric_names.CHRF]:.1f}" for p in report["bleu_by_pass"])
                    or "–"
                )
                print(
                    f"interpreting from {report['config']['translate_from']}: bleu "
                    f"{report[metric_names.BLEU]:.1f}, chrf {report[metric_names.CHRF]:.1f} over "
                    f"{report['recordings_scored']} recordings heard; each pass over the recordings, bleu/chrf: "
                    f"{passes}"
                )
            print(probe_text(report))
            return EXIT_OK
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    except (AsrError, AudioFileError, RuntimeError, OSError) as exc:
        return fail(str(exc))
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
        return fail(str(exc))
    for name, r in report["results"].items():
        lag = r[metric_names.EAR_VOICE_LAG_S]
        print(
            f"{name:<22} lag median {lag['median']:.2f} s p90 {lag['p90']:.2f} s; wer_committed "
            f"{r[metric_names.WER_COMMITTED]:.3f}; wer_spoken {r[metric_names.WER_SPOKEN]:.3f}; underruns "
            f"{r[metric_names.UNDERRUNS]}"
        )
    print(f"reports and plots in {out}")
    return EXIT_OK


def _print_interpret_eval(report: dict, out: Path) -> None:
    for name, r in report["results"].items():
        print(
            f"{name:<22} bleu {r[metric_names.BLEU]:.1f} (offline {r[metric_names.BLEU_OFFLINE]:.1f}); chrf "
            f"{r[metric_names.CHRF]:.1f}; al_ca_s {seconds_text(r[metric_names.AL_CA_S])}; end_offset_s "
            f"{seconds_text(r[metric_names.END_OFFSET_S])}; underruns {r[metric_names.UNDERRUNS]}; non-English words "
            f"{r['non_english_words']}"
        )
    print(f"reports and plots in {out}")
