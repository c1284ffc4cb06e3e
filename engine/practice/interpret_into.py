"""Interpreting practice into a language other than English (``--into es``): the person's rendering recognized with
Whisper base transcribing that language, timed per sentence of the source, and scored by chrF against a reference
translation in that language when one lies beside the source (``talk.es.txt`` beside ``talk.mp3``).

Whisper translates into English only, so no text in the person's language is timed on the source, and no word of
theirs is aligned with one: a sentence's rendering is found in time instead. The person's words are cut into
renderings at their own sentence ends (Whisper writes the punctuation) and pauses; the
source's sentences (its own words, recognized in its language) are matched with them in order by length, as
sentences are aligned with their translation (``sentence_renderings``). The lag is then, as into English, from the
sentence's end to the end of its rendering. It assumes what interpreters do: the sentences rendered in order, each
ending after its sentence; a rendering far longer or shorter than its sentence may be matched with a neighbour, and
two run together with neither a full stop nor a pause between them count as one.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.asr.backend import AsrBackend, AsrError
from engine.asr.offline import transcribe_long
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.metrics import machine_info
from engine.metrics.aggregate import aggregate
from engine.practice.attempt import SAMPLE_RATE, load_recognizer
from engine.practice.interpreting import CHRF, SENTENCE_ENDS, SENTENCE_LAG_S, attempt_chrf
from engine.practice.reference import text_beside
from engine.practice.sentences import cut_at_ends

log = logging.getLogger(__name__)

RENDERING_PAUSE_S = 0.8  # a pause this long in the person's speech ends a rendering (as a full stop does)
MAX_PIECES = 3  # a sentence is rendered in at most this many of the person's sentences
UNMATCHED_COST = 1.5  # a sentence not rendered, or a rendering of none: as costly as a length e^1.5 = 4.5x off
ANTICIPATION_S = 0.5  # a rendering may end this much before its sentence (an interpreter completing it)
TAIL_S = 0.5  # the person's recording is recognized up to this long after their last speech


def reference_in(source: Path, into: str) -> str | None:
    """The reference translation into ``into`` beside the source (``talk.es.txt``), None if none."""
    return text_beside(source, f".{into}.txt")


def renderings(said: Sequence[Word]) -> list[list[Word]]:
    """The person's words cut at their sentence ends (Whisper's punctuation) and at their pauses of
    ``RENDERING_PAUSE_S`` (a pause within a sentence is common when interpreting: the matching puts the pieces of one
    rendering back together)."""
    out: list[list[Word]] = []
    for i, word in enumerate(said):
        if (
            i == 0
            or said[i - 1].text.rstrip().endswith(SENTENCE_ENDS)
            or (word.start_s - said[i - 1].end_s >= RENDERING_PAUSE_S)
        ):
            out.append([])
        out[-1].append(word)
    return out


def rendered_words(recognizer: AsrBackend, audio: np.ndarray) -> list[Word]:
    """The person's words, recognized up to ``TAIL_S`` after their last speech (silero's VAD): Whisper stretches a
    recording's last word into the silence after it and writes more there (a kept recording's 4 s tail made
    "sacapuntas." end 2 s late and gave a "y" after it)."""
    from engine.asr.vad import SileroVad, speech_span

    span = speech_span(audio, SileroVad())
    if span is None:
        return []
    last = span[1] / SAMPLE_RATE
    said = transcribe_long(recognizer, audio[: int((last + TAIL_S) * SAMPLE_RATE)])
    return [w for w in said if w.start_s < last]


def _length(words: Sequence[Word]) -> int:
    return sum(len(w.text.strip(".,;:!?¿¡")) for w in words) or 1


def sentence_renderings(source: Sequence[Sequence[Word]], said: Sequence[Word]) -> list[dict]:
    """Per source sentence (its words): the rendering found for it, its end and the lag (None: not rendered).

    The person's renderings are matched to the sentences in order as Gale and Church align a text with its
    translation, by length: a sentence takes the one to ``MAX_PIECES`` renderings in a row whose length (characters)
    is nearest its own times the attempt's overall ratio, or none; a rendering the person added belongs to none.
    In time, a sentence's rendering must end after the sentence does (less ``ANTICIPATION_S``)."""
    pieces = renderings(said)
    n, m = len(source), len(pieces)
    ratio = sum(_length(p) for p in pieces) / max(sum(_length(s) for s in source), 1)
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    back: list[list[tuple[int, int] | None]] = [[None] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(n + 1):
        for j in range(m + 1):
            here = cost[i][j]
            if here == inf:
                continue
            if j < m and here + UNMATCHED_COST < cost[i][j + 1]:  # a rendering of no sentence
                cost[i][j + 1], back[i][j + 1] = here + UNMATCHED_COST, (i, j)
            if i == n:
                continue
            if here + UNMATCHED_COST < cost[i + 1][j]:  # a sentence not rendered
                cost[i + 1][j], back[i + 1][j] = here + UNMATCHED_COST, (i, j)
            for k in range(1, min(MAX_PIECES, m - j) + 1):
                group = [w for p in pieces[j : j + k] for w in p]
                if group[-1].end_s < source[i][-1].end_s - ANTICIPATION_S:
                    continue
                c = here + abs(math.log(_length(group) / (_length(source[i]) * ratio)))
                if c < cost[i + 1][j + k]:
                    cost[i + 1][j + k], back[i + 1][j + k] = c, (i, j)
    rendered: list[list[Word]] = [[] for _ in range(n)]
    i, j = n, m
    while (i, j) != (0, 0):
        step = back[i][j]
        assert step is not None
        if step[0] == i - 1 and step[1] < j:
            rendered[i - 1] = [w for p in pieces[step[1] : j] for w in p]
        i, j = step
    rows = []
    for sentence, words in zip(source, rendered, strict=True):
        end = sentence[-1].end_s
        rows.append(
            {
                "source_end_s": end,
                "rendered_end_s": words[-1].end_s if words else None,
                "lag_s": words[-1].end_s - end if words else None,
                "rendering": " ".join(w.text for w in words),
            }
        )
    return rows


def source_sentences(words: Sequence[Word]) -> list[list[Word]]:
    """The source's words in sentences, cut where one ends a sentence (its last word always does)."""
    return cut_at_ends(words, SENTENCE_ENDS)


def score_into(source_words: Sequence[Word], said: Sequence[Word], into: str, reference: str | None) -> dict:
    """The person's words in ``into`` (on the source's clock) against the source's own timed words."""
    lags = sentence_renderings(source_sentences(source_words), said)
    measured = [s["lag_s"] for s in lags if s["lag_s"] is not None]
    attempt_text = " ".join(w.text for w in said)
    return {
        SENTENCE_LAG_S: {"per_sentence": lags, **aggregate(measured)},
        CHRF: attempt_chrf(reference, attempt_text) if reference else None,
        "chrf_against": f"the reference translation ({into})" if reference else None,
        "chrf_note": None if reference else f"no reference translation in {into} beside the source: no quality figure",
        "sentences": len(lags),
        "sentences_said": len(measured),
        "task": "interpret",
        "into": into,
        "source_text": " ".join(w.text for w in source_words),
        "reference_text": reference,
        "attempt_text": attempt_text,
        "machine": machine_info(),
    }


def interpret_into_file(
    source: Path,
    attempt: Path,
    into: str,
    language: str | None = "en",
    offset_s: float = 0.0,
    source_recognizer: AsrBackend | None = None,
    person_recognizer: AsrBackend | None = None,
) -> dict:
    """The report of one recorded attempt at interpreting ``source`` (in ``language``) into ``into``."""
    if into == "en":
        raise ValueError("into English is the interpreting practice itself (no --into)")
    source_audio, attempt_audio = load_audio(source), load_audio(attempt)
    if not attempt_audio.size:
        raise AsrError(f"{attempt} holds no audio")
    t0 = time.perf_counter()
    source_recognizer = source_recognizer or load_recognizer(language or "en")
    person_recognizer = person_recognizer or load_recognizer(into)
    heard = transcribe_long(source_recognizer, source_audio)
    said = [
        Word(w.text, w.start_s + offset_s, w.end_s + offset_s) for w in rendered_words(person_recognizer, attempt_audio)
    ]
    report = score_into(heard, said, into, reference_in(source, into))
    report.update(
        {
            "command": "practice",
            "source": str(source),
            "attempt": str(attempt),
            "language": language,
            "offset_s": offset_s,
            "source_s": source_audio.size / SAMPLE_RATE,
            "attempt_s": attempt_audio.size / SAMPLE_RATE,
            "recognizer_compute_s": time.perf_counter() - t0,
        }
    )
    log.info(
        "scored an interpreting attempt into %s: %d of %d sentences rendered",
        into,
        report["sentences_said"],
        report["sentences"],
    )
    return report
