"""``liveshadow bench echo``: every recording shadowed in a simulated room, once per echo route (simulated clock).

The microphone hears the speaker plus the voice as it is played, delayed, coloured by a seeded synthetic room
(``engine.audio.room``) and scaled to ``echo_db`` from the speaker's speech, with a little noise. Routes:

- ``headphones``: no echo reaches the microphone (the reference every other route is held to);
- ``off``: the echo is heard and nothing guards against it;
- ``gate``: the microphone is ignored while the voice plays;
- ``cancel``: the voice's played samples are the reference of the echo canceller;
- ``cancel-webrtc``: the same with WebRTC's AEC3 as the canceller (what browsers and most voice apps use).

The microphone listens on for ``TAIL_S`` after each recording, while the voice finishes (where its echo is heard
alone). One room for the whole run (the user's): the canceller keeps what it learned of the room from one recording
to the next, as the app does between sessions with the same devices, and starts cold on each route's first
recording (``per_recording`` says which were warm). Every route runs the voice and the recognizer in step (the
room must hear the voice played before each intake), ``headphones`` included, so their figures compare.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import jiwer
import numpy as np

from engine.asr.bench import load_manifest
from engine.asr.words import normalize_token
from engine.audio.levels import frame_power, speech_level
from engine.audio.resample import resample
from engine.audio.room import DEFAULT_DELAY_S, DEFAULT_NOISE_DB, DEFAULT_RT60_S, RoomMicrophone, room_response
from engine.metrics import describe_machine, machine_info
from engine.metrics import names as m
from engine.pipeline.config import ShadowConfig
from engine.pipeline.echo import EchoMemory
from engine.pipeline.echo_ablation import HeardSignals, format_echo_ablation, heard_signals, run_echo_ablation
from engine.pipeline.models import Models
from engine.pipeline.session import ShadowSession
from engine.pipeline.shadow import shadow_file
from engine.pipeline.speed_probe import probe_text, run_probed
from engine.pipeline.summary import aggregate_reports
from engine.tts.policies import FullSentencePolicy
from engine.tts.synthesizer import IncrementalSynthesizer, synthesize_text

log = logging.getLogger(__name__)

ROOM_SEED = 1
ROUTES = ("headphones", "off", "gate", "cancel", "cancel-webrtc")
GUARDS = {"headphones": "off", "off": "off", "gate": "gate", "cancel": "cancel", "cancel-webrtc": "cancel"}
CANCELLERS = {"cancel-webrtc": "webrtc"}  # the browsers' canceller (AEC3) in the same run: the peer's method
ECHO_WINDOW_S = 3.0  # an inserted word repeating a word the voice spoke this long before is an echo word
VOICE_SAMPLE = (
    "The committee met on Tuesday to discuss the budget for next year. Several members asked for more time, "
    "and the chair agreed to a second meeting in the spring."
)
# the microphone listens on this long after the recording ends, while the voice finishes: the voice alone is heard
TAIL_S = 4.0
SILENT_BELOW_DB = 40.0  # a frame of the speaker this far under their speech level is silence (for ERLE)
ECHO_ABOVE_DB = 30.0  # a frame of echo within this of the speaker's speech level is echo (for ERLE)


def voice_level(models: Models) -> float:
    """The voice's speech level at 16 kHz (a fixed passage spoken whole), to scale its echo to ``echo_db``."""
    voice = models.voice
    audio, _ = synthesize_text(IncrementalSynthesizer(voice, FullSentencePolicy()), VOICE_SAMPLE)
    return speech_level(resample(audio, voice.sample_rate, 16000))


def echo_words(words: list[dict], reference: str, window_s: float = ECHO_WINDOW_S) -> list[str]:
    """Committed words that the alignment against ``reference`` marks as inserted and that repeat a word the voice
    spoke in the ``window_s`` before the word was heard: the voice recognized again."""
    keys = [(normalize_token(w["text"]), w) for w in words]
    keys = [(k, w) for k, w in keys if k]
    ref = [k for k in (normalize_token(t) for t in reference.split()) if k]
    if not keys:
        return []
    inserted: Sequence[int]
    if not ref:
        inserted = range(len(keys))
    else:
        out = jiwer.process_words(" ".join(ref), " ".join(k for k, _ in keys))
        inserted = [i for c in out.alignments[0] if c.type == "insert" for i in range(c.hyp_start_idx, c.hyp_end_idx)]
    echoes = []
    for i in inserted:
        key, word = keys[i]
        since, until = word["source_start_s"] - window_s, word["source_end_s"]
        said = [w["speak_end_s"] for k, w in keys[:i] if k == key and w.get("speak_end_s") is not None]
        if any(since <= end <= until for end in said):
            echoes.append(word["text"])
    return echoes


def erle_parts(room: RoomMicrophone, heard: np.ndarray, level: float) -> tuple[float, float]:
    """The echo's energy before and after the guard, summed over the frames where the speaker is silent and the
    echo is not (the voice-only part)."""
    n = min(room.speaker.size, heard.size)
    speaker, echo = frame_power(room.speaker[:n]), frame_power(room.echo[:n])
    mic = frame_power(room.speaker[:n] + room.echo[:n])
    out = frame_power(heard[:n])
    mask = (speaker < (level * 10 ** (-SILENT_BELOW_DB / 20)) ** 2) & (
        echo > (level * 10 ** (-ECHO_ABOVE_DB / 20)) ** 2
    )
    return float(np.sum(mic[mask])), float(np.sum(out[mask]))


def _level_db(level: float, reference: float) -> float | None:
    """``level`` in dB from ``reference``; None where either is silence."""
    return 20 * float(np.log10(level / reference)) if level > 0 and reference > 0 else None


class _Room:
    """Builds each recording's room for ``shadow_file`` and keeps what is needed of it afterwards."""

    def __init__(self, gain_per_level: float, delay_s: float, rt60_s: float, noise_db: float, seed: int) -> None:
        self.gain_per_level = gain_per_level  # the echo's gain per unit of the speaker's speech level
        self.delay_s, self.rt60_s, self.noise_db, self.seed = delay_s, rt60_s, noise_db, seed
        self.room: RoomMicrophone | None = None
        self.session: ShadowSession | None = None
        self.level = 0.0

    def __call__(self, audio: np.ndarray, session: ShadowSession) -> RoomMicrophone:
        assert session.voice_track is not None
        self.level = speech_level(audio)
        audio = np.concatenate([audio, np.zeros(int(TAIL_S * 16000), np.float32)])
        self.session = session
        session.keep_heard = True
        self.room = RoomMicrophone(
            audio,
            session.voice_track,
            self.gain_per_level * self.level,
            self.delay_s,
            room_response(self.rt60_s, self.seed),
            self.level * 10 ** (self.noise_db / 20),
            session.sync_voice,
            self.seed,
        )
        return self.room


def run_bench(
    manifest: Path,
    config: ShadowConfig | None = None,
    echo_db: float = -6.0,
    delay_ms: float = DEFAULT_DELAY_S * 1000,
    routes: tuple[str, ...] = ROUTES,
    rt60_s: float = DEFAULT_RT60_S,
    noise_db: float = DEFAULT_NOISE_DB,
    progress: Callable[[str], None] | None = None,
    models: Models | None = None,
    ablate: bool = False,
) -> dict:
    """Every route on every recording; with ``ablate``, also the recognizer on the ``cancel`` route's signals
    apart from the session (``echo_ablation``: the report's ``ablation``)."""
    config = config or ShadowConfig()
    unknown = [r for r in routes if r not in ROUTES]
    if unknown:
        raise ValueError(f"unknown route(s) {', '.join(unknown)}; choose from {', '.join(ROUTES)}")
    if not 0 <= delay_ms <= 1000:
        raise ValueError(f"the echo delay must be between 0 and 1000 ms, not {delay_ms}")
    if not -40 <= echo_db <= 12:
        raise ValueError(f"the echo level must be between -40 and +12 dB, not {echo_db}")
    entries = load_manifest(manifest)
    if not entries:
        raise ValueError(f"{manifest} lists no recordings")
    models = models or Models.load(config)

    def run() -> dict:
        level = voice_level(models)
        results = {}
        ablation: dict | None = None
        for route in routes:
            gain = 0.0 if route == "headphones" else 10 ** (echo_db / 20) / max(level, 1e-9)
            route_config = replace(
                config, echo_guard=GUARDS[route], echo_canceller=CANCELLERS.get(route, config.echo_canceller)
            )
            kept: list[HeardSignals] | None = [] if ablate and route == "cancel" else None
            results[route] = _run_route(
                entries, route_config, models, gain, delay_ms / 1000, rt60_s, noise_db, progress, route, kept
            )
            if kept:
                ablation = run_echo_ablation(kept, models.backend, models.vad, progress)
        return {
            "bench": "echo",
            "machine": machine_info(),
            "config": {
                "manifest": str(manifest),
                "recordings": len(entries),
                "echo_db": echo_db,
                "echo_delay_ms": delay_ms,
                "rt60_s": rt60_s,
                "noise_db": noise_db,
                "echo_hint_ms": config.echo_hint_ms,
                "cpu_slowdown": config.cpu_slowdown,
            },
            "results": results,
            **({"ablation": ablation} if ablation is not None else {}),
        }

    return run_probed(models, run, progress)


def _run_route(
    entries: list[dict],
    config: ShadowConfig,
    models: Models,
    gain: float,
    delay_s: float,
    rt60_s: float,
    noise_db: float,
    progress: Callable[[str], None] | None,
    route: str,
    kept: list[HeardSignals] | None = None,
) -> dict:
    """One route on every recording; ``kept`` (a list) gets each recording's signals for the ablation."""
    reports, echoes, compute, audio, before, after = [], [], 0.0, 0.0, 0.0, 0.0
    per_recording: dict[str, dict] = {}
    models.echo_memory = EchoMemory()  # each route starts cold, in the same room
    for number, entry in enumerate(entries, 1):
        if progress:
            progress(f"{route} {number}/{len(entries)} {entry['id']}")
        room = _Room(gain, delay_s, rt60_s, noise_db, seed=ROOM_SEED)
        report = shadow_file(entry["path"], config, models, entry=entry, speech_chain=False, hear=room)
        reports.append(report)
        found = echo_words(report["words"], entry.get("text") or "")
        echoes += found
        echo = report.get("echo") or {}
        per_recording[entry["id"]] = {
            m.ECHO_WORDS: len(found),
            "warm_start": echo.get("warm_start"),
            "raised_db": echo.get("raised_db"),
            m.WER_COMMITTED: report[m.WER_COMMITTED],
        }
        if echo.get("aec_compute_ratio") is not None:
            compute += echo["aec_compute_ratio"] * echo["aec_audio_s"]
            audio += echo["aec_audio_s"]
        session = room.session
        if room.room is not None and gain > 0:
            per_recording[entry["id"]][m.ECHO_HEARD_DB] = _level_db(speech_level(room.room.echo), room.level)
        if room.room is not None and session is not None and session.echo is not None and gain > 0:
            heard = np.concatenate(session.echo.cleaned or [np.zeros(0, np.float32)])
            canceller = session.echo.canceller
            heard = heard[canceller.delay_samples :] if canceller is not None else heard  # aligned with the input
            e_in, e_out = erle_parts(room.room, heard, room.level)
            before, after = before + e_in, after + e_out
            if e_in > 0 and config.echo_guard == "cancel":
                per_recording[entry["id"]][m.ERLE_DB] = 10 * float(np.log10(e_in / max(e_out, 1e-12)))
            if kept is not None:
                kept.append(heard_signals(entry["id"], entry.get("text") or "", room.room, heard, ROOM_SEED + number))
    figures = aggregate_reports(reports, entries)
    heard_db = [r[m.ECHO_HEARD_DB] for r in per_recording.values() if r.get(m.ECHO_HEARD_DB) is not None]
    return {
        m.WER_COMMITTED: figures[m.WER_COMMITTED],
        m.ECHO_WORDS: len(echoes),
        "echo_word_texts": echoes,
        m.EAR_VOICE_LAG_S: figures[m.EAR_VOICE_LAG_S],
        m.COMMIT_LATENCY_S: figures[m.COMMIT_LATENCY_S],
        m.UNDERRUNS: figures[m.UNDERRUNS],
        m.AEC_COMPUTE_RATIO: compute / audio if audio else None,
        m.ERLE_DB: 10 * float(np.log10(before / max(after, 1e-12)))
        if before > 0 and config.echo_guard == "cancel"
        else None,
        m.ECHO_HEARD_DB: float(np.mean(heard_db)) if heard_db else None,
        "gated_s": sum((r.get("echo") or {}).get("gated_s", 0.0) for r in reports),
        "per_recording": per_recording,
    }


def format_table(report: dict) -> str:
    c = report["config"]
    lines = [
        f"echo at {c['echo_db']:+g} dB, {c['echo_delay_ms']:g} ms, RT60 {c['rt60_s']:g} s, noise "
        f"{c['noise_db']:g} dB; {c['recordings']} recordings"
    ]
    lines.append(
        f"{'route':<13} {'wer_committed':>13} {'echo_words':>10} {'lag median':>10} {'lag p90':>8} "
        f"{'underruns':>9} {'gated_s':>8} {'aec ratio':>9} {'erle_db':>7} {'echo heard':>10}"
    )
    for route, r in report["results"].items():
        lag = r[m.EAR_VOICE_LAG_S]
        ratio = "-" if r[m.AEC_COMPUTE_RATIO] is None else f"{r[m.AEC_COMPUTE_RATIO]:.4f}"
        erle = "-" if r[m.ERLE_DB] is None else f"{r[m.ERLE_DB]:.1f}"
        median = "-" if lag["median"] is None else f"{lag['median']:.2f} s"
        p90 = "-" if lag["p90"] is None else f"{lag['p90']:.2f} s"
        heard = "-" if r.get(m.ECHO_HEARD_DB) is None else f"{r[m.ECHO_HEARD_DB]:+.1f} dB"
        lines.append(
            f"{route:<13} {r[m.WER_COMMITTED]:>13.3f} {r[m.ECHO_WORDS]:>10} {median:>10} {p90:>8} "
            f"{r[m.UNDERRUNS]:>9} {r['gated_s']:>8.1f} {ratio:>9} {erle:>7} {heard:>10}"
        )
    head = report["results"].get("headphones")
    cancel = report["results"].get("cancel")
    if head and cancel and head[m.EAR_VOICE_LAG_S]["median"] is not None and cancel[m.EAR_VOICE_LAG_S]["median"]:
        wer_cost = cancel[m.WER_COMMITTED] - head[m.WER_COMMITTED]
        lag_cost = cancel[m.EAR_VOICE_LAG_S]["median"] - head[m.EAR_VOICE_LAG_S]["median"]
        lines.append(f"cancel against headphones: wer_committed {wer_cost:+.3f}, lag median {lag_cost:+.2f} s")
    if "ablation" in report:
        lines += [
            "the recognizer on the cancel route's signals, apart from the session (WER):",
            format_echo_ablation(report["ablation"]),
        ]
    lines.append(probe_text(report))
    slowdown = c.get("cpu_slowdown", 1.0)
    lines.append(
        f"{describe_machine(report['machine'])}{f', compute charged x{slowdown:g}' if slowdown != 1.0 else ''}"
    )
    return "\n".join(lines)
