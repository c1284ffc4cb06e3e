"""The duck in steps and its undoing in a capture (``Ducker.raise_back``): each step from the moment it was made, a
lowering from after the server call, a raising from before it (the sound server stubbed: only the steps and their
timing are checked; the real server: tests/test_system_sound.py and tests/test_app_session.py)."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import pytest

from engine.audio import ducker as ducker_module
from engine.audio.devices import AudioDeviceError
from engine.audio.ducker import Ducker

RATE = 1000  # one sample a millisecond
DB = 15.0


class _Server:
    """No streams, and each call to it takes ``call_s`` on the clock."""

    def __init__(self, now: list[float], call_s: float = 0.0) -> None:
        self.now, self.call_s, self.calls = now, call_s, 0

    def sink_input_list(self) -> list:
        return []

    @contextlib.contextmanager
    def client(self):
        self.calls += 1
        self.now[0] += self.call_s
        yield self


@pytest.fixture
def clock(monkeypatch) -> tuple[list[float], _Server]:
    now = [1.0]
    server = _Server(now)
    monkeypatch.setattr(ducker_module, "pulse_client", server.client)
    return now, server


def _step_gain(level: int, steps: int = 5) -> float:
    return 10 ** (-DB * level / steps / 20)


def test_a_duck_is_made_in_steps_each_undone_from_when_it_was_made(clock, tmp_path) -> None:
    now, server = clock
    ducker = Ducker(DB, tmp_path / "duck.json", clock=lambda: now[0], step_s=0.0, background=False)
    server.call_s = 0.05  # each step's call ends 50 ms after it began
    ducker.set(True)
    assert server.calls == 5 and ducker.ducked and ducker.times_ducked == 1 and (tmp_path / "duck.json").exists()
    # the steps counted from the end of each call: 1.05, 1.10, ... 1.25
    for k in range(1, 6):
        assert ducker.gain_at(1.0 + 0.05 * k + 1e-9) == pytest.approx(_step_gain(k))
        assert ducker.gain_at(1.0 + 0.05 * k - 0.001) == pytest.approx(_step_gain(k - 1))
    block = np.ones(300, np.float32)  # 1.0-1.3 s: the whole fade
    out = ducker.raise_back(block, 1.0, RATE)
    times = 1.0 + np.arange(300) / RATE
    assert np.allclose(out, [1 / ducker.gain_at(t) for t in times], rtol=1e-5)
    assert np.allclose(block, 1.0)  # the block itself is left as it was
    assert ducker.raise_back(block, 0.2, RATE) is block  # before the duck: untouched


def test_no_change_a_capture_hears_is_more_than_one_step(clock, tmp_path) -> None:
    """What makes the duck harmless to the words said as it lands: between any two moments the gain the capture
    is raised by changes by one step at most (a whole 15 dB step lost "antecedents" to "antecedence")."""
    now, server = clock
    ducker = Ducker(DB, tmp_path / "duck.json", clock=lambda: now[0], step_s=0.0, background=False)
    server.call_s = 0.05
    ducker.set(True)
    now[0] = 3.0
    ducker.set(False)
    times = np.arange(0.5, 4.0, 0.001)
    levels_db = np.array([-20 * np.log10(ducker.gain_at(t)) for t in times])
    assert levels_db.max() == pytest.approx(DB) and levels_db[-1] == pytest.approx(0.0, abs=1e-9)
    assert np.abs(np.diff(levels_db)).max() == pytest.approx(DB / 5)


def test_a_raising_step_counts_from_before_it_is_made(clock, tmp_path) -> None:
    """What is no longer lowered is never raised: a restore that takes the server 40 ms counts from when it began."""
    now, server = clock
    ducker = Ducker(DB, tmp_path / "duck.json", clock=lambda: now[0], steps=1, step_s=0.0, background=False)
    ducker.set(True)
    assert ducker.gain_at(1.5) == pytest.approx(_step_gain(1, 1))
    now[0] = 4.0
    server.call_s = 0.04
    ducker.set(False)
    assert ducker.gain_at(4.0) == 1.0 and ducker.gain_at(3.999) == pytest.approx(_step_gain(1, 1))
    assert not ducker.ducked and not (tmp_path / "duck.json").exists()


@pytest.mark.wallclock
def test_in_the_background_set_returns_at_once_and_a_reversed_fade_turns_back(clock, tmp_path) -> None:
    now, _ = clock
    ducker = Ducker(DB, tmp_path / "duck.json", clock=time.monotonic, step_s=0.05)
    t0 = time.monotonic()
    ducker.set(True)
    assert time.monotonic() - t0 < 0.04  # the playback monitor that calls it does not wait for the fade
    time.sleep(0.08)  # two or three steps down
    ducker.set(False)
    assert ducker.wait(2.0)
    assert not ducker.ducked and not (tmp_path / "duck.json").exists()
    ducker.set(True)
    assert ducker.wait(2.0) and ducker.ducked and ducker.times_ducked == 2
    ducker.close()  # at once, no fade
    assert not ducker.ducked and not (tmp_path / "duck.json").exists()
    ducker.set(True)  # closed: nothing more
    assert not ducker.ducked


def test_a_server_that_refuses_stops_the_fade_where_it_is_and_says_so_once(monkeypatch, tmp_path, caplog) -> None:
    @contextlib.contextmanager
    def refusing():
        raise AudioDeviceError("no PulseAudio or PipeWire sound server answered")
        yield

    monkeypatch.setattr(ducker_module, "pulse_client", refusing)
    ducker = Ducker(DB, tmp_path / "duck.json", clock=time.monotonic, step_s=0.01)
    with caplog.at_level("WARNING", logger="engine.audio.ducker"):
        ducker.set(True)
        assert ducker.wait(2.0)
    assert not ducker.ducked and ducker.gain_at(time.monotonic()) == 1.0
    assert [r.getMessage() for r in caplog.records] == ["ducking: no PulseAudio or PipeWire sound server answered"]
    ducker.close()


def test_a_duck_of_no_decibels_or_no_steps_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="1 to 60 dB"):
        Ducker(0, tmp_path / "duck.json")
    with pytest.raises(ValueError, match="at least one step"):
        Ducker(DB, tmp_path / "duck.json", steps=0)
