"""``liveshadow bench``: one stage's figures, measured in one run."""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_cpu_slowdown,
    add_echo_hint,
    comma_list,
    fail,
    finite,
    json_default,
    manifest_path,
    part_manifest,
    slowdown_config,
    voice_policy,
)
from engine.pipeline.presets import Preset, preset

if TYPE_CHECKING:
    from engine.pipeline.bench import SessionScorer

log = logging.getLogger(__name__)

TINY_EN = "tiny.en"  # bench shadow --model: the bundled recognizer


def add_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    bench = sub.add_parser("bench", parents=[common], help="benchmark a stage and print figures")
    bench.add_argument("stage", choices=("tts", "asr", "shadow", "interpret", "echo"))
    bench.add_argument("--json", action="store_true", help="end with one JSON line holding every figure")
    bench.add_argument("--threads", type=int, default=1, help="TTS inference threads (1)")
    bench.add_argument("--manifest", metavar="JSONL", help="recordings for asr and shadow (default ../shared/speech)")
    bench.add_argument(
        "--model",
        metavar="MODELS",
        help="shadow: the recognizer model, or several compared in one run (tiny.en,base); asr: one of them",
    )
    bench.add_argument(
        "--preset", metavar="PRESETS", help="shadow: presets compared in one run (lowest-lag,balanced,best-voice)"
    )
    bench.add_argument(
        "--policies",
        metavar="POLICIES",
        help="shadow: voice policies compared in one run, e.g. lookahead-1,learned (full, naive, "
        "lookahead-K, wait-K-steps, learned)",
    )
    bench.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="shadow, interpret: run N times and give each figure's median and range over the runs; "
        "one run can differ from the next by several underruns; interpret: run k's recognizer "
        "steps start (k-1)/N of a step later (1)",
    )
    bench.add_argument(
        "--part",
        choices=("all", "choose", "confirm"),
        default="all",
        help="the recordings of the manifest to run on: all, those levers are chosen on, or the fifth "
        "held back by a hash of their id to confirm them (all)",
    )
    bench.add_argument(
        "--ablate",
        action="store_true",
        help="asr: also decode the recordings whole and in the streaming recognizer's own segments "
        "several ways (stock, full window, cropped, with left context; 1 and 5 beams); echo: "
        "also recognize the cancel route's speaker, microphone and canceller output apart from "
        "the session",
    )
    bench.add_argument(
        "--routes", metavar="ROUTES", help="echo: the routes to run (headphones,off,gate,cancel,cancel-webrtc)"
    )
    bench.add_argument(
        "--echo-db",
        type=float,
        metavar="DB",
        help="bench echo: the voice's echo against the speaker's speech level (-6)",
    )
    bench.add_argument(
        "--echo-delay-ms",
        type=float,
        metavar="MS",
        help="bench echo: from the voice playing to the microphone hearing it (60)",
    )
    bench.add_argument(
        "--second-pass",
        action="store_true",
        help="asr: la2 with a second decode (5 beams, the other core) that rewrites committed words "
        "the voice has not spoken yet; the row la2_second_pass gives its final text",
    )
    bench.add_argument(
        "--commit-policies",
        metavar="POLICIES",
        help="asr: the commit policies to run (la2,hold2,waitk,offline); interpret: of la2,hold2,offline",
    )
    add_echo_hint(bench)
    add_cpu_slowdown(bench)
    bench.set_defaults(func=_run_bench)


def simuleval_scorer() -> SessionScorer | None:
    """SimulEval's scorers for bench shadow and interpret, None (and said once) without the research install."""
    from engine.research.simuleval_scores import session_scores, simuleval_version

    if simuleval_version() is None:
        log.info("SimulEval is not installed (scripts/setup --research): its latency figures are left out")
        return None
    return session_scores


def _commit_policies(given: str | None, known: tuple[str, ...]) -> tuple[str, ...] | str:
    """The policies ``--commit-policies`` names (all of ``known`` when it names none), or what is wrong with it."""
    policies = tuple(comma_list(given)) or known
    unknown = sorted(set(policies) - set(known))
    if unknown:
        return f"unknown commit policy: {', '.join(unknown)} ({', '.join(known)})"
    return policies


def _run_bench(args: argparse.Namespace) -> int:
    progress = lambda text: log.info("bench %s: %s", args.stage, text)  # noqa: E731
    if args.stage not in ("shadow", "interpret", "echo") and args.cpu_slowdown != 1.0:
        return fail("--cpu-slowdown is for bench shadow, interpret and echo", EXIT_USAGE)
    if args.stage != "echo" and (args.echo_db is not None or args.echo_delay_ms is not None):
        return fail("--echo-db and --echo-delay-ms are for bench echo", EXIT_USAGE)
    if args.stage != "shadow" and (args.preset or args.policies or (args.model and args.stage != "asr")):
        return fail("--model (also for bench asr), --preset and --policies are for bench shadow", EXIT_USAGE)
    if args.repeat != 1 and args.stage not in ("shadow", "interpret"):
        return fail("--repeat is for bench shadow and bench interpret", EXIT_USAGE)
    if args.repeat < 1:
        return fail(f"--repeat must be at least 1, not {args.repeat}", EXIT_USAGE)
    if args.stage != "asr" and args.second_pass:
        return fail("--second-pass is for bench asr", EXIT_USAGE)
    if args.stage not in ("asr", "interpret") and args.commit_policies:
        return fail("--commit-policies is for bench asr and bench interpret", EXIT_USAGE)
    if args.stage not in ("asr", "echo") and args.ablate:
        return fail("--ablate is for bench asr and bench echo", EXIT_USAGE)
    if args.stage != "echo" and args.routes:
        return fail("--routes is for bench echo", EXIT_USAGE)
    if args.part != "all" and args.stage == "tts":
        return fail("--part is for the benchmarks that run on recordings", EXIT_USAGE)
    if args.stage == "interpret":
        from engine import paths
        from engine.pipeline import bench_interpret

        manifest = (
            Path(args.manifest) if args.manifest else paths.shared_speech_dir().parent / "speech-xx" / "manifest.jsonl"
        )
        if not manifest.is_file():
            return fail(f"manifest not found: {manifest} (give one with --manifest)", EXIT_USAGE)
        commit = _commit_policies(args.commit_policies, bench_interpret.POLICIES)
        if isinstance(commit, str):
            return fail(commit, EXIT_USAGE)
        manifest = part_manifest(manifest, args.part)
        try:
            config = replace(slowdown_config(args.cpu_slowdown), translate_from="auto")
            scorer = simuleval_scorer()
            report = bench_interpret.run_bench(
                manifest, commit, config=config, progress=progress, repeat=args.repeat, scorer=scorer
            )
        except ValueError as exc:
            return fail(str(exc), EXIT_USAGE)
        except ImportError as exc:
            return fail(f"bench interpret needs the developer install (scripts/setup): {exc}")
        print(bench_interpret.format_repeated(report) if "repeats" in report else bench_interpret.format_table(report))
    elif args.stage == "echo":
        from engine.pipeline import bench_echo

        manifest = manifest_path(args.manifest)
        if not manifest.is_file():
            return fail(f"manifest not found: {manifest} (give one with --manifest)", EXIT_USAGE)
        manifest = part_manifest(manifest, args.part)
        try:
            config = replace(slowdown_config(args.cpu_slowdown), echo_hint_ms=args.echo_hint_ms)
            report = bench_echo.run_bench(
                manifest,
                config,
                echo_db=-6.0 if args.echo_db is None else args.echo_db,
                delay_ms=bench_echo.DEFAULT_DELAY_S * 1000 if args.echo_delay_ms is None else args.echo_delay_ms,
                routes=tuple(comma_list(args.routes)) or bench_echo.ROUTES,
                progress=progress,
                ablate=args.ablate,
            )
        except ValueError as exc:
            return fail(str(exc), EXIT_USAGE)
        print(bench_echo.format_table(report))
    elif args.stage in ("shadow", "asr"):
        if args.stage == "shadow":
            from engine.pipeline import bench as stage_bench
        else:
            from engine.asr import bench as stage_bench  # type: ignore[no-redef]

        manifest = manifest_path(args.manifest)
        if not manifest.is_file():
            return fail(f"manifest not found: {manifest} (give one with --manifest)", EXIT_USAGE)
        manifest = part_manifest(manifest, args.part)
        if args.stage == "shadow":
            try:
                config = slowdown_config(args.cpu_slowdown)
            except ValueError as exc:
                return fail(str(exc), EXIT_USAGE)
            names: list[str | None] = [*comma_list(args.model)] or [None]
            try:
                presets = [preset(key) for key in comma_list(args.preset)]
            except ValueError as exc:
                return fail(str(exc), EXIT_USAGE)
            try:
                policies = [voice_policy(p) for p in comma_list(args.policies)]
            except argparse.ArgumentTypeError as exc:
                return fail(str(exc), EXIT_USAGE)
            from engine.eval.runner import tts_config
            from engine.pipeline.models import Models

            scorer = simuleval_scorer()
            reports = {}
            # runs on the same models share them, and a run's probe after it is the next one's before
            models: Models | None = None
            before: dict | None = None
            preset_choices: list[Preset | None] = [*presets] or [None]
            policy_choices: list[str | None] = [*policies] or [None]
            for name in names:
                for item in preset_choices:
                    for policy in policy_choices:
                        run_config = replace(config, model=None if name in (None, TINY_EN) else name)
                        run_config = item.apply(run_config) if item is not None else run_config
                        run_config = replace(run_config, **tts_config(policy)) if policy else run_config
                        parts = (name if len(names) > 1 else None, item and item.key, policy)
                        label = " · ".join(x for x in parts if x)
                        if models is None or models.key != run_config.models_key():
                            models, before = Models.load(run_config), None
                        done = stage_bench.run_repeated(
                            manifest, args.repeat, run_config, progress, scorer, models, before
                        )
                        reports[label or TINY_EN] = done
                        before = stage_bench.last_probe(done)
            for label, one in reports.items():
                if len(reports) > 1:
                    print(f"{label}:")
                print(stage_bench.format_repeated(one) if "repeats" in one else stage_bench.format_table(one))
            runs = "models" if len(presets) <= 1 and len(policies) <= 1 else "runs"
            report = next(iter(reports.values())) if len(reports) == 1 else {"bench": "shadow", runs: reports}
        else:
            from engine.asr import bench as asr_bench

            if args.model not in (None, TINY_EN, "base"):
                return fail(f"bench asr knows the models {TINY_EN} and base, not {args.model!r}", EXIT_USAGE)
            commit = _commit_policies(args.commit_policies, asr_bench.POLICIES)
            if isinstance(commit, str):
                return fail(commit, EXIT_USAGE)
            if args.second_pass and "la2" not in commit:
                return fail("--second-pass revises la2's words: include la2 in --commit-policies", EXIT_USAGE)
            report = asr_bench.run_bench(
                manifest,
                progress=progress,
                ablate=args.ablate,
                policies=commit,
                second_pass=args.second_pass,
                model=None if args.model in (None, TINY_EN) else args.model,
            )
            print(asr_bench.format_table(report))
    else:
        from engine.tts.bench import format_table, run_bench

        report = run_bench(threads=args.threads, progress=progress)
        print(format_table(report))
    if args.json:
        print(json.dumps(finite(report), allow_nan=False, default=json_default))
    return EXIT_OK
