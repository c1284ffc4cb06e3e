"""A fifth of every development set held back by a hash of the recording's id: levers are chosen on the rest
(``choose``) and confirmed on that fifth (``confirm``), never chosen on it. A sentence clip goes with the recording
it was cut from (``source_id``), so no part of a held-back recording is chosen on."""

from __future__ import annotations

from collections.abc import Sequence

from engine.hashing import id_fifth

PARTS = ("all", "choose", "confirm")
HELD_BACK_FIFTH = 0


def recording_of(entry: dict) -> str:
    return str(entry.get("source_id") or entry["id"])


def held_back(entry: dict) -> bool:
    return id_fifth(recording_of(entry)) == HELD_BACK_FIFTH


def select(entries: Sequence[dict], part: str) -> list[dict]:
    """The entries of ``part``: all of them, those to choose on, or the held-back fifth."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r} ({', '.join(PARTS)})")
    if part == "all":
        return list(entries)
    return [e for e in entries if held_back(e) == (part == "confirm")]
