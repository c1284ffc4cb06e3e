"""``bench interpret``'s figures over a translation manifest (no models: the session reports are given)."""

from __future__ import annotations

import pytest

from engine.metrics import names as m
from engine.pipeline.bench_interpret import format_table, interpret_results


def session_report(text: str, underruns: int = 0, gap_s: float = 0.0) -> dict:
    """What a session's report gives ``interpret_results``: its committed English and its gaps, all short notice."""
    return {
        "committed_text": text,
        m.UNDERRUNS: underruns,
        m.GAP_S: gap_s,
        m.FIRST_AUDIO_S: {"n": 1, "median": 0.2},
        m.EAR_VOICE_LAG_S: {"n": 4, "median": 3.0},
        "underruns_short_notice": underruns,
        "underruns_forced": 0,
    }


def test_bench_interpret_sums_the_gaps_of_its_underruns() -> None:
    """How long the voice was silent for want of compute, beside how often: 3 underruns of 0.42 s in all."""
    entries = [
        {"lang": "es", "translation": "each of them is an exclusive right"},
        {"lang": "fr", "translation": "the night was cold"},
    ]
    reports = [session_report("each of them is a right", 1, 0.12), session_report("the night was cold", 2, 0.30)]
    results = interpret_results(entries, reports, [e["translation"] for e in entries])
    assert results[m.UNDERRUNS] == 3 and results[m.GAP_S] == pytest.approx(0.42)
    report = {"results": {"la2": results}, "machine": {"cores": 2}, "config": {"recordings": 2}}
    assert "la2: underruns 3 (0.42 s of gaps) (of them 3 with less notice" in format_table(report)


def test_bench_interpret_names_the_recognizers_kernel_settings() -> None:
    """Figures made with CTranslate2's kernels forced say so: they round differently."""
    entries = [{"lang": "es", "translation": "the night was cold"}]
    reports = [session_report("the night was cold")]
    results = interpret_results(entries, reports, [e["translation"] for e in entries])
    machine = {"cores": 2, "cpu_model": "AMD EPYC"}
    report = {"results": {"la2": results}, "machine": machine, "config": {"recordings": 1}}
    assert format_table(report).splitlines()[-1] == "1 recordings; 2 cores, AMD EPYC"
    machine["ctranslate2_settings"] = {"CT2_FORCE_CPU_ISA": "AVX512"}
    forced = "1 recordings; 2 cores, AMD EPYC (CTranslate2 with CT2_FORCE_CPU_ISA=AVX512)"
    assert format_table(report).splitlines()[-1] == forced


def test_bench_interpret_gives_the_cost_of_streaming_with_its_bootstrap_interval() -> None:
    """``bleu_offline - bleu`` comes with where chance puts it: on a handful of recordings the interval is wide."""
    entries = [
        {"lang": "es", "translation": "each of them is an exclusive right subject to limitations"},
        {"lang": "fr", "translation": "the night was cold and the streets were empty"},
        {"lang": "de", "translation": "he lost control of his car soon after the start"},
    ]
    reports = [
        session_report("each of them is a right"),
        session_report("the night was cold"),
        session_report("he lost control of the car after the start"),
    ]
    results = interpret_results(entries, reports, [e["translation"] for e in entries])
    cost = results[m.BLEU_OFFLINE] - results[m.BLEU]
    low, high = results["bleu_cost_ci95"]
    assert 0 < low <= cost <= high
    report = {"results": {"la2": results}, "machine": {"cores": 2}, "config": {"recordings": 3}}
    line = f"la2: bleu_offline - bleu {cost:.1f} (95 % interval {low:.1f} to {high:.1f}), paired bootstrap over the 3"
    assert line in format_table(report)
