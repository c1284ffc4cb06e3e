"""``bench shadow --repeat`` and ``bench interpret --repeat``: every run kept, each figure's median and range."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from engine import cli
from engine.metrics import names as m
from engine.metrics.repeats import Figure, format_summary, over_runs, summarize
from engine.pipeline.config import ShadowConfig


def test_figures_over_runs_give_every_run_the_median_and_the_range() -> None:
    figures = (Figure("lag", lambda r: r["lag"], " s"), Figure(m.UNDERRUNS, lambda r: r["u"], count=True))
    runs = [{"lag": 2.0, "u": 7}, {"lag": 1.9, "u": 0}, {"lag": 2.3, "u": 2}, {"lag": None, "u": 1}]
    summary = summarize(runs, figures)
    assert summary["lag"] == {"runs": [2.0, 1.9, 2.3, None], "median": 2.0, "min": 1.9, "max": 2.3}
    assert summary[m.UNDERRUNS] == {"runs": [7, 0, 2, 1], "median": 1.5, "min": 0, "max": 7}
    assert format_summary(summary, figures) == [
        "lag 2.00 s (1.90 to 2.30 s)",
        "underruns 1.5 (0 to 7; per run 7, 0, 2, 1)",
    ]
    assert over_runs([None, None]) == {"runs": [None, None], "median": None, "min": None, "max": None}
    assert format_summary({"lag": over_runs([None])}, figures[:1]) == ["lag -"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "shadow", "--repeat", "0"], "--repeat must be at least 1, not 0"),
        (["bench", "tts", "--repeat", "2"], "--repeat is for bench shadow and bench interpret"),
    ],
)
def test_a_bad_repeat_is_named(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_bench_shadow_repeated_keeps_every_run_and_their_median(
    tmp_path: Path, speech_manifest: list[dict], speech_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    item = next(e for e in speech_manifest if e["id"] == "vctk_p225_002")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({**item, "wav": str(speech_dir / item["wav"])}) + "\n")
    assert cli.main(["bench", "shadow", "--manifest", str(manifest), "--repeat", "2", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["repeat"] == 2 and len(report["repeats"]) == 2
    assert report["config"]["recordings"] == 1 and report["machine"]["cores"] >= 1
    lags = [run["results"]["default"][m.EAR_VOICE_LAG_S] for run in report["repeats"]]
    assert all(lag["n"] >= 5 for lag in lags)
    over = report["over_runs"]
    assert over["ear_voice_lag_s.median"]["runs"] == [lag["median"] for lag in lags]
    assert over["ear_voice_lag_s.median"]["median"] == pytest.approx(statistics.median(lag["median"] for lag in lags))
    assert over[m.UNDERRUNS]["runs"] == [run["results"]["default"][m.UNDERRUNS] for run in report["repeats"]]
    assert 0 <= over[m.WER_COMMITTED]["min"] <= over[m.WER_COMMITTED]["median"] <= over[m.WER_COMMITTED]["max"] < 0.5
    assert lines.count("run 1/2:") == 1 and "run 2/2:" in lines and "over 2 runs, median (min to max):" in lines
    probes = [run["speed_probe"] for run in report["repeats"]]  # the machine's speed, before and after each run
    assert all(0 < p[when]["recognizer_min_s"] <= p[when]["recognizer_s"] for p in probes for when in p)
    assert probes[1]["before"] == probes[0]["after"]  # taken once: nothing ran between the two
    assert over["speed_probe.recognizer_s"]["runs"] == [p["before"]["recognizer_s"] for p in probes]
    assert sum(line.startswith("machine speed (wall time") for line in lines) == 2
    assert any(line.startswith("  underruns ") and "per run" in line for line in lines)


@pytest.mark.slow
def test_bench_interpret_repeated_translates_offline_once_and_keeps_every_run(
    speech_xx_dir: Path, tmp_path: Path
) -> None:
    from engine.pipeline import bench_interpret

    entries = [json.loads(line) for line in (speech_xx_dir / "manifest.jsonl").read_text().splitlines()]
    item = next(e for e in entries if e["id"] == "s2st_es_2245")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({**item, "wav": str(speech_xx_dir / item["wav"])}) + "\n")
    seen: list[str] = []
    report = bench_interpret.run_bench(manifest, policies=("la2", "offline"), progress=seen.append, repeat=2)
    assert [text for text in seen if text.startswith("offline")] == ["offline 1/1 s2st_es_2245"]
    assert [text for text in seen if "la2" in text] == [
        "run 1/2: la2 1/1 s2st_es_2245",
        "run 2/2: la2 1/1 s2st_es_2245",
    ]
    assert report["repeat"] == 2 and [r["bench"] for r in report["repeats"]] == ["interpret", "interpret"]
    # the second run meets the speech half a step later: its steps (and so its commits) come at other moments
    step_s = ShadowConfig(translate_from="es").step_s
    assert [r["config"]["step_phase_s"] for r in report["repeats"]] == [0.0, step_s / 2]
    lagging = [r["per_recording"]["s2st_es_2245"]["la2"][m.AL_CA_S] for r in report["repeats"]]
    assert None not in lagging and lagging[0] != lagging[1]
    runs = [r["results"]["la2"] for r in report["repeats"]]
    assert all(r[m.BLEU] > 0 and r["non_english_words"] == 0 for r in runs)
    over = report["over_runs"]["la2"]
    assert over[m.BLEU]["runs"] == [r[m.BLEU] for r in runs]
    assert over[m.GAP_S]["runs"] == [r[m.GAP_S] for r in runs] and all(r[m.GAP_S] >= 0 for r in runs)
    assert over[m.BLEU_OFFLINE]["min"] == over[m.BLEU_OFFLINE]["max"] > 0  # translated once, so the same in every run
    assert over[m.END_OFFSET_S]["median"] is not None and over[m.END_OFFSET_S]["median"] < 10
    # the cost of streaming over both runs' sentences, with the interval of resampling the recording with its runs
    pooled = over["bleu_cost_pooled"]
    assert pooled["ci95"][0] <= pooled["cost"] <= pooled["ci95"][1]
    assert all(len(r["bleu_cost_ci95"]) == 2 for r in runs)
    recording = report["repeats"][0]["per_recording"]["s2st_es_2245"]
    assert isinstance(recording["offline_translation"], str) and recording["offline_translation"].strip()
    assert recording["offline"]["committed"] and recording["la2"]["committed"]  # the policy "offline" is a run
    text = bench_interpret.format_repeated(report)
    assert "la2 over 2 runs, median (min to max):" in text and "run 2/2:" in text
    assert f"steps {step_s / 2:.2f} s later than at phase 0" in text
    assert "bleu_offline - bleu, every run's sentences pooled: " in text
    probes = [r["speed_probe"] for r in report["repeats"]]  # Whisper base translating, timed before and after
    assert all(p["before"]["recognizer_s"] > 0 and p["after"]["voice_s"] > 0 for p in probes)
    assert probes[1]["before"] == probes[0]["after"]  # taken once: nothing ran between the two
    assert text.count("machine speed (wall time") == 2
