"""The TTS benchmark on a reduced sentence set: every figure present, policies compared in one run."""

from __future__ import annotations

import json

import pytest

from engine.metrics import names as m
from engine.tts import bench

pytestmark = pytest.mark.slow


def test_bench_reports_every_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        bench,
        "SENTENCES",
        {
            "short": ("Please close the door.",),
            "medium": ("The old bridge over the river was closed for repairs during the whole summer.",),
            "long": ("When the interpreters reached the hall, the speaker had begun, so they sat down and started.",),
        },
    )
    report = bench.run_bench(policies=("full", "naive", "lookahead-1"))
    assert report["bench"] == "tts" and report["machine"]["cores"] >= 1
    results = report["results"]
    assert set(results) == {"full", "naive", "lookahead-1"}
    for figures in results.values():
        for name in (m.FIRST_AUDIO_S, m.COMPUTE_RATIO, m.TIME_BALANCE, m.WORD_DISTANCE_DB, m.SEAM_SNR_DB):
            assert name in figures
    la = results["lookahead-1"]
    assert la[m.TIME_BALANCE]["n"] > 0 and la["full_over_this_first_audio_long"] > 1
    assert la[m.WORD_DISTANCE_DB]["mean"] < results["naive"][m.WORD_DISTANCE_DB]["mean"]
    assert results["full"][m.WORD_DISTANCE_DB]["mean"] == 0.0
    assert report["calibration"]["full_other_seed_word_distance_db"]["mean"] > 0
    table = bench.format_table(report)
    assert "lookahead-1" in table and "noise seed" in table
    from engine.cli.common import finite as _finite

    json.dumps(_finite(report), allow_nan=False)
