"""The duck undone in a capture sample by sample (``Ducker.raise_back``): from the settle time after a lowering up
to the moment of the restore, never past it (the sound server's calls stubbed: only the timing is checked)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.audio.sound_server import DUCK_SETTLE_S, Ducker

RATE = 1000  # one sample a millisecond


def _ducker(tmp_path, times: list[float]) -> Ducker:
    """A ducker lowered at ``times[0]``, restored at ``times[1]`` (...), the server calls doing nothing."""
    clock = iter(times)  # each change reads the clock once
    now = [0.0]

    def read() -> float:
        now[0] = next(clock, now[0])
        return now[0]

    ducker = Ducker(20.0, state_file=tmp_path / "duck.json", clock=read)
    ducker._duck = lambda: setattr(ducker, "ducked", True)  # type: ignore[method-assign]
    ducker._restore = lambda: setattr(ducker, "ducked", False)  # type: ignore[method-assign]
    for i, _ in enumerate(times):
        ducker.set(i % 2 == 0)
    return ducker


def test_a_block_the_restore_falls_in_is_raised_only_up_to_it(tmp_path) -> None:
    ducker = _ducker(tmp_path, [1.0, 3.05])  # lowered at 1 s, restored at 3.05 s
    gain = 10 ** (20.0 / 20)
    block = np.ones(100, np.float32)  # 3.0-3.1 s
    out = ducker.raise_back(block, 3.0, RATE)
    assert np.allclose(out[:50], gain) and np.allclose(out[50:], 1.0)
    assert np.allclose(block, 1.0)  # the block itself is left as it was
    settle = ducker.raise_back(np.ones(100, np.float32), 1.0 + DUCK_SETTLE_S - 0.05, RATE)
    assert np.allclose(settle[:50], 1.0) and np.allclose(settle[50:], gain)  # from the settle time on
    assert ducker.raise_back(block, 5.0, RATE) is block  # not lowered then: untouched
    assert ducker.gain_at(3.0) == pytest.approx(1 / gain) and ducker.gain_at(3.06) == 1.0


def test_a_restore_counts_from_before_it_is_made_and_a_lowering_still_open_is_undone(tmp_path) -> None:
    now = [2.0]
    ducker = Ducker(20.0, state_file=tmp_path / "duck.json", clock=lambda: now[0])

    def slow_restore() -> None:  # the server takes 40 ms to restore the streams
        now[0] += 0.04
        ducker.ducked = False

    ducker._duck = lambda: setattr(ducker, "ducked", True)  # type: ignore[method-assign]
    ducker._restore = slow_restore  # type: ignore[method-assign]
    ducker.set(True)
    open_block = ducker.raise_back(np.ones(10, np.float32), 2.5, RATE)
    assert np.allclose(open_block, 10.0)  # lowered and not restored yet
    now[0] = 4.0
    ducker.set(False)
    assert ducker.gain_at(4.0) == 1.0  # from 4.0, when the restore began, not 4.04 when it was done
    assert ducker.gain_at(3.99) == pytest.approx(0.1)
