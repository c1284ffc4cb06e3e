"""The metrics of shared/docs/METRICS.md, defined once for the meters, the CLI, the benchmarks and the evaluation."""

from engine.metrics.aggregate import aggregate
from engine.metrics.machine import describe_machine, machine_info
from engine.metrics.names import (
    ALL_METRICS,
    ASR_COMMIT_POLICIES,
    ASR_METRICS,
    BENCH_NAMES,
    DEFINITIONS,
    SHADOW_CONFIGS,
    SHADOW_METRICS,
    TTS_METRICS,
    TTS_POLICIES,
)

__all__ = [
    "ALL_METRICS",
    "ASR_COMMIT_POLICIES",
    "ASR_METRICS",
    "BENCH_NAMES",
    "DEFINITIONS",
    "SHADOW_CONFIGS",
    "SHADOW_METRICS",
    "TTS_METRICS",
    "TTS_POLICIES",
    "aggregate",
    "describe_machine",
    "machine_info",
]
