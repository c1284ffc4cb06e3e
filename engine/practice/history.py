"""Past practice attempts, per source: one JSON line per scored attempt in the data folder, so progress on a source
(EVS and accuracy over time) can be shown. The source is known by its content's hash: a recording moved or renamed
keeps its history. A broken line (a crash mid-write) is skipped, never fatal."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from engine import paths
from engine.hashing import file_sha256

log = logging.getLogger(__name__)

HISTORY_FILE = "practice.jsonl"
MAX_ENTRIES = 10_000  # older attempts are dropped past this many (the file stays small)


def history_path() -> Path:
    return paths.data_dir() / HISTORY_FILE


def attempt_dir() -> Path:
    """A new folder for one live attempt's recordings and report, under the data folder's ``practice``."""
    from datetime import datetime

    from engine.pipeline.history import FOLDER_TIME

    return paths.data_dir() / "practice" / datetime.now().strftime(FOLDER_TIME)


def summary_of(report: dict) -> dict:
    """The figures of an attempt kept in the history (not its words)."""
    keys = ("accuracy", "missed_words", "added_words", "substituted_words", "rate_ratio", "longest_lost_s", "chrf")
    entry = {k: report[k] for k in keys if k in report}
    evs = report.get("evs_s") or {}
    lag = report.get("sentence_lag_s") or {}
    if report.get("mode") == "sentence by sentence":  # repeated after each sentence: how soon, not an EVS
        evs = {}
        entry["started_after_median_s"] = (report.get("started_after_s") or {}).get("median")
    entry.update(
        mode=report.get("mode"),
        evs_median_s=evs.get("median"),
        evs_p90_s=evs.get("p90"),
        sentence_lag_median_s=lag.get("median"),
        task=report.get("task", "shadow"),
        language=report.get("language"),
        speed=report.get("speed", 1.0),
    )
    return {k: v for k, v in entry.items() if v is not None}


def record(report: dict, source: Path, path: Path | None = None, now: float | None = None) -> dict:
    """Append the attempt's summary to the history; returns the entry."""
    path = path or history_path()
    entry = {
        "at": now if now is not None else time.time(),
        "source": str(source),
        "source_sha256": file_sha256(source),
        **summary_of(report),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        cut_short = False  # the last line was cut short (a crash mid-write): this one starts on a line of its own
        if handle.seek(0, 2) > 0:
            handle.seek(-1, 2)
            cut_short = handle.read(1) != b"\n"
        handle.write((("\n" if cut_short else "") + json.dumps(entry) + "\n").encode("utf-8"))
    _trim(path)
    return entry


def attempts(source: Path, path: Path | None = None) -> list[dict]:
    """The recorded attempts at this source (by content), oldest first."""
    digest = file_sha256(source)
    return [e for e in _read(path or history_path()) if e.get("source_sha256") == digest]


def _read(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            log.warning("practice history %s: line %d is broken; skipped", path, number)
    return entries


def _trim(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) > MAX_ENTRIES:
        path.write_text("\n".join(lines[-MAX_ENTRIES:]) + "\n", encoding="utf-8")
