"""A scored attempt as the files trainers and EVS researchers annotate in: a Praat TextGrid, an ELAN ``.eaf`` with
the two recordings linked, and a CSV with one row per source word.

The tiers (every time on the source's clock, as in the report): ``source`` (the source's words), ``attempt`` (the
person's words), ``mark`` (each source word said, substituted or missed; a word the person added, on its own time),
``evs`` (a point at each said source word's end, labelled with its EVS in seconds) and, when the machine shadowed
the same source as pace-setter, ``liveshadow`` (its words as its voice played them). The TextGrid is written with
praatio and the EAF with pympi-ling, so Praat and ELAN read them as their own.
"""

from __future__ import annotations

import csv
import logging
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SAMPLE_RATE = 16000

MACHINE_TIER = "liveshadow"
CSV_COLUMNS = (
    "source_word",
    "source_start_s",
    "source_end_s",
    "mark",
    "attempt_word",
    "attempt_start_s",
    "attempt_end_s",
    "evs_s",
)
MIN_INTERVAL_S = 0.001  # an interval shorter than this (two words Whisper timed alike) is left out of a tier


@dataclass(frozen=True)
class Span:
    start_s: float
    end_s: float
    label: str


def _intervals(spans: Sequence[Span]) -> list[Span]:
    """Spans in time order, none overlapping the one before it (an interval tier's rule): a word that starts before
    the previous one ended starts at that end."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start_s, s.end_s)):
        start = max(span.start_s, out[-1].end_s if out else 0.0, 0.0)
        if span.end_s - start >= MIN_INTERVAL_S:
            out.append(Span(start, span.end_s, span.label))
    return out


def tiers(report: dict, machine_words: Sequence[dict] | None = None) -> dict[str, list[Span]]:
    """The export's tiers from a practice report (``score.PracticeScore.report`` keys); ``evs`` holds points
    (``start_s == end_s``). ``machine_words``: the pace-setter's spoken words (``text``, ``speak_start_s``,
    ``speak_end_s`` on the source clock: ``pace_setter.PaceSetter.words``)."""
    words = report.get("words") or []
    source, attempt, marks, evs = [], [], [], []
    for w in words:
        has_source = w.get("source") is not None and w.get("source_start_s") is not None
        has_attempt = w.get("attempt") is not None and w.get("attempt_end_s") is not None
        a_start = w.get("attempt_start_s", w.get("attempt_end_s"))
        if has_source:
            source.append(Span(w["source_start_s"], w["source_end_s"], w["source"]))
            marks.append(Span(w["source_start_s"], w["source_end_s"], w["mark"]))
        elif has_attempt:
            marks.append(Span(a_start, w["attempt_end_s"], w["mark"]))
        if has_attempt:
            attempt.append(Span(a_start, w["attempt_end_s"], w["attempt"]))
        if w.get("evs_s") is not None and has_source:
            evs.append(Span(w["source_end_s"], w["source_end_s"], f"{w['evs_s']:.3f}"))
    out = {"source": _intervals(source), "attempt": _intervals(attempt), "mark": _intervals(marks), "evs": evs}
    if machine_words:
        out[MACHINE_TIER] = _intervals(
            [
                Span(w["speak_start_s"], w["speak_end_s"], w["text"])
                for w in machine_words
                if w.get("speak_start_s") is not None
            ]
        )
    return out


def _end_s(all_tiers: dict[str, list[Span]], duration_s: float | None) -> float:
    last = max((s.end_s for spans in all_tiers.values() for s in spans), default=0.0)
    return max(last + 0.01, duration_s or 0.0)


def write_textgrid(path: Path, all_tiers: dict[str, list[Span]], duration_s: float | None = None) -> Path:
    from praatio import textgrid
    from praatio.utilities.constants import Interval, Point

    end = _end_s(all_tiers, duration_s)
    grid = textgrid.Textgrid()
    for name, spans in all_tiers.items():
        if name == "evs":
            grid.addTier(textgrid.PointTier(name, [Point(s.start_s, s.label) for s in spans], 0.0, end))
        else:
            grid.addTier(textgrid.IntervalTier(name, [Interval(s.start_s, s.end_s, s.label) for s in spans], 0.0, end))
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)
    return path


def write_eaf(path: Path, all_tiers: dict[str, list[Span]], media: Sequence[Path]) -> Path:
    """ELAN's annotations are spans of whole milliseconds: an EVS point is a 1 ms span at the word's end."""
    import pympi

    eaf = pympi.Elan.Eaf(author="liveshadow")
    eaf.remove_tier("default")
    for name, spans in all_tiers.items():
        eaf.add_tier(name)
        last = -1
        for s in spans:
            start = max(round(s.start_s * 1000), last)
            end = max(round(s.end_s * 1000), start + 1)
            eaf.add_annotation(name, start, end, s.label)
            last = end
    for file in media:
        mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        eaf.add_linked_file(file.resolve().as_uri(), relpath=file.name, mimetype=mime)
    eaf.to_file(str(path))
    return path


def write_csv(path: Path, report: dict) -> Path:
    """One row per source word (and per word the person added), in the report's order."""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for w in report.get("words") or []:
            writer.writerow(
                [
                    w.get("source") or "",
                    _num(w.get("source_start_s")),
                    _num(w.get("source_end_s")),
                    w.get("mark") or "",
                    w.get("attempt") or "",
                    _num(w.get("attempt_start_s")),
                    _num(w.get("attempt_end_s")),
                    _num(w.get("evs_s")),
                ]
            )
    return path


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def played_source(source: Path, speed: float, folder: Path) -> Path:
    """The source as the tiers' times have it: itself at 1x, else a WAV of it as played at ``speed``, written into
    ``folder`` beside the export (the annotation tools play the linked file on the tiers' clock)."""
    if speed == 1.0:
        return source
    from engine.audio.stretch import write_stretched

    folder.mkdir(parents=True, exist_ok=True)
    return write_stretched(source, speed, folder / f"{source.stem}-{speed:g}x.wav", SAMPLE_RATE)


def export(
    report: dict,
    folder: Path,
    media: Sequence[Path] = (),
    machine_words: Sequence[dict] | None = None,
    duration_s: float | None = None,
    stem: str | None = None,
) -> list[Path]:
    """The TextGrid, the EAF (``media`` linked: the source, the attempt) and the CSV of ``report`` in ``folder``
    (made if missing), named after the source; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = stem or Path(str(report.get("source") or "practice")).stem or "practice"
    all_tiers = tiers(report, machine_words)
    written = [
        write_textgrid(folder / f"{stem}.TextGrid", all_tiers, duration_s),
        write_eaf(folder / f"{stem}.eaf", all_tiers, [m for m in media if m]),
        write_csv(folder / f"{stem}.csv", report),
    ]
    log.info("exported %s to %s", stem, folder)
    return written


def export_attempt(report: dict, folder: Path, source: Path) -> list[Path]:
    """A scored attempt's export, its recordings linked as they played: the source as played (slowed, sentence by
    sentence or looped: the copy the live session kept, or one stretched here), the attempt, liveshadow's own
    rendering as a tier when the pace-setter ran."""
    played = report.get("played_source")
    media = [Path(played) if played else played_source(source, report.get("speed", 1.0), folder)]
    media += [Path(report[k]) for k in ("attempt", "recording") if report.get(k)]
    return export(report, folder, media, machine_words=report.get("machine_words"))
