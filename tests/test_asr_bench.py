"""The ASR benchmark on a two-recording manifest: every figure, every policy, the second pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.asr import bench
from engine.metrics import names as m

pytestmark = pytest.mark.slow


def test_bench_asr_on_a_small_manifest(tmp_path: Path, speech_dir: Path, speech_manifest: list[dict]) -> None:
    chosen = [
        dict(e, wav=str(speech_dir / e["wav"]))
        for e in speech_manifest
        if e["id"] in ("vctk_p226_001", "librivox_ss_0880")
    ]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(e) for e in chosen) + "\n")
    report = bench.run_bench(manifest, policies=("la2", "offline"), second_pass=True)
    assert report["bench"] == "asr" and report["config"]["recordings"] == 2
    for policy in ("la2", "offline"):
        figures = report["results"][policy]
        for name in (m.COMMIT_LATENCY_S, m.WER_COMMITTED, m.WER_OFFLINE, m.RTF_ASR, m.BEHIND_S):
            assert name in figures
        assert figures[m.COMMIT_LATENCY_S]["n"] > 5
    assert (
        report["results"]["la2"][m.COMMIT_LATENCY_S]["median"]
        < report["results"]["offline"][m.COMMIT_LATENCY_S]["median"]
    )
    assert report["no_speech_commits"] == {"silence_10s": 0, "noise_10s": 0}
    # the references, in the same run: faster-whisper's own decode of each whole recording, and liveshadow's windows
    stock = report["results"][m.STOCK_OFFLINE]
    for name in m.ASR_REFERENCES:
        figures = report["results"][name]
        assert 0 <= figures[m.WER_COMMITTED] <= 0.3 and figures[m.RTF_ASR] > 0, name
    assert stock["beam_size"] == 1 and report["results"][m.STOCK_OFFLINE_BEAM5]["beam_size"] == 5
    assert all(stock["texts"][e["id"]] for e in chosen)
    assert report["results"]["la2"][m.WER_OFFLINE] == stock[m.WER_COMMITTED]
    # la2 with the second decode: it ran on the steps that committed words, and its final text is a transcript
    second = report["results"][bench.SECOND_PASS_ROW]
    assert second["second_decodes"] > 3 and second["second_rtf"] > 0
    assert 0 <= second[m.WER_COMMITTED] <= 0.3 and second["wer_first_pass"] == report["results"]["la2"][m.WER_COMMITTED]
    assert second[m.COMMIT_LATENCY_S]["n"] > 5 and all(second["texts"].values())
    table = bench.format_table(report)
    assert bench.SECOND_PASS_ROW in table
    assert "la2" in table and "stock_offline" in table and "windowed_offline" in table
