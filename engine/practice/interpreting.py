"""Interpreting practice: the source in another language, the person speaking English. No word of the two aligns
across languages, so the person's English is aligned with an English text of the source timed on the source: the
reference translation (the manifest's ``translation``, or a ``.en.txt`` beside the recording) timed by Whisper base's
own translation of the source, else that translation itself (marked as such).

Per sentence of the source (its English text cut where the translation ends a sentence), the lag runs from the
sentence's end to the end of the last word the person said for it; chrF compares all the person's words with the
English text. Whisper base translating sound heard live sometimes leaves out the source's last words: the last
sentence then ends where the voice-activity detector hears the speech end, and the person's words after the last
one that matched are theirs for it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.asr.backend import AsrBackend, AsrError
from engine.asr.offline import transcribe_long
from engine.asr.transcribe import manifest_entry
from engine.asr.vad import SileroVad, speech_span
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.metrics import machine_info
from engine.metrics.aggregate import aggregate
from engine.metrics.translation import chrf
from engine.practice.attempt import MAX_TOKENS, SAMPLE_RATE, load_recognizer
from engine.practice.reference import text_beside, timed_reference
from engine.practice.score import PracticeScore, score

log = logging.getLogger(__name__)

SENTENCE_ENDS = (".", "?", "!", "。", "？", "！")


@dataclass(frozen=True)
class EnglishTarget:
    words: list[Word]  # the English text, timed on the source
    translated: list[Word]  # Whisper base's translation of the source (its sentence ends cut the sentences)
    origin: str  # "reference translation" or "liveshadow's own translation"
    reference: str | None
    speech_end_s: float | None = None  # where the voice-activity detector hears the source's speech end

    def moved(self, offset_s: float = 0.0, speed: float = 1.0) -> EnglishTarget:
        """Every time moved onto another clock: ``(t + offset_s) / speed``."""

        def at(t: float) -> float:
            return (t + offset_s) / speed

        def timed(words: list[Word]) -> list[Word]:
            return [Word(w.text, at(w.start_s), at(w.end_s)) for w in words]

        end = None if self.speech_end_s is None else at(self.speech_end_s)
        return replace(self, words=timed(self.words), translated=timed(self.translated), speech_end_s=end)


SENTENCE_LAG_S = "sentence_lag_s"
CHRF = "chrf"


def load_translator(language: str | None, threads: int = 2) -> AsrBackend:
    """Whisper base translating ``language`` (None: detected) into English."""
    from engine.asr import whisper_base_model
    from engine.asr.whisper_backend import WhisperBackend

    folder = str(whisper_base_model.model_dir())
    return WhisperBackend(folder, threads=threads, language=language, task="translate", max_new_tokens=MAX_TOKENS)


def reference_translation(source: Path) -> str | None:
    beside = text_beside(source, ".en.txt")
    if beside:
        return beside
    entry = manifest_entry(source)
    return str(entry["translation"]) if entry and entry.get("translation") else None


def sentence_ends(translated: Sequence[Word], speech_end_s: float | None = None) -> list[float]:
    """The times the translation ends a sentence (its last word always does; the last sentence lasts at least until
    ``speech_end_s``, when the translation left out the source's last words)."""
    ends = [w.end_s for w in translated if w.text.rstrip().endswith(SENTENCE_ENDS)]
    if translated and (not ends or ends[-1] < translated[-1].end_s):
        ends.append(translated[-1].end_s)
    if ends and speech_end_s is not None and ends[-1] < speech_end_s:
        ends[-1] = speech_end_s
    return ends


def sentence_lags(result: PracticeScore, ends: Sequence[float]) -> list[dict]:
    """Per sentence: its end, the end of the person's last word for it, and the lag (None: nothing said for it).

    The person's words after the last one that matched a word of the text are theirs for the last sentence, which
    nothing follows: their rendering of source words the translation left out matches none."""
    matched = [p.attempt for p in result.pairs if p.source is not None and p.attempt is not None]
    after = [u.end_s for k, u in enumerate(result.attempt) if k > max(matched)] if matched else []
    out = []
    start = float("-inf")
    for number, end in enumerate(ends, 1):
        said = [
            result.attempt[p.attempt].end_s
            for p in result.pairs
            if p.source is not None and p.attempt is not None and start < result.source[p.source].end_s <= end + 1e-6
        ]
        if number == len(ends):
            said += after
        rendered = max(said) if said else None
        out.append(
            {"source_end_s": end, "rendered_end_s": rendered, "lag_s": None if rendered is None else rendered - end}
        )
        start = end
    return out


def english_target(
    source: Path | None, source_audio: np.ndarray, translator: AsrBackend, vad: SileroVad | None = None
) -> EnglishTarget:
    """The English the person's words are aligned with, timed on the source (``source``: its file, where a reference
    translation may lie; None: a source heard live, which has none)."""
    translated = transcribe_long(translator, source_audio)
    span = speech_span(source_audio, vad or SileroVad())
    speech_end_s = None if span is None else span[1] / SAMPLE_RATE
    reference = reference_translation(source) if source is not None else None
    if reference:
        timed = timed_reference(reference, translated, "en")
        return EnglishTarget(timed, translated, "reference translation", reference, speech_end_s)
    return EnglishTarget(list(translated), translated, "liveshadow's own translation", None, speech_end_s)


def score_interpretation(target: EnglishTarget, said: Sequence[Word], offset_s: float = 0.0) -> dict:
    """The person's English words (recognized with times, their recording begun ``offset_s`` after the source)
    against ``target``: per sentence of the source the lag to the end of their words for it, and chrF."""
    result = score(target.words, said, offset_s, "en")
    lags = sentence_lags(result, sentence_ends(target.translated, target.speech_end_s))
    measured = [s["lag_s"] for s in lags if s["lag_s"] is not None]
    attempt_text = " ".join(w.text for w in said)
    english_text = target.reference or " ".join(w.text for w in target.translated)
    return {
        SENTENCE_LAG_S: {"per_sentence": lags, **aggregate(measured)},
        CHRF: attempt_chrf(english_text, attempt_text),
        "chrf_against": target.origin,
        "sentences": len(lags),
        "sentences_said": len(measured),
        "task": "interpret",
        "offset_s": offset_s,
        "english_text": english_text,
        "translation_text": " ".join(w.text for w in target.translated),
        "attempt_text": attempt_text,
        "words": result.report()["words"],  # the English text's words as the person's aligned with them
        "machine": machine_info(),
    }


def interpret_practice_file(
    source: Path,
    attempt: Path,
    language: str | None = None,
    offset_s: float = 0.0,
    translator: AsrBackend | None = None,
    english: AsrBackend | None = None,
) -> dict:
    """The report of one recorded attempt at interpreting ``source`` (in ``language``; None: detected) into English."""
    source_audio, attempt_audio = load_audio(source), load_audio(attempt)
    if not attempt_audio.size:
        raise AsrError(f"{attempt} holds no audio")
    translator = translator if translator is not None else load_translator(language)
    english = english if english is not None else load_recognizer("en")
    t0 = time.perf_counter()
    target = english_target(source, source_audio, translator)
    said = transcribe_long(english, attempt_audio)
    report = score_interpretation(target, said, offset_s)
    report.update(
        {
            "command": "practice",
            "source": str(source),
            "attempt": str(attempt),
            "language": language or getattr(translator, "language", None),
            "source_s": source_audio.size / SAMPLE_RATE,
            "attempt_s": attempt_audio.size / SAMPLE_RATE,
            "recognizer_compute_s": time.perf_counter() - t0,
        }
    )
    log.info(
        "scored an interpreting attempt %s: %d of %d sentences said",
        attempt,
        report["sentences_said"],
        report["sentences"],
    )
    return report


def attempt_chrf(reference: str, attempt: str) -> float | None:
    if not attempt.strip():
        return 0.0
    try:
        return chrf([reference], [attempt])
    except ImportError as exc:  # the packaged app leaves sacrebleu out
        log.warning("chrF not computed (%s)", exc)
        return None
