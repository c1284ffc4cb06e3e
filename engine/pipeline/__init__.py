"""Wiring of the stages: clocks now; sessions and recording come with the live pipeline."""

from engine.clock import Clock, ComputeSpan, RealClock, SimulatedClock

__all__ = ["Clock", "ComputeSpan", "RealClock", "SimulatedClock"]
