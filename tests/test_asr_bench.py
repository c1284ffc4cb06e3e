"""The ASR benchmark on a two-recording manifest: every figure, every policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.asr import bench
from engine.metrics import names as m

pytestmark = pytest.mark.slow


def test_bench_asr_on_a_small_manifest(tmp_path: Path, speech_dir: Path, speech_manifest: list[dict]) -> None:
    chosen = [dict(e, wav=str(speech_dir / e["wav"])) for e in speech_manifest
              if e["id"] in ("vctk_p226_001", "librivox_ss_0880")]  # fmt: skip
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(e) for e in chosen) + "\n")
    report = bench.run_bench(manifest, policies=("la2", "offline"))
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
    assert "la2" in bench.format_table(report)
