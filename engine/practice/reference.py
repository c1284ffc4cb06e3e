"""The source's words with their times: the reference transcript (a ``.txt`` beside the recording, or the manifest's
text) timed by the recognizer's words, else the recognizer's words themselves.

The times come from the same recognizer as the attempt's even where a manifest has a forced alignment: Whisper's
word ends run later than a forced aligner's by about 0.1 s (on ../shared/speech), and an EVS between a forced-aligned
source word and a Whisper-timed attempt word would carry that difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jiwer

from engine.asr.transcribe import manifest_entry
from engine.asr.words import Word
from engine.practice.align import Unit, units


def text_beside(wav: Path, suffix: str) -> str | None:
    """The text of the file beside the recording with this suffix in place of its own, None if none or empty."""
    beside = wav.with_suffix(suffix)
    text = beside.read_text(encoding="utf-8").strip() if beside.is_file() else ""
    return text or None


def reference_text(wav: Path, entry: dict | None) -> tuple[str | None, str]:
    """The source's reference transcript and where it came from ("" when there is none)."""
    text = text_beside(wav, ".txt")
    if text:
        return text, str(wav.with_suffix(".txt"))
    if entry and entry.get("text"):
        return str(entry["text"]), "manifest"
    return None, ""


def timed_reference(text: str, recognized: Sequence[Word], language: str | None = "en") -> list[Word]:
    """The reference's words (as ``units``: "cold-hearted" is "cold" and "hearted"), each timed by the recognized
    unit it aligns with; one the recognizer missed shares the time between its timed neighbours."""
    reference = units([Word(t, 0.0, 0.0) for t in text.split()], language)
    heard = units(recognized, language)
    times: list[tuple[float, float] | None] = [None] * len(reference)
    if reference and heard:
        out = jiwer.process_words(" ".join(u.key for u in reference), " ".join(u.key for u in heard))
        for chunk in out.alignments[0]:
            if chunk.type in ("equal", "substitute"):
                for k in range(chunk.ref_end_idx - chunk.ref_start_idx):
                    u = heard[chunk.hyp_start_idx + k]
                    times[chunk.ref_start_idx + k] = (u.start_s, u.end_s)
    return [Word(u.text, s, e) for u, (s, e) in zip(reference, _fill(times, heard), strict=True)]


def _fill(times: list[tuple[float, float] | None], heard: Sequence[Unit]) -> list[tuple[float, float]]:
    """Untimed runs spread evenly between the timed words around them."""
    end = heard[-1].end_s if heard else 0.0
    out: list[tuple[float, float]] = []
    i = 0
    while i < len(times):
        if times[i] is not None:
            out.append(times[i])  # type: ignore[arg-type]
            i += 1
            continue
        j = i
        while j < len(times) and times[j] is None:
            j += 1
        lo = out[-1][1] if out else (heard[0].start_s if heard else 0.0)
        hi = times[j][0] if j < len(times) else max(end, lo)  # type: ignore[index]
        step = max(hi - lo, 0.0) / (j - i)
        out.extend((lo + k * step, lo + (k + 1) * step) for k in range(j - i))
        i = j
    return out


def source_words(wav: Path, recognized: Sequence[Word], language: str | None) -> tuple[list[Word], str]:
    """The source's timed words and where they came from. A reference is used for English only when it is in the
    recording's language: a manifest's ``text`` for another language's recording is its English translation."""
    entry = manifest_entry(wav)
    text, origin = reference_text(wav, entry)
    entry_language = (entry or {}).get("lang") or "en"
    if text and (origin != "manifest" or entry_language == (language or "en")):
        return timed_reference(text, recognized, language), f"reference transcript ({origin}), timed by the recognizer"
    return list(recognized), "the recognizer"
