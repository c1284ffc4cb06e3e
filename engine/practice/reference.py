"""The source's words with their times: the reference transcript (a ``.txt``, ``.srt`` or ``.vtt`` beside the
recording, or the manifest's text) timed by the recognizer's words, else the recognizer's words themselves.

The times come from the same recognizer as the attempt's even where a manifest has a forced alignment: Whisper's
word ends run later than a forced aligner's by about 0.1 s (on ../shared/speech), and an EVS between a forced-aligned
source word and a Whisper-timed attempt word would carry that difference.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

import jiwer
import srt
import webvtt

from engine.asr.transcribe import manifest_entry
from engine.asr.words import Word
from engine.practice.align import Unit, units

log = logging.getLogger(__name__)


def text_beside(wav: Path, suffix: str) -> str | None:
    """The text of the file beside the recording with this suffix in place of its own, None if none or empty."""
    beside = wav.with_suffix(suffix)
    text = beside.read_text(encoding="utf-8").strip() if beside.is_file() else ""
    return text or None


TRANSCRIPT_SUFFIXES = (".txt", ".srt", ".vtt")  # looked for in this order
_TAG = re.compile(r"<[^>]*>|\{\\[^}]*\}")  # <i>, <c.yellow>, <00:01.000>, {\an8}


def _subtitle_text(cues: list[str]) -> str:
    """Subtitles' words in order: tags and line breaks gone, a line repeated as the next cue's first line (the
    rolling captions of video sites) said once."""
    words: list[str] = []
    for cue in cues:
        for line in _TAG.sub("", cue).splitlines():
            line = " ".join(line.split())
            if line and (not words or line != words[-1]):
                words.append(line)
    return " ".join(words)


def transcript_beside(media: Path) -> tuple[str, Path] | None:
    """The transcript beside an audio or video file: ``talk.txt``, else subtitles ``talk.srt`` or ``talk.vtt`` as
    their words; None when there is none, or none readable (logged)."""
    for suffix in TRANSCRIPT_SUFFIXES:
        path = media.with_suffix(suffix)
        if not path.is_file():
            continue
        try:
            if suffix == ".txt":
                text = text_beside(media, suffix) or ""
            elif suffix == ".srt":
                text = _subtitle_text([c.content for c in srt.parse(path.read_text(encoding="utf-8-sig"))])
            else:
                text = _subtitle_text([c.text for c in webvtt.read(str(path)).captions])
        except (OSError, UnicodeDecodeError, srt.SRTParseError, webvtt.errors.MalformedFileError) as exc:
            log.warning("cannot read the transcript %s: %s", path, exc)
            continue
        if text:
            return text, path
    return None


def reference_text(wav: Path, entry: dict | None) -> tuple[str | None, str]:
    """The source's reference transcript and where it came from ("" when there is none)."""
    beside = transcript_beside(wav)
    if beside:
        return beside[0], str(beside[1])
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
