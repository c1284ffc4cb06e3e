"""``liveshadow bench asr --ablate``: where the streaming decode loses words the whole-recording decode hears.

Every row decodes the same recordings in one run with the same tiny.en model:

- the stock decode of each whole recording (faster-whisper's own ``transcribe``: 30 s windows, temperature fallback,
  the text before as context), greedy and with 5 beams;
- liveshadow's own segments: the spans between the cuts of its streaming recognizer's buffer in an la2 run (a trim
  at a sentence end or a pause, a quiet buffer dropped), each decoded whole
  - the stock way (padded to Whisper's 30 s window),
  - with liveshadow's step decode and the full 30 s window,
  - with the step decode and the encoder cropped to the buffer (the streaming decode without its window floor),
  - with the step decode and a 12 s window floor (``FLOOR_S``, silence after the audio),
  - with the step decode and a window of at least 5, 10 or 20 s filled with the real audio before the segment (its
    words dropped; the decoder may write ``CONTEXT_TOKENS``, since it writes the context's words again),
  each greedy and with 5 beams;
- la2 itself (its committed words).

WER is given overall, per recording length (``LENGTHS``) and per word position: in the first ``FIRST_S`` of a
segment (a buffer's start, where a cropped window hears least before the words) or later. A reference word's time is
that of the word the stock 5-beam decode (word timestamps on) matched to it, a hypothesis word's its own; each
position is scored on its own words, so a word timed across the boundary may count once on each side.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.asr.backend import SAMPLE_RATE, StepDecode
from engine.asr.run import run_policy
from engine.asr.stream_values import StepResult
from engine.asr.vad import FRAME, SileroVad, speech_flags
from engine.asr.whisper_backend import WhisperBackend
from engine.asr.words import Word, match_times
from engine.metrics.wer import word_errors

log = logging.getLogger(__name__)

FIRST_S = 3.0
LENGTHS = (("under 10 s", 0.0, 10.0), ("10-30 s", 10.0, 30.0), ("over 30 s", 30.0, math.inf))
POSITIONS = ("first 3 s", "later")
CONTEXT_TOKENS = 224
MIN_SEGMENT_S = 0.1
FLOOR_S = 12.0  # the window floor measured as a lever (RESULTS.md, "The short window")


@dataclass(frozen=True)
class Row:
    name: str
    decode: str  # "stock" (faster-whisper's own), "step" (liveshadow's), "la2" (the streaming run)
    whole: bool = False  # the whole recording, not liveshadow's segments
    # step decode: "full" (30 s), "crop" (to the buffer), "floor" (at least ``floor_s``, silence after the audio),
    # "context" (at least ``floor_s`` of the audio before the segment)
    window: str = "crop"
    floor_s: float = 0.0
    beam: int = 1


def _rows() -> tuple[Row, ...]:
    rows = [Row("stock_offline", "stock", whole=True), Row("stock_offline_beam5", "stock", whole=True, beam=5)]
    for beam in (1, 5):
        tag = "" if beam == 1 else "_beam5"
        rows += [
            Row(f"segments_stock{tag}", "stock", beam=beam),
            Row(f"segments_full{tag}", "step", window="full", beam=beam),
            Row(f"segments_cropped{tag}", "step", beam=beam),
        ]
        rows += [
            Row(f"segments_context{floor:.0f}s{tag}", "step", window="context", floor_s=floor, beam=beam)
            for floor in (5.0, 10.0, 20.0)
        ]
        rows.append(Row(f"segments_floor{FLOOR_S:.0f}s{tag}", "step", window="floor", floor_s=FLOOR_S, beam=beam))
    return (*rows, Row("la2", "la2"))


ROWS = _rows()


def buffer_segments(starts: Sequence[float], size: int) -> list[tuple[int, int]]:
    """The spans (samples) between the places a streaming run's buffer started at."""
    cuts = sorted({0, size, *(int(round(s * SAMPLE_RATE)) for s in starts if 0 < s * SAMPLE_RATE < size)})
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _has_speech(flags: np.ndarray, start: int, end: int) -> bool:
    return bool(flags[start // FRAME : max(end // FRAME, start // FRAME + 1)].any())


def _shifted(words: Sequence[Word], offset_s: float) -> list[Word]:
    return [Word(w.text, w.start_s + offset_s, w.end_s + offset_s) for w in words]


def decode_segment(backend: WhisperBackend, audio: np.ndarray, start: int, end: int, row: Row) -> list[Word]:
    """One segment's words the way ``row`` decodes them, on the recording's clock."""
    offset = start / SAMPLE_RATE
    if row.decode == "stock":
        return _shifted(backend.stock_words(audio[start:end], beam_size=row.beam), offset)
    if row.window == "full":
        with backend.settings(beam_size=row.beam):
            return _shifted(backend.transcribe(audio[start:end], full_window=True), offset)
    if row.window in ("crop", "floor"):
        with backend.settings(beam_size=row.beam):
            return _shifted(backend.transcribe(audio[start:end], decode=StepDecode(min_window_s=row.floor_s)), offset)
    first = min(start, max(end - int(row.floor_s * SAMPLE_RATE), 0))
    with backend.settings(beam_size=row.beam, max_new_tokens=CONTEXT_TOKENS):
        words = _shifted(backend.transcribe(audio[first:end]), first / SAMPLE_RATE)
    return [w for w in words if (w.start_s + w.end_s) / 2 >= offset]  # the context's words were heard before


def reference_times(text: str, timed: Sequence[Word]) -> list[tuple[str, float]]:
    """Each reference token with a time: the matched word's middle, else the last time before it."""
    tokens = text.split()
    times, last = [], 0.0
    for token, word in zip(tokens, match_times(tokens, timed), strict=True):
        last = (word.start_s + word.end_s) / 2 if word is not None else last
        times.append((token, last))
    return times


def _position(t: float, segments: Sequence[tuple[int, int]]) -> str:
    for start, end in segments:
        if start / SAMPLE_RATE <= t < end / SAMPLE_RATE:
            return POSITIONS[0] if t < start / SAMPLE_RATE + FIRST_S else POSITIONS[1]
    return POSITIONS[1]


def _segment_of(t: float, segments: Sequence[tuple[int, int]]) -> int:
    return next((k for k, (_, end) in enumerate(segments) if t < end / SAMPLE_RATE), len(segments) - 1)


def position_pairs(
    reference: Sequence[tuple[str, float]], words: Sequence[Word], segments: Sequence[tuple[int, int]]
) -> dict[str, tuple[list[str], list[str]]]:
    """Per position, the (reference, hypothesis) texts of every segment part, to be scored together."""
    out: dict[str, tuple[list[str], list[str]]] = {p: ([], []) for p in POSITIONS}
    parts: dict[tuple[int, str], tuple[list[str], list[str]]] = {}
    for token, t in reference:
        parts.setdefault((_segment_of(t, segments), _position(t, segments)), ([], []))[0].append(token)
    for word in words:
        t = (word.start_s + word.end_s) / 2
        parts.setdefault((_segment_of(t, segments), _position(t, segments)), ([], []))[1].append(word.text)
    for (_, position), (ref, hyp) in sorted(parts.items()):
        out[position][0].append(" ".join(ref))
        out[position][1].append(" ".join(hyp))
    return out


def _wer(references: Sequence[str], hypotheses: Sequence[str]) -> float | None:
    counts = word_errors(references, hypotheses)
    return counts.errors / counts.reference_words if counts.reference_words else None


def run_ablation(
    entries: Sequence[dict],
    audio: dict[str, np.ndarray],
    backend: WhisperBackend,
    vad: SileroVad,
    rows: Sequence[Row] = ROWS,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Every row on every recording (see the module); figures per row, and how many words each part holds."""
    ids = [e["id"] for e in entries]
    texts = {e["id"]: e["text"] for e in entries}
    durations = {i: audio[i].size / SAMPLE_RATE for i in ids}
    segments, la2_words, flags = {}, {}, {}
    start = time.perf_counter()
    for number, i in enumerate(ids, 1):
        if progress:
            progress(f"ablation: la2 {number}/{len(ids)} {i}")
        starts: list[float] = []

        def on_step(step: StepResult, starts: list[float] = starts) -> None:
            starts.append(step.buffer_start_s)

        run = run_policy(audio[i], backend, vad, on_step=on_step)
        segments[i] = buffer_segments(starts, audio[i].size)
        la2_words[i] = [Word(w.text, w.start_s, w.end_s) for w in run.committed]
        flags[i] = speech_flags(audio[i], vad)
    la2_s = time.perf_counter() - start
    hypotheses: dict[str, dict[str, list[Word]]] = {}
    seconds: dict[str, float] = {}
    for row in rows:
        if progress:
            progress(f"ablation: {row.name}")
        start = time.perf_counter()
        if row.decode == "la2":
            hypotheses[row.name], seconds[row.name] = la2_words, la2_s
            continue
        out = {}
        for i in ids:
            if row.whole:
                out[i] = backend.stock_words(audio[i], beam_size=row.beam)
                continue
            out[i] = [
                w
                for a, b in segments[i]
                if b - a >= MIN_SEGMENT_S * SAMPLE_RATE and _has_speech(flags[i], a, b)
                for w in decode_segment(backend, audio[i], a, b, row)
            ]
        hypotheses[row.name], seconds[row.name] = out, time.perf_counter() - start
    timing = hypotheses.get("stock_offline_beam5") or {i: backend.stock_words(audio[i], beam_size=5) for i in ids}
    reference = {i: reference_times(texts[i], timing[i]) for i in ids}
    total_s = sum(durations.values())
    results = {}
    for name, words in hypotheses.items():
        text = {i: " ".join(w.text for w in words[i]) for i in ids}
        by_length = {}
        for label, low, high in LENGTHS:
            chosen = [i for i in ids if low <= durations[i] < high]
            by_length[label] = _wer([texts[i] for i in chosen], [text[i] for i in chosen]) if chosen else None
        parts: dict[str, tuple[list[str], list[str]]] = {p: ([], []) for p in POSITIONS}
        for i in ids:
            for position, (ref, hyp) in position_pairs(reference[i], words[i], segments[i]).items():
                parts[position][0].extend(ref)
                parts[position][1].extend(hyp)
        results[name] = {
            "wer": _wer([texts[i] for i in ids], [text[i] for i in ids]),
            "by_length": by_length,
            "by_position": {p: _wer(*parts[p]) for p in POSITIONS},
            "rtf": seconds[name] / total_s,
            "texts": text,
        }
    words_in = {
        label: sum(len(texts[i].split()) for i in ids if low <= durations[i] < high) for label, low, high in LENGTHS
    }
    positions = {p: 0 for p in POSITIONS}
    for i in ids:
        for _, t in reference[i]:
            positions[_position(t, segments[i])] += 1
    return {
        "rows": results,
        "recordings": {label: sum(low <= durations[i] < high for i in ids) for label, low, high in LENGTHS},
        "reference_words": {"by_length": words_in, "by_position": positions},
        "segments": {i: [(a / SAMPLE_RATE, b / SAMPLE_RATE) for a, b in segments[i]] for i in ids},
    }


def format_ablation(report: dict) -> str:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    counts = report["reference_words"]
    head = ["row", "WER"] + [f"{label} ({counts['by_length'][label]} w)" for label, _, _ in LENGTHS]
    head += [f"{p} ({counts['by_position'][p]} w)" for p in POSITIONS] + ["rtf"]
    lines = [" | ".join(head)]
    for name, r in report["rows"].items():
        values = [r["wer"], *(r["by_length"][label] for label, _, _ in LENGTHS)]
        values += [r["by_position"][p] for p in POSITIONS]
        lines.append(" | ".join([name, *(cell(v) for v in values), f"{r['rtf']:.3f}"]))
    return "\n".join(lines)
