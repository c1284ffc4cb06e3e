"""Deterministic A/B of the voice's rules.

A `bench shadow` run's underruns move from run to run more than most rule changes do (3-16 at `--cpu-slowdown 2` for
the same code): the recognizer's steps and every piece's compute are measured on a shared CPU. This script takes
both out:

- ``record`` runs the real sessions once and keeps every recognizer step the session saw (committed words with
  their times, the tentative words, the step's compute), one file per manifest and slowdown;
- ``replay`` feeds those steps into a fresh session's voice on the simulated clock. The voice's stages run for real
  (their audio is what is timed and spoken) but are charged a modelled compute: Stage I by the ids it reads, the
  flow and Stage II by their frames (``COST_*``, medians measured with ``calibrate`` on the 2-core AMD EPYC VM,
  2026-11-24), times ``--voice-slowdown`` and a seeded log-normal factor (``--sigma``) for the spread a real run
  has. The worker handles each step before the next is given, so the result is the same on every run and machine.
  ``--quality`` also scores every spoken word against the whole-sentence voice (``word_distance_db``).

    .venv/bin/python scripts/voice_replay.py record ../shared/speech/manifest.jsonl --cpu-slowdown 2 --out s2.pkl
    .venv/bin/python scripts/voice_replay.py replay s2.pkl --voice-slowdown 2,2.5,3 --sigma 0.3
    .venv/bin/python scripts/voice_replay.py calibrate

The recorded steps are the recognizer's at the recording's slowdown; ``--voice-slowdown`` moves the voice alone.
Files written by ``record`` are pickles of this project's own objects: read only those you made.
"""

from __future__ import annotations

import argparse
import copy
import pickle
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.asr.bench import load_manifest
from engine.audio.io import load_audio
from engine.clock import SimulatedClock
from engine.learned.cache import CachedVoice, VoiceWrapper
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.session import ShadowSession
from engine.tts import voice_cost
from engine.tts.chunker import ChunkSizes
from engine.tts.quality import whole_sentence_voice, word_distances_by_key
from engine.tts.voice import TwoStageVoice
from engine.tts.voice_split import FLOW_MARGIN


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# modelled compute (s) on the 2-core AMD EPYC VM (``engine.tts.voice_cost``; ``calibrate`` measures them again)
COST_STAGE1_IDS, COST_STAGE2_FRAMES = voice_cost.STAGE1_IDS, voice_cost.STAGE2_FRAMES


class ChargedTime:
    """A clock for the voice's stage that moves only by the compute charged to it."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class ModelledVoice(VoiceWrapper):
    """The voice's interface over a (caching) voice, each call charged its modelled compute."""

    def __init__(self, voice: CachedVoice, charged: ChargedTime, sigma: float, seed: int) -> None:
        super().__init__(voice)
        self.voice: CachedVoice = voice
        self.charged, self.sigma = charged, sigma
        self.rng = np.random.default_rng(seed)

    def _charge(self, seconds: float) -> None:
        spread = float(np.exp(self.sigma * self.rng.standard_normal())) if self.sigma else 1.0
        self.charged.t += seconds * spread

    def stage1_prior(self, ids: np.ndarray, phoneme_offset: int = 0, frame_offset: int = 0):
        out = self.voice.stage1_prior(ids, phoneme_offset, frame_offset)
        self._charge(voice_cost.stage1_s(len(ids)))
        return out

    def latent_frames(self, prior: np.ndarray, start: int, stop: int) -> np.ndarray:
        out = self.voice.latent_frames(prior, start, stop)
        self._charge(voice_cost.flow_s(prior.shape[-1], start, stop))
        return out

    def stage2(self, latent: np.ndarray) -> np.ndarray:
        out = self.voice.stage2(latent)
        self._charge(voice_cost.stage2_s(latent.shape[-1]))
        return out


def record(manifest: Path, slowdown: float, translate: bool, out: Path) -> None:
    entries = load_manifest(manifest)
    if translate:
        entries = [e for e in entries if e.get("lang") and e.get("translation")]
    base = ShadowConfig(cpu_slowdown=slowdown, translate_from=entries[0]["lang"] if translate else None)
    models = Models.load(base)
    recorded: dict = {"slowdown": slowdown, "translate": translate, "recordings": {}}
    original = ShadowSession._on_step
    try:
        for entry in entries:
            steps: list = []

            def keep(session: ShadowSession, step, steps: list = steps) -> None:
                steps.append(copy.deepcopy(step))
                original(session, step)

            ShadowSession._on_step = keep  # type: ignore[method-assign,assignment]
            config = replace(base, translate_from=entry["lang"]) if translate else base
            session = ShadowSession(config, models)
            session.run_file(load_audio(entry["path"]))
            recorded["recordings"][entry["id"]] = {"steps": steps, "run": session.asr_run, "lang": entry.get("lang")}
            say(f"{entry['id']}: {len(steps)} steps, {session.figures.underruns()} underruns in the real run")
    finally:
        ShadowSession._on_step = original  # type: ignore[method-assign]
    out.write_bytes(pickle.dumps(recorded))
    say(f"wrote {out}")


def replay_session(
    models: Models,
    config: ShadowConfig,
    recording: dict,
    voice: ModelledVoice,
    charged: ChargedTime,
    keep_pieces: bool = False,
) -> ShadowSession:
    """One recording's steps into a session whose voice is ``voice``; the session, ended."""
    session = ShadowSession(config, Models(models.backend, models.vad, voice, models.key))  # type: ignore[arg-type]
    if keep_pieces:
        session.pieces = []
    asr_clock = SimulatedClock(compute_scale=config.cpu_slowdown)
    session._clock, session._source_origin_s = asr_clock, 0.0
    session._begin(SimulatedClock(compute_scale=config.voice_cpu_slowdown, timer=charged), False, None)
    assert session._synthesizer is not None and session._worker is not None
    session._synthesizer._timer = charged
    worker = session._worker

    def source(on_step):
        for step in recording["steps"]:
            asr_clock.sleep_until(step.at_s)
            on_step(copy.deepcopy(step))
            worker.wait_idle()  # the next step's pace figures see this step's pieces: the same every run
        return recording["run"]

    session._run_asr(source, asr_clock)
    session._end()
    return session


def replay(path: Path, voice_slowdowns: list[float], sigma: float, quality: bool) -> None:
    recorded = pickle.loads(path.read_bytes())
    recordings = recorded["recordings"]
    first = next(iter(recordings.values()))
    language = first["lang"] if recorded["translate"] else None
    base = ShadowConfig(cpu_slowdown=recorded["slowdown"], translate_from=language)
    models = Models.load(base)
    cached = CachedVoice(models.voice)  # the same pieces recur between configurations: made once
    for slowdown in voice_slowdowns:
        underruns, gap_s, lags, distances = 0, 0.0, [], []
        for name, recording in recordings.items():
            config = replace(base, translate_from=recording["lang"]) if recorded["translate"] else base
            if recorded["translate"]:
                models.backend.set_language(recording["lang"])  # type: ignore[attr-defined]
            config = replace(config, voice_slowdown=slowdown)
            charged = ChargedTime()
            voice = ModelledVoice(cached, charged, sigma, zlib.crc32(name.encode()))
            session = replay_session(models, config, recording, voice, charged, quality)
            report = session.figures.report()
            underruns += report["underruns"]
            gap_s += report["gap_s"]
            lags += [w["ear_voice_lag_s"] for w in report["words"] if w["ear_voice_lag_s"] is not None]
            if report["underruns"]:
                say(f"  {name}: {report['underruns']} underruns ({report['gap_s']:.2f} s)")
            if quality and session.pieces:
                distances += _distances(models.voice, session.pieces)
        line = (
            f"{path.name}, voice x{slowdown:g}, sigma {sigma:g}: underruns {underruns} ({gap_s:.2f} s); "
            f"ear_voice_lag_s median {np.median(lags):.2f} s, p90 {np.percentile(lags, 90):.2f} s, "
            f"max {np.max(lags):.2f} s"
        )
        if distances:
            line += f"; word_distance_db mean {np.mean(distances):.2f} dB"
        say(line)


def _distances(voice: TwoStageVoice, pieces: list) -> list[float]:
    words = sorted({(w.sentence, w.index): w.text for p in pieces for w in p.words}.items())
    reference, reference_pieces = whole_sentence_voice(voice, [text for _, text in words], ChunkSizes(12, 12, 24))
    spoken = np.concatenate([p.samples for p in pieces])
    return list(word_distances_by_key(spoken, pieces, reference, reference_pieces, voice.sample_rate).values())


def calibrate() -> None:
    """Median compute of each stage call on this machine, for ``COST_*``."""
    voice = TwoStageVoice(threads=1)
    rng = np.random.default_rng(0)

    def median_s(call, repeats: int = 7) -> float:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    for n in COST_STAGE1_IDS[0]:
        ids = rng.integers(1, 100, n).astype(np.int64)
        prior, _ = voice.stage1_prior(ids)
        total = prior.shape[-1]
        flow = median_s(lambda: voice.latent_frames(prior, total // 2 - 10, total // 2 + 10))  # noqa: B023
        text_part = median_s(lambda: voice.stage1_prior(ids))  # noqa: B023
        say(
            f"Stage I text part, {n} ids: {text_part:.4f} s; flow on {min(20 + 2 * FLOW_MARGIN, total)} frames: "
            f"{flow:.4f} s"
        )
    latent = rng.standard_normal((192, max(COST_STAGE2_FRAMES[0]))).astype(np.float32)
    for frames in COST_STAGE2_FRAMES[0][1:]:
        say(f"Stage II, {frames} frames: {median_s(lambda: voice.stage2(latent[:, :frames])):.4f} s")  # noqa: B023


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the real sessions once and keep their recognizer steps")
    rec.add_argument("manifest", type=Path)
    rec.add_argument("--cpu-slowdown", type=float, default=1.0)
    rec.add_argument("--translate", action="store_true", help="interpret (each recording's lang into English)")
    rec.add_argument("--out", type=Path, required=True)
    rep = sub.add_parser("replay", help="replay recorded steps into the voice with modelled compute")
    rep.add_argument("steps", type=Path)
    rep.add_argument("--voice-slowdown", default="1", help="comma-separated: the voice's compute x F")
    rep.add_argument("--sigma", type=float, default=0.3, help="spread of each call's compute (log-normal)")
    rep.add_argument("--quality", action="store_true", help="also word_distance_db of every spoken word")
    sub.add_parser("calibrate", help="measure the stage costs the model uses, on this machine")
    args = parser.parse_args()
    if args.command == "record":
        record(args.manifest, args.cpu_slowdown, args.translate, args.out)
    elif args.command == "replay":
        replay(args.steps, [float(x) for x in args.voice_slowdown.split(",")], args.sigma, args.quality)
    else:
        calibrate()


if __name__ == "__main__":
    main()
