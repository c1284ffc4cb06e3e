"""The evaluation: every file and field on a two-recording manifest, a short soak, joined input, bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage

from engine.eval.joined import JoinedRecordings
from engine.eval.runner import CSV_FIELDS, run_eval
from engine.eval.soak import run_soak, soak_recordings, translation_scores
from engine.metrics import names as m
from engine.metrics.jsonsafe import json_safe
from engine.pipeline.bench import format_table, run_bench

TWO = ("ls_61-70968-0000", "librivox_ss_0870")  # one without and one with forced-alignment word times
PLOTS = (
    "latency_vs_length.png",
    "time_balance_by_chunk.png",
    "gen_vs_audio_by_chunk.png",
    "wer_vs_latency.png",
    "lag_vs_quality.png",
    "lag_over_time.png",
)
EVAL_FIELDS = (
    m.FIRST_AUDIO_S,
    m.COMPUTE_RATIO,
    m.TIME_BALANCE,
    m.UNDERRUNS,
    m.STARVED_S,
    m.COMMIT_LATENCY_S,
    m.WER_COMMITTED,
    m.WER_OFFLINE,
    m.EAR_VOICE_LAG_S,
    m.CHUNK_DELAY_S,
    m.LAG_DRIFT_S,
    m.WER_SPOKEN,
)


@pytest.fixture
def two_manifest(tmp_path: Path, speech_manifest, speech_dir: Path) -> Path:
    path = tmp_path / "manifest.jsonl"
    lines = [
        json.dumps({**e, "wav": str(speech_dir / e["wav"])}) for name in TWO for e in speech_manifest if e["id"] == name
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_joined_recordings_read_like_one_long_array() -> None:
    a, b = np.arange(1, 6, dtype=np.float32), -np.arange(1, 4, dtype=np.float32)
    joined = JoinedRecordings([a, b], total_s=30 / 16000, pause_s=2 / 16000)
    whole = np.tile(np.concatenate([a, [0, 0], b, [0, 0]]), 3)[:30].astype(np.float32)
    assert joined.size == 30
    rng = np.random.default_rng(0)
    for _ in range(50):
        lo, hi = sorted(rng.integers(0, 31, 2))
        assert np.array_equal(joined[lo:hi], whole[lo:hi])


def test_joined_recordings_say_which_play_a_moment_belongs_to() -> None:
    """Plays of a recording, counted over the repeats, each with the pause after it; a play whose recording is cut
    off by the end of the input is not among those heard to their end."""
    rate = 16000
    a, b = np.ones(3 * rate, np.float32), np.ones(2 * rate, np.float32)
    joined = JoinedRecordings([a, b], total_s=12.5, pause_s=1.0)  # a 0–4, b 4–7, a 7–11, b 11–14 (cut at 12.5)
    assert joined.recordings == 2
    assert [joined.played(t) for t in (0.0, 2.9, 3.5, 4.0, 6.99, 7.0, 12.0, 12.5, 99.0)] == [0, 0, 0, 1, 1, 2, 3, 3, 3]
    assert joined.plays() == [(0, 0.0, 4.0), (1, 4.0, 7.0), (0, 7.0, 11.0)]
    # cut in the pause after b's second play: its speech was heard to the end
    assert JoinedRecordings([a, b], total_s=13.5, pause_s=1.0).plays()[-1] == (1, 11.0, 14.0)
    with pytest.raises(ValueError, match="empty"):
        JoinedRecordings([np.zeros(0, np.float32)], total_s=1.0, pause_s=0.0)


def test_a_soak_interprets_one_language_of_a_translation_manifest() -> None:
    english = [{"id": "a", "path": "a.wav", "text": "hello"}]
    xx = [{"id": f"{lang}{n}", "lang": lang, "translation": "hi"} for lang in ("es", "fr") for n in range(2)]
    assert soak_recordings(english, None) == (english, None)  # shadowing
    assert soak_recordings(english, "es") == (english, "es")  # the user's own Spanish recordings, unscored
    assert soak_recordings(xx, "fr") == (xx[2:], "fr")
    assert soak_recordings(xx[:2], None) == (xx[:2], "es")  # the only language it holds
    with pytest.raises(ValueError, match="holds recordings in es, fr.*--translate-from"):
        soak_recordings(xx, None)
    with pytest.raises(ValueError, match="one language"):
        soak_recordings(xx, "auto")
    with pytest.raises(ValueError, match="no recordings in 'de'.*es, fr"):
        soak_recordings(xx, "de")


def test_an_interpreting_soak_scores_each_pass_over_its_recordings() -> None:
    """Two recordings played 2.5 times: 5 plays heard to their end, 2 whole passes; the second pass's words are
    worse, and its BLEU shows it."""
    rate = 16000
    source = JoinedRecordings([np.ones(rate, np.float32), np.ones(rate, np.float32)], total_s=10.0, pause_s=1.0)
    entries = [{"translation": "the cat sat on the mat today"}, {"translation": "a dog ran in the park at noon"}]
    committed = {
        0: "the cat sat on the mat today".split(),
        1: "a dog ran in the park at noon".split(),
        2: "the cat sat".split(),
        3: "a dog ran in the".split(),
        4: ["cat"],
    }
    scores = translation_scores(source, committed, entries)
    assert scores["recordings_scored"] == 5 and [p["from_s"] for p in scores["bleu_by_pass"]] == [0.0, 4.0]
    first, second = (p[m.BLEU] for p in scores["bleu_by_pass"])
    assert first == pytest.approx(100) and 0 < second < 60 and first > scores[m.BLEU] > second
    assert scores["bleu_by_pass"][1]["to_s"] == 8.0 and 0 < scores[m.CHRF] < 100
    assert [p["committed_text"] for p in scores["plays"]][2:] == ["the cat sat", "a dog ran in the", "cat"]
    chrfs = [p[m.CHRF] for p in scores["bleu_by_pass"]]
    assert chrfs[0] == pytest.approx(100) and 0 < chrfs[1] < 90


def _valid_png(path: Path) -> None:
    image = QImage(str(path))
    assert image.width() > 300 and image.height() > 200, path.name


@pytest.mark.slow
def test_eval_writes_every_file_with_every_field(
    two_manifest: Path, tmp_path: Path, shadow_models, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.eval import plots

    # the plots' voice sweep at a short and a long sentence, not its seven lengths (20 s of the test's 45 s)
    monkeypatch.setattr(plots, "LENGTHS", (4, 24))
    out = tmp_path / "eval"
    report = run_eval(two_manifest, out, ["full", "lookahead-1"], ["la2"], models=shadow_models)
    assert sorted(report["results"]) == ["full+la2", "lookahead-1+la2"]
    for results in report["results"].values():
        assert all(field in results for field in EVAL_FIELDS)
        assert results[m.EAR_VOICE_LAG_S]["n"] > 20 and results[m.WER_SPOKEN] < 0.6
    assert report["reference_times"] == {TWO[0]: "offline recognition word times", TWO[1]: "manifest forced alignment"}
    full, incremental = report["results"]["full+la2"], report["results"]["lookahead-1+la2"]
    assert incremental[m.EAR_VOICE_LAG_S]["median"] < full[m.EAR_VOICE_LAG_S]["median"]  # the point of it all
    # the trade-off: whole sentences sound like themselves (0 dB but for the speaking rate), chunks do not
    assert full[m.WORD_DISTANCE_DB]["mean"] < incremental[m.WORD_DISTANCE_DB]["mean"]
    assert 0 < incremental[m.COMMIT_LATENCY_S]["median"] < incremental[m.EAR_VOICE_LAG_S]["median"]
    saved = json.loads((out / "report.json").read_text())
    assert saved["results"].keys() == report["results"].keys() and len(saved["plots"]) == len(PLOTS)
    with open(out / "report.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 4 and tuple(rows[0].keys()) == CSV_FIELDS
    assert all(row[m.WER_SPOKEN] != "" and row["ear_voice_lag_median_s"] != "" for row in rows)
    for name in PLOTS:
        _valid_png(out / name)


@pytest.mark.slow
def test_short_soak_reports_drift_cost_and_memory(two_manifest: Path, tmp_path: Path, shadow_models) -> None:
    out = tmp_path / "soak"
    report = run_soak(0.3, two_manifest, out, pause_s=1.0, models=shadow_models)
    assert report["words_spoken"] > 25 and (report[m.GAP_S] > 0) == (report[m.UNDERRUNS] > 0)
    assert report[m.LAG_DRIFT_S] is not None and abs(report[m.LAG_DRIFT_S]) < 5
    assert len(report["lag_by_window"]) == 6 and len(report["step_cost_by_window"]) == 6
    assert report["rss_mb"]["peak"] >= report["rss_mb"]["first_tenth_median"] > 100
    assert len(report["rss_mb_by_window"]) == 6 and all(w["median"] > 100 for w in report["rss_mb_by_window"])
    # memory is sampled at the first recognizer step in each 0.5 s of the session's time (its windows are 3 s), so
    # a window holds a sample per step, or 4 of them once steps come faster than 0.5 s apart (two steps may share a
    # slot at its ends). Counted from the last sample, steps 0.45 s apart were sampled every 0.9 s: 3 in a window of
    # 6-8 steps (AMD EPYC VM, 2026-12-07). A window whose steps took 0.85-1.03 s holds 3 steps and 3 samples.
    windows = zip(report["rss_mb_by_window"], report["step_cost_by_window"], strict=True)
    assert all(memory["n"] >= min(4, steps["n"] - 1) for memory, steps in windows), report["rss_mb_by_window"]
    saved = json.loads((out / "soak.json").read_text())
    assert saved["config"]["minutes"] == 0.3
    assert saved["speed_probe"]["before"]["recognizer_s"] > 0 and saved["speed_probe"]["after"]["voice_s"] > 0
    for name in ("soak_lag.png", "soak_step_cost.png", "soak_memory.png"):
        _valid_png(out / name)


@pytest.mark.slow
def test_bench_shadow_reports_the_evaluation_figures(two_manifest: Path, shadow_models) -> None:
    report = run_bench(two_manifest, progress=lambda text: None, models=shadow_models)
    figures = report["results"]["default"]
    assert all(field in figures for field in EVAL_FIELDS if field != m.WER_OFFLINE)
    assert sorted(report["per_recording"]) == sorted(TWO)
    assert figures[m.EAR_VOICE_LAG_S]["n"] > 20 and 0.3 < figures[m.EAR_VOICE_LAG_S]["median"] < 6
    assert 0 < figures[m.COMMIT_LATENCY_S]["median"] < figures[m.EAR_VOICE_LAG_S]["median"]
    assert report["speed_probe"]["before"]["voice_beside_recognizer_s"] > 0 and "machine speed" in format_table(report)
    assert figures[m.WER_COMMITTED] < 0.4 and figures[m.WER_SPOKEN] < 0.6
    tempos = [v["speaker_tempo"] for v in report["per_recording"].values()]
    assert any(t is not None for t in tempos) and all(t is None or 0.5 < t < 2.0 for t in tempos)
    table = format_table(report)
    assert "ear_voice_lag_s median" in table and "2 recordings" in table and "speaker's tempo" in table
    json.dumps(json_safe(report), allow_nan=False)  # what --json prints


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["bench", "shadow", "--manifest", "missing.jsonl"], "manifest not found"),
        (["eval", "missing.jsonl", "--out", "x"], "manifest not found"),
        (["eval", "--out", "x", "--tts-policies", "lookahead-x"], "unknown TTS policy"),
        (["eval", "--out", "x", "--commit", "la2,sometimes"], "sometimes"),
        (["eval", "--out", "x", "--translate-from", "es"], "--translate-from is for --soak"),
    ],
)
def test_eval_bad_input(args: list[str], text: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 2 and text in result.stderr
