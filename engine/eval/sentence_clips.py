"""Sentence clips: every sentence of a set's recordings cut tight at its first and last word into a clip of its own.

Many real clips start speaking at their first sample and stop at their last word, and so does the recognizer's
buffer after each cut at a pause; the development sets' recordings mostly have silence around their speech, which
hides what a short window loses on a sentence's first words. ``liveshadow sentence-clips --out DIR`` writes
``DIR/manifest.jsonl`` and ``DIR/wav/*.wav`` in the layout of ``shared/speech``; each clip names the recording it was
cut from (``source_id``), which decides whether it is held back (``engine.eval.devsplit``).

Where a sentence lies:
- a recording's ``segment_times`` (recordings joined end to end): each span is a sentence;
- else the reference is split into sentences at ``.``, ``?`` and ``!`` (one sentence if it has none), and its words are
  timed by matching them to timed words: the manifest's ``word_times`` where it has them, else faster-whisper's own
  decode of the whole recording (5 beams, word timestamps). A sentence is cut from its first word's start to its last
  word's end (a word nobody timed: the gap to the neighbouring sentence). A sentence in which the speaker paused
  (``PHRASE_PAUSE_S`` between two timed words) also gives a clip per phrase between its pauses, since the recognizer's
  buffer starts after a pause as often as after a sentence;
- then tightened to the voice-activity detector's speech (frames of probability ≥ 0.5) within a quarter of a second
  of those times, never into the next sentence, with one detector frame (32 ms) kept each side.
A sentence or phrase of fewer than ``MIN_WORDS`` words, shorter than ``MIN_CLIP_S``, or fewer than half of whose words
were matched to a time (its place is a guess) is left out and counted.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.asr.backend import SAMPLE_RATE
from engine.asr.bench import load_manifest
from engine.asr.vad import FRAME, FRAME_S, SileroVad
from engine.asr.words import Word, match_times, normalize_token
from engine.audio.io import load_audio

log = logging.getLogger(__name__)

MIN_WORDS = 2
MIN_CLIP_S = 0.8
MIN_TIMED_SHARE = 0.5
SEARCH_S = 0.25  # speech looked for this far outside a sentence's word times
PHRASE_PAUSE_S = 0.3  # a sentence the speaker paused this long in (the recognizer's pause) is also cut there
SPEECH_PROBABILITY = 0.5
KEEP_FRAMES = 1
ALIGN_BEAMS = 5
# a full stop after one of these (or after a single letter: "T. V.") ends no sentence
ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "no", "mt", "prof", "inc", "co"})
_SENTENCE_END = re.compile(r"[.?!]+[\"'”’)\]]*$")


class ClipError(RuntimeError):
    """The clips cannot be made (no recordings, an unreadable manifest)."""


@dataclass(frozen=True)
class Span:
    """Where a sentence (or a phrase between pauses) lies, and the times a cut of it may not cross (its
    neighbours' words)."""

    text: str
    start_s: float
    end_s: float
    timed: float  # share of its words matched to a time (1.0 for a given span)
    low_s: float
    high_s: float
    kind: str = "sentence"  # or "phrase"


def split_sentences(text: str) -> list[list[str]]:
    """The reference's words, sentence by sentence (raw tokens, punctuation kept)."""
    sentences: list[list[str]] = [[]]
    for token in text.split():
        sentences[-1].append(token)
        if _SENTENCE_END.search(token):
            stem = normalize_token(token)
            if stem in ABBREVIATIONS or (
                len(stem) == 1
                and stem.isalpha()
                and token.rstrip("\"'”’)]").endswith(".")
                and not token.endswith(("?", "!"))
            ):
                continue
            sentences.append([])
    return [s for s in sentences if s]


def sentence_spans(text: str, timed: Sequence[Word], duration_s: float) -> list[Span]:
    """Where each sentence of ``text`` lies, and each phrase of a sentence the speaker paused in (``PHRASE_PAUSE_S``
    between two timed words), from the times of the words matched to it (see the module)."""
    sentences = split_sentences(text)
    tokens = [t for s in sentences for t in s]
    times = match_times(tokens, timed)
    spans, at = [], 0
    for words in sentences:
        spans.append(_spans(tokens, times, at, at + len(words), duration_s))
        if len(words) > 1:
            cuts = [i for i in range(at + 1, at + len(words)) if _pause_before(times, i) >= PHRASE_PAUSE_S]
            if cuts:
                edges = [at, *cuts, at + len(words)]
                pairs = zip(edges, edges[1:], strict=False)
                spans.extend(_spans(tokens, times, i, j, duration_s, "phrase") for i, j in pairs)
        at += len(words)
    return spans


def _pause_before(times: Sequence[Word | None], index: int) -> float:
    """The silence between timed word ``index`` and the one before it (0 when either has no time)."""
    before, word = times[index - 1], times[index]
    return word.start_s - before.end_s if before is not None and word is not None else 0.0


def _spans(
    tokens: Sequence[str], times: Sequence[Word | None], first: int, end: int, duration_s: float, kind: str = "sentence"
) -> Span:
    """Tokens ``first``..``end`` as a span: a first (last) word nobody timed reaches back (on) to the timed word
    before (after) it."""
    before = next((w.end_s for w in reversed(times[:first]) if w is not None), 0.0)
    after = next((w.start_s for w in times[end:] if w is not None), duration_s)
    own = times[first:end]
    start = own[0].start_s if own[0] is not None else before
    stop = own[-1].end_s if own[-1] is not None else after
    share = sum(w is not None for w in own) / len(own)
    return Span(" ".join(tokens[first:end]), start, stop, share, before, after, kind)


def tighten(span: Span, probabilities: np.ndarray) -> tuple[float, float] | None:
    """The span cut to the detector's speech near it (``SEARCH_S``), not into its neighbours; None where the
    detector heard no speech in it."""
    lo = max(span.start_s - SEARCH_S, min(span.low_s, span.start_s))
    hi = min(span.end_s + SEARCH_S, max(span.high_s, span.end_s))
    first, last = int(lo / FRAME_S), min(int(np.ceil(hi / FRAME_S)), probabilities.size)
    speech = np.flatnonzero(probabilities[first:last] >= SPEECH_PROBABILITY)
    if not speech.size:
        return None
    start = max((first + int(speech[0]) - KEEP_FRAMES) * FRAME_S, lo)
    end = min((first + int(speech[-1]) + 1 + KEEP_FRAMES) * FRAME_S, hi)
    return start, end


def recording_spans(entry: dict, audio: np.ndarray, stock_words: Callable[[np.ndarray], list[Word]]) -> list[Span]:
    """The sentences (and phrases) of one recording: its ``segment_times``, else its text timed by its
    ``word_times`` or by ``stock_words``."""
    if entry.get("segment_times"):
        return [Span(t, float(a), float(b), 1.0, float(a), float(b)) for t, a, b in entry["segment_times"]]
    timed = (
        [Word(t, float(a), float(b)) for t, a, b in entry["word_times"]]
        if entry.get("word_times")
        else stock_words(audio)
    )
    return sentence_spans(entry["text"], timed, audio.size / SAMPLE_RATE)


def clips_of(spans: Sequence[Span], probabilities: np.ndarray) -> tuple[list[tuple[Span, float, float]], int]:
    """Each span worth a clip with its cut, and how many were left out (too short, untimed, no speech)."""
    clips, left_out = [], 0
    for span in spans:
        cut = tighten(span, probabilities)
        if (
            cut is None
            or span.timed < MIN_TIMED_SHARE
            or len(span.text.split()) < MIN_WORDS
            or cut[1] - cut[0] < MIN_CLIP_S
        ):
            log.debug("left out (%.0f%% timed): %s", 100 * span.timed, span.text)
            left_out += 1
            continue
        clips.append((span, *cut))
    return clips, left_out


def build(manifests: Sequence[Path], out: Path, progress: Callable[[str], None] | None = None) -> dict:
    """Cut the clips of every recording of ``manifests`` into ``out``; returns counts (clips, left out, seconds)."""
    from engine.asr.whisper_backend import WhisperBackend

    entries = [(Path(m).parent.name, e) for m in manifests for e in load_manifest(Path(m))]
    if not entries:
        raise ClipError("no recordings in " + ", ".join(str(m) for m in manifests))
    backend = WhisperBackend()
    vad = SileroVad()
    (out / "wav").mkdir(parents=True, exist_ok=True)
    rows, left_out = [], 0
    for number, (set_name, entry) in enumerate(entries, 1):
        if progress:
            progress(f"{number}/{len(entries)} {entry['id']}")
        audio = load_audio(entry["path"])
        vad.reset()
        probabilities = vad.probabilities(np.concatenate([audio, np.zeros(FRAME, np.float32)]))
        spans = recording_spans(entry, audio, lambda a: backend.stock_words(a, beam_size=ALIGN_BEAMS))
        clips, skipped = clips_of(spans, probabilities)
        left_out += skipped
        for k, (span, start, end) in enumerate(clips):
            clip_id = f"{entry['id']}_s{k:02d}"
            samples = audio[int(round(start * SAMPLE_RATE)) : int(round(end * SAMPLE_RATE))]
            sf.write(out / "wav" / f"{clip_id}.wav", samples, SAMPLE_RATE, subtype="PCM_16")
            rows.append(
                {
                    "id": clip_id,
                    "wav": f"wav/{clip_id}.wav",
                    "text": span.text,
                    "kind": span.kind,
                    "duration_s": round(samples.size / SAMPLE_RATE, 3),
                    "source_id": entry["id"],
                    "source_set": set_name,
                    "start_s": round(start, 3),
                    "end_s": round(end, 3),
                    "style": entry.get("style"),
                    "corpus": entry.get("corpus"),
                    "licence": entry.get("licence"),
                    "word_times": None,
                }
            )
    (out / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"clips": len(rows), "left_out": left_out, "audio_s": sum(r["duration_s"] for r in rows)}
