"""How fast this machine runs the real models, against the machine a session test's bounds were set on.

A session on the simulated clock is charged the compute it really took, so its lags depend on the CPU running the
test (a CI machine was seen three times slower than the one the bounds were measured on). A test that bounds a
lag runs with ``cpu_slowdown`` and ``voice_slowdown`` set from ``reference_slowdowns``: every stage is then charged
what it would have cost on the reference machine, and the bound tests the pipeline's rules, not the CPU it runs on.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from engine.pipeline.models import Models
from engine.tts.frontend import FrontEnd

# Medians measured with ``machine_costs`` on the reference machine: the 2-core AMD EPYC (family 25, AVX-512) the
# stress test's bounds were measured on, 2026-11-23 (tiny.en int8 on one thread; the bundled voice on one thread).
REFERENCE_STEP_S = 0.16
REFERENCE_VOICE_S = 0.53
PROBE_AUDIO_S = 6.0
PROBE_TEXT = "The quick brown fox jumps over the lazy dog, and then it runs back into the forest again."
REPEATS = 5


def _median_time(work: Callable[[], object], repeats: int = REPEATS) -> float:
    work()  # warm-up: first runs allocate
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def machine_costs(models: Models, speech: np.ndarray) -> tuple[float, float]:
    """(a recognizer step on ``PROBE_AUDIO_S`` of speech, the voice on ``PROBE_TEXT``): median seconds each."""
    clip = np.ascontiguousarray(speech[: int(PROBE_AUDIO_S * 16000)], dtype=np.float32)
    front = FrontEnd(models.voice.config)
    units = front.units(PROBE_TEXT.split())
    ids = np.asarray(front.sentence_ids(units), dtype=np.int64)

    def speak() -> None:
        latent, _ = models.voice.stage1(ids)
        models.voice.stage2(latent)

    return _median_time(lambda: models.backend.transcribe(clip)), _median_time(speak)


def reference_slowdowns(models: Models, speech: np.ndarray) -> tuple[float, float, str]:
    """(``cpu_slowdown``, ``voice_slowdown``, what was measured): each stage charged what it costs on the reference.

    One factor for both would not do: CPUs differ in which stage they run slower (a CI machine ran the recognizer at
    the reference's pace and the voice much slower), and a voice charged too little or too much moves every lag.
    """
    step_s, voice_s = machine_costs(models, speech)
    measured = (
        f"recognizer step {step_s:.3f} s (reference {REFERENCE_STEP_S}), "
        f"voice {voice_s:.3f} s (reference {REFERENCE_VOICE_S})"
    )
    return REFERENCE_STEP_S / step_s, REFERENCE_VOICE_S / voice_s, measured
