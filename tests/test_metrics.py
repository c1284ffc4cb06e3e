from __future__ import annotations

import json
import os
import re

import pytest

from engine import paths
from engine.metrics import ALL_METRICS, ASR_COMMIT_POLICIES, DEFINITIONS, TTS_POLICIES, aggregate, machine_info
from engine.metrics.machine import CTRANSLATE2_SETTINGS


def test_aggregate_figures() -> None:
    result = aggregate([3.0, 1.0, 2.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    assert result == {"min": 1.0, "median": 5.5, "p90": pytest.approx(9.1), "max": 10.0, "mean": 5.5, "n": 10}


def test_aggregate_of_nothing_and_of_broken_values() -> None:
    assert aggregate([])["n"] == 0 and aggregate([])["median"] is None
    result = aggregate([1.0, float("nan"), 3.0])
    assert result["n"] == 2 and result["n_nonfinite"] == 1 and result["mean"] == 2.0
    json.dumps(result, allow_nan=False)


def test_every_metric_has_a_definition() -> None:
    assert set(ALL_METRICS) == set(DEFINITIONS)
    assert len(set(ALL_METRICS)) == len(ALL_METRICS)


def test_names_match_the_shared_metrics_document() -> None:
    doc = paths.repo_root().parent / "shared" / "docs" / "METRICS.md"
    if not doc.exists():
        pytest.skip(f"{doc} not found")
    text = doc.read_text(encoding="utf-8")
    table_names = set()
    for line in text.splitlines():
        match = re.match(r"\|\s*(`[^|]+)\|", line)
        if match:
            table_names.update(re.findall(r"`([a-z_]+)(?:\[[a-z]\])?`", match.group(1)))
    assert table_names, "no metric table found in METRICS.md"
    assert table_names <= set(ALL_METRICS), table_names - set(ALL_METRICS)
    for name in (*TTS_POLICIES, *ASR_COMMIT_POLICIES):
        assert f"`{name}`" in text


def test_machine_info() -> None:
    info = machine_info()
    assert info["cores"] >= 1 and info["cpu_model"]
    assert info["packages"]["numpy"]
    assert info["blas_threads"] == os.environ["OPENBLAS_NUM_THREADS"]  # set by ``engine`` unless the user had
    json.dumps(info)


def test_machine_info_names_the_recognizers_kernel_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CTRANSLATE2_SETTINGS:  # conftest sets the tests' own
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CT2_FORCE_CPU_ISA", "AVX512")
    assert machine_info()["ctranslate2_settings"] == {"CT2_FORCE_CPU_ISA": "AVX512"}
    monkeypatch.delenv("CT2_FORCE_CPU_ISA")
    assert machine_info()["ctranslate2_settings"] == {}
