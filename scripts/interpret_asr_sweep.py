"""Recognizer-only sweep for interpreting (docs/interpreting.md): every recording of ../shared/speech-xx translated by
Whisper base through the streaming recognizer on the simulated clock, no voice, once per configuration.

    .venv/bin/python scripts/interpret_asr_sweep.py la2 la2_step1.0 la2_step1.0_hold5 la2_gap1.0 la3 la2_notail

A configuration is a commit policy (``la2``, ``la3``, ...) with optional parts joined by ``_``: ``stepS`` (least
time between steps, default 0.3 s), ``holdS`` (the hold bound, default 3 s), ``gapS`` (la2 against the newest
hypothesis made on at least S seconds less audio instead of the previous one, ``LocalAgreement.min_gap_s``;
interpreting runs ``step0.75_gap1.5``), ``notail`` (the last decode keeps the trailing quiet), ``padS`` (the
silence Whisper's short window adds after the buffer, default 1 s), ``endS`` (a pause this long ends an utterance,
as interpreting's ``interpret_endpoint_s``; default none), ``beamN`` (the decoder's beam;
default interpreting's ``interpret_beam_size``), ``fprev`` (the hold bound commits held words as the previous
hypothesis had them, as interpreting's ``interpret_force_previous``; default: as the newest has them), ``leadS`` (S
seconds of silence before each recording: the step grid meets the speech at another phase), ``trimS`` (the buffer
is cut past S seconds, as ``StreamConfig.trim_s``; the machine pace's first level cuts it after 6 s), ``prompt`` (each
decode is prompted with the English committed before the buffer, ``StreamConfig.use_prompt``), ``runN`` (a
translation loses runs of N or more words timed to one instant, ``speech_filter.UNALIGNED_RUN_WORDS``), ``anyN``
(agreement with whichever of the last N hypotheses agrees longest), ``nostall`` (a stalled hypothesis does not cut
the buffer), ``zrN`` (a decode is cut at N words in a row with no duration, ``whisper_backend.ZERO_RUN``), ``nsX`` or
``nsoff`` (faster-whisper's no-speech threshold, ``whisper_backend.NO_SPEECH_THRESHOLD``), ``patientS``
(agreement with a hypothesis ``gapS`` older, default 2 s, only while the sweep's voice has S seconds or more still
to say, else with the previous one), ``quietS`` (a step's decode ends at the quietest moment of the buffer's last S
seconds, not at its end). Prints corpus BLEU and chrF, the median real-time factor and commit latency, the median
lag of the sweep's voice (``voice_lag_s``: each committed word spoken ``VOICE_WORD_S`` long, from
``VOICE_READY_S`` after its commit at the earliest, minus the word's end), BLEU by language.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

import engine.asr.speech_filter as speech_filter
import engine.asr.streaming as streaming
import engine.asr.whisper_backend as whisper_backend
from engine.asr.backend import SAMPLE_RATE
from engine.asr.bench import load_manifest
from engine.asr.commit import LocalAgreement, common_prefix_length, make_commit_policy
from engine.asr.run import run_stream
from engine.asr.stream_values import StreamConfig
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.clock import SimulatedClock
from engine.metrics.translation import bleu, chrf
from engine.paths import shared_speech_dir
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import load_backend

# A voice for the sweep, which has none: each committed word takes ``VOICE_WORD_S`` to speak, and a step's words
# start ``VOICE_READY_S`` after they were committed at the earliest.
VOICE_WORD_S = 0.33
VOICE_READY_S = 0.3


def voice_starts(words: Sequence[tuple[float, float]]) -> list[float]:
    """When each committed word (commit time, in order) would start playing on the sweep's voice."""
    end, starts = 0.0, []
    for commit_s, _ in words:
        start = max(end, commit_s + VOICE_READY_S)
        starts.append(start)
        end = start + VOICE_WORD_S
    return starts


class PatientAgreement(LocalAgreement):
    """la2 with a hypothesis at least ``min_gap_s`` older while the sweep's voice has ``patience_s`` or more still
    to say (``in_hand_s``), else with the previous one."""

    def __init__(self, gap_s: float, patience_s: float) -> None:
        super().__init__(2, gap_s)
        self.patience_s = patience_s
        self.in_hand_s: Callable[[], float] = lambda: 0.0

    def _gap_s(self) -> float:
        return self.min_gap_s if self.in_hand_s() >= self.patience_s else 0.0


class AnyAgreement(LocalAgreement):
    """Commit the longest common prefix of this tail with whichever of the last ``depth`` tails agrees longest."""

    def __init__(self, depth: int) -> None:
        super().__init__(2)
        self.depth = depth

    def _across_gap(self) -> bool:
        return True

    def _agreed(self, heard_s: float, current: list[Word]) -> int:
        return max((common_prefix_length(t, current) for _, t in list(self._heard)[-self.depth :]), default=0)


QUIET_FRAME_S = 0.02


def quiet_end(buffer: np.ndarray, look_s: float) -> int:
    """The sample index of the middle of the latest quietest ``QUIET_FRAME_S`` frame in the buffer's last ``look_s``."""
    frame = int(QUIET_FRAME_S * SAMPLE_RATE)
    count = min(int(look_s * SAMPLE_RATE), buffer.size) // frame
    if count < 2:
        return buffer.size
    tail = buffer[buffer.size - count * frame :].reshape(count, frame)
    energy = np.mean(np.square(tail, dtype=np.float64), axis=1)
    latest = count - 1 - int(np.argmin(energy[::-1]))
    return buffer.size - count * frame + latest * frame + frame // 2


def with_quiet_end(look_s: float) -> Callable[[], None]:
    """Patch the recognizer so a step's decode (not an endpoint's, not the last) ends at the quietest moment of the
    buffer's last ``look_s``; returns the undo."""
    step, hypothesize = StreamingRecognizer.step, StreamingRecognizer._hypothesize

    def patched_step(self: StreamingRecognizer, now_s: float):  # type: ignore[no-untyped-def]
        self._quiet_step = True
        try:
            return step(self, now_s)
        finally:
            self._quiet_step = False

    def patched_hypothesize(self: StreamingRecognizer, end: int | None = None):  # type: ignore[no-untyped-def]
        if end is None and getattr(self, "_quiet_step", False):
            end = quiet_end(self._buffer, look_s)
        return hypothesize(self, end)

    StreamingRecognizer.step, StreamingRecognizer._hypothesize = patched_step, patched_hypothesize

    def undo() -> None:
        StreamingRecognizer.step, StreamingRecognizer._hypothesize = step, hypothesize

    return undo


def run(configs: list[str]) -> None:
    entries = load_manifest(shared_speech_dir().parent / "speech-xx" / "manifest.jsonl")
    backend = load_backend(ShadowConfig(translate_from="auto"))
    vad = SileroVad()
    audio = {e["id"]: load_audio(e["path"]) for e in entries}
    references = [e["translation"] for e in entries]
    finish_tail_s, padding_s, beam_size = streaming.FINISH_TAIL_S, backend.padding_s, backend.beam_size
    unaligned_run = speech_filter.UNALIGNED_RUN_WORDS
    zero_run = whisper_backend.ZERO_RUN
    stalled = StreamingRecognizer._stalled
    for name in configs:
        policy, step_s, hold_s, gap_s, endpoint_s, force_previous = name.split("_")[0], 0.3, 3.0, None, None, False
        lead_s, trim_s, use_prompt, depth, patience_s = 0.0, StreamConfig().trim_s, False, 0, None
        undo: Callable[[], None] | None = None
        streaming.FINISH_TAIL_S = finish_tail_s
        backend.padding_s = padding_s
        backend.beam_size = beam_size
        backend.no_speech_threshold = whisper_backend.NO_SPEECH_THRESHOLD
        whisper_backend.ZERO_RUN = zero_run
        StreamingRecognizer._stalled = stalled
        speech_filter.UNALIGNED_RUN_WORDS = unaligned_run
        for part in name.split("_")[1:]:
            if part.startswith("step"):
                step_s = float(part[4:])
            elif part.startswith("hold"):
                hold_s = float(part[4:])
            elif part.startswith("gap"):
                gap_s = float(part[3:])
            elif part == "notail":
                streaming.FINISH_TAIL_S = float("inf")
            elif part.startswith("pad"):
                backend.padding_s = float(part[3:])
            elif part.startswith("end"):
                endpoint_s = float(part[3:])
            elif part == "fprev":
                force_previous = True
            elif part.startswith("beam"):
                backend.beam_size = int(part[4:])
            elif part.startswith("lead"):
                lead_s = float(part[4:])
            elif part.startswith("trim"):
                trim_s = float(part[4:])
            elif part == "prompt":
                use_prompt = True
            elif part.startswith("any"):
                depth = int(part[3:])
            elif part.startswith("patient"):
                patience_s = float(part[7:])
            elif part == "nostall":
                StreamingRecognizer._stalled = lambda self: False
            elif part.startswith("zr"):
                whisper_backend.ZERO_RUN = int(part[2:])
            elif part.startswith("ns"):
                backend.no_speech_threshold = None if part == "nsoff" else float(part[2:])
            elif part.startswith("quiet"):
                undo = with_quiet_end(float(part[5:]))
            elif part.startswith("run"):
                speech_filter.UNALIGNED_RUN_WORDS = int(part[3:])
        texts, rtfs, latencies, voice_lags = [], [], [], []
        for entry in entries:
            backend.set_language(entry["lang"])
            vad.reset()
            if patience_s is not None:
                commit = PatientAgreement(gap_s or 2.0, patience_s)
            else:
                commit = AnyAgreement(depth) if depth else make_commit_policy(policy, gap_s or 0.0)
            config = StreamConfig(
                trim_s=trim_s,
                max_hold_s=hold_s,
                endpoint_s=endpoint_s,
                force_previous=force_previous,
                use_prompt=use_prompt,
            )
            recognizer = StreamingRecognizer(backend, commit, vad, config)
            if isinstance(commit, PatientAgreement):

                def in_hand(r: StreamingRecognizer = recognizer) -> float:
                    said = [(w.heard_s, w.end_s) for w in r.committed]
                    starts = voice_starts(said)
                    return max(starts[-1] + VOICE_WORD_S - r.audio_in_s, 0.0) if starts else 0.0

                commit.in_hand_s = in_hand
            lead = np.zeros(int(lead_s * SAMPLE_RATE), np.float32)
            result = run_stream(np.concatenate([lead, audio[entry["id"]]]), recognizer, SimulatedClock(), step_s)
            texts.append(" ".join(w.text for w in result.committed))
            rtfs.append(result.compute_s / result.audio_s)
            latencies += [w.commit_s - w.end_s for w in result.committed]
            starts = voice_starts([(w.commit_s, w.end_s) for w in result.committed])
            voice_lags += [start - w.end_s for start, w in zip(starts, result.committed, strict=True)]
        by_language = {}
        for lang in sorted({e["lang"] for e in entries}):
            pairs = [(r, t) for e, r, t in zip(entries, references, texts, strict=True) if e["lang"] == lang]
            by_language[lang] = round(bleu([r for r, _ in pairs], [t for _, t in pairs]), 1)
        figures = {
            "bleu": round(bleu(references, texts), 2),
            "chrf": round(chrf(references, texts), 2),
            "rtf_asr": round(statistics.median(rtfs), 2),
            "commit_latency_s": round(statistics.median(latencies), 2),
            "voice_lag_s": round(statistics.median(voice_lags), 2),
            "bleu_by_language": by_language,
        }
        if undo is not None:
            undo()
        sys.stdout.write(f"{name} {json.dumps(figures)}\n")
        sys.stdout.flush()
    streaming.FINISH_TAIL_S = finish_tail_s
    backend.padding_s = padding_s
    backend.beam_size = beam_size


if __name__ == "__main__":
    run(sys.argv[1:] or ["la2"])
