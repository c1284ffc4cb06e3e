from __future__ import annotations

import time

import pytest

from engine.pipeline import Clock, RealClock, SimulatedClock


class FakeTimer:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_simulated_waits_are_free_and_compute_is_charged() -> None:
    timer = FakeTimer()
    clock = SimulatedClock(timer=timer)
    clock.sleep_until(2.0)
    assert clock.now() == 2.0
    clock.sleep_until(1.0)  # the past does not move the clock back
    assert clock.now() == 2.0
    with clock.compute() as span:
        timer.t += 0.25  # the work took 0.25 s of wall time
    assert span.start_s == 2.0 and span.elapsed_s == pytest.approx(0.25)
    assert clock.now() == pytest.approx(2.25)
    assert clock.compute_total_s == pytest.approx(0.25)


def test_compute_scale_models_a_slower_machine() -> None:
    timer = FakeTimer()
    clock = SimulatedClock(compute_scale=2.0, timer=timer)
    with clock.compute():
        timer.t += 0.1
    assert clock.now() == pytest.approx(0.2)
    with pytest.raises(ValueError):
        SimulatedClock(compute_scale=0)
    with pytest.raises(ValueError):
        clock.advance(-1)


def test_simulated_clock_measures_real_work() -> None:
    clock = SimulatedClock()
    with clock.compute() as span:
        time.sleep(0.05)
    assert span.elapsed_s >= 0.04
    assert clock.now() == pytest.approx(span.elapsed_s)


def test_real_clock_follows_wall_time() -> None:
    clock = RealClock()
    start = clock.now()
    clock.sleep(0.05)
    assert clock.now() - start >= 0.04
    with clock.compute() as span:
        time.sleep(0.02)
    assert span.elapsed_s >= 0.015


def test_both_satisfy_the_protocol() -> None:
    assert isinstance(RealClock(), Clock) and isinstance(SimulatedClock(), Clock)
