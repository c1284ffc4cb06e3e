"""A scored attempt exported for Praat, ELAN and a spreadsheet, read back with the libraries that read them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engine.practice.export import CSV_COLUMNS, export

REPORT = {
    "source": "/data/talk.mp3",
    "words": [
        {
            "mark": "said",
            "source": "good",
            "attempt": "good",
            "source_start_s": 0.2,
            "source_end_s": 0.5,
            "attempt_start_s": 0.9,
            "attempt_end_s": 1.3,
            "evs_s": 0.8,
        },
        {
            "mark": "substituted",
            "source": "morning",
            "attempt": "mourning",
            "source_start_s": 0.5,
            "source_end_s": 1.0,
            "attempt_start_s": 1.25,
            "attempt_end_s": 1.8,
            "evs_s": 0.8,
        },
        {
            "mark": "missed",
            "source": "everyone",
            "attempt": None,
            "source_start_s": 1.1,
            "source_end_s": 1.6,
            "attempt_start_s": None,
            "attempt_end_s": None,
            "evs_s": None,
        },
        {
            "mark": "added",
            "source": None,
            "attempt": "um",
            "source_start_s": None,
            "source_end_s": None,
            "attempt_start_s": 2.0,
            "attempt_end_s": 2.2,
            "evs_s": None,
        },
    ],
}


def test_the_textgrid_eaf_and_csv_hold_the_reports_tiers_and_times(tmp_path: Path) -> None:
    import pympi
    from praatio import textgrid

    media = [tmp_path / "talk.mp3", tmp_path / "attempt.wav"]
    written = export(REPORT, tmp_path / "out", media)
    assert [p.name for p in written] == ["talk.TextGrid", "talk.eaf", "talk.csv"]
    grid = textgrid.openTextgrid(str(written[0]), includeEmptyIntervals=False)
    assert grid.tierNames == ("source", "attempt", "mark", "evs")
    assert [(e.start, e.end, e.label) for e in grid.getTier("source").entries] == [
        (0.2, 0.5, "good"),
        (0.5, 1.0, "morning"),
        (1.1, 1.6, "everyone"),
    ]
    # the person's words overlapped by 0.05 s: the second starts where the first ended
    assert [(e.start, e.end, e.label) for e in grid.getTier("attempt").entries] == [
        (0.9, 1.3, "good"),
        (1.3, 1.8, "mourning"),
        (2.0, 2.2, "um"),
    ]
    assert [e.label for e in grid.getTier("mark").entries] == ["said", "substituted", "missed", "added"]
    assert [(e.time, e.label) for e in grid.getTier("evs").entries] == [(0.5, "0.800"), (1.0, "0.800")]
    eaf = pympi.Elan.Eaf(str(written[1]))
    assert set(eaf.get_tier_names()) == {"source", "attempt", "mark", "evs"}
    assert sorted(eaf.get_annotation_data_for_tier("source")) == [
        (200, 500, "good"),
        (500, 1000, "morning"),
        (1100, 1600, "everyone"),
    ]
    assert [(f["RELATIVE_MEDIA_URL"], f["MIME_TYPE"]) for f in eaf.get_linked_files()] == [
        ("talk.mp3", "audio/mpeg"),
        ("attempt.wav", "audio/x-wav"),
    ]
    with written[2].open(encoding="utf-8") as rows:
        table = list(csv.DictReader(rows))
    assert tuple(table[0]) == CSV_COLUMNS and len(table) == 4
    assert table[2]["mark"] == "missed" and table[2]["evs_s"] == "" and float(table[1]["evs_s"]) == pytest.approx(0.8)


def test_the_machines_rendering_is_a_tier_of_its_own(tmp_path: Path) -> None:
    from praatio import textgrid

    machine = [{"text": "good", "speak_start_s": 1.4, "speak_end_s": 1.7}, {"text": "morning", "speak_start_s": None}]
    written = export(REPORT, tmp_path, (), machine_words=machine)
    grid = textgrid.openTextgrid(str(written[0]), includeEmptyIntervals=False)
    assert [(e.start, e.end, e.label) for e in grid.getTier("liveshadow").entries] == [(1.4, 1.7, "good")]
