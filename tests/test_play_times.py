"""When the voice's pieces play: the player's times come from the device's own clock (PortAudio's DAC time), so
the echo canceller's reference lines up with what the microphone hears, and the ear-voice lag is what was heard.
A unit test of the timing rule with a made-up device, and the same for real on the virtual speaker: the speaker's
monitor hears each burst when the player says it played it, session after session."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from engine.audio import player as player_module
from engine.audio.capture import Capture
from engine.audio.player import RESYNC_S, Player
from tests import virtual_audio as va

RATE = 16000
BLOCK = 1024


@pytest.fixture
def fake_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(player_module, "sounddevice_module", lambda: SimpleNamespace())
    monkeypatch.setattr(player_module, "negotiate_rate", lambda device, direction, rate: rate)


def _times(player: Player, callbacks: list[tuple[float, float | None]]) -> list[float]:
    """Run the player's callback once per (timer, seconds until the block plays), and return each block's start."""
    starts: list[float] = []
    player._on_output = lambda samples, start_s: starts.append(start_s)
    for at, until in callbacks:
        player._timer = lambda at=at: at
        info = SimpleNamespace(currentTime=100.0, outputBufferDacTime=100.0 + until) if until is not None else None
        player._callback(np.zeros((BLOCK, 1), np.float32), BLOCK, info, None)
    player.poll()
    return starts


def test_blocks_play_when_the_device_says_not_a_reported_latency_later(fake_device: None) -> None:
    """A stream's start: six blocks asked for at once, each said to play one block after the other from now; then
    one block per block time, each 0.32 s ahead. The reported latency (0.2 s) is not used: the blocks play from the
    first callback on, and never drift from the device's times."""
    player = Player(RATE, timer=lambda: 0.0, on_output=lambda samples, start_s: None)
    block_s = BLOCK / RATE
    prefill = [(0.0, k * block_s) for k in range(6)]
    steady = [(6 * block_s - 0.318 + k * block_s, 0.318) for k in range(20)]
    starts = _times(player, prefill + steady)
    assert starts == pytest.approx([k * block_s for k in range(26)], abs=1e-6)


def test_a_late_callback_moves_the_blocks_later_and_an_early_device_brings_them_back(fake_device: None) -> None:
    player = Player(RATE, timer=lambda: 0.0, on_output=lambda samples, start_s: None)
    block_s = BLOCK / RATE
    starts = _times(player, [(0.0, 0.1), (block_s, 0.1), (5.0, 0.1), (5.0 + block_s, 0.1 - 2 * RESYNC_S)])
    assert starts == pytest.approx([0.1, 0.1 + block_s, 5.1, 5.1 + block_s - 2 * RESYNC_S], abs=1e-6)
    # jitter within RESYNC_S keeps the blocks back to back
    starts = _times(player, [(5.0 + 2 * block_s, 0.1 - 2 * RESYNC_S + RESYNC_S / 2)])
    assert starts == pytest.approx([5.1 + 2 * block_s - 2 * RESYNC_S])


def test_without_device_times_the_reported_latency_is_used(fake_device: None) -> None:
    player = Player(RATE, timer=lambda: 0.0, on_output=lambda samples, start_s: None)
    assert _times(player, [(1.0, None)]) == pytest.approx([1.0 + player.output_latency_s])


@pytest.mark.audio
def test_the_speakers_monitor_hears_each_burst_when_the_player_says_session_after_session(
    virtual_audio: va.VirtualAudio,
) -> None:
    """Before, the player's times came from the reported latency and only ever moved later: from the second stream
    on, they were 0.26 s late in about half the runs (what a canceller's reference and the lag figures were off by).
    A monitor hears what its sink renders, ahead of the sink's own latency: a listener at 10 ms (as an echo path
    through ``module-loopback`` is) keeps that latency short, so the monitor hears what plays when it plays."""
    with virtual_audio.listening(va.SPEAKER_MONITOR) as listener_10ms:
        virtual_audio.wait_for_recording_stream(listener_10ms)
        lags = [_burst_lag_ms(trial) for trial in range(3)]
    assert all(abs(lag) <= 40 for lag in lags), lags


def _burst_lag_ms(trial: int) -> float:
    """A burst played through a new player, and how much later than it says the speaker's monitor hears it."""
    t0 = time.monotonic()
    player = Player(RATE, device=f"pulse:{va.SPEAKER_SINK}", timer=lambda: time.monotonic() - t0)
    if player.device_rate != RATE:
        pytest.skip(f"the virtual speaker took {player.device_rate} Hz")
    monitor = Capture(f"pulse:{va.SPEAKER_MONITOR}")
    heard: list[np.ndarray] = []
    origin: list[float] = []
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            block = monitor.read(timeout=0.1)
            if block is not None:  # the capture's zero on the player's clock: the earliest arrival − end
                origin.append(time.monotonic() - t0 - block.end_s)
                heard.append(block.samples)

    burst = np.random.default_rng(trial).standard_normal(RATE * 3 // 2).astype(np.float32) * 0.1
    monitor.start()
    player.start()
    listener = threading.Thread(target=listen)
    listener.start()
    try:
        time.sleep(0.5)
        player.enqueue(burst, key="burst")
        assert player.drain(timeout=10)
        time.sleep(0.3)
    finally:
        stop.set()
        listener.join()
        monitor.stop()
        player.close()
    said = next(piece.start_s for piece in player.finished if piece.key == "burst")
    correlation, at = va.aligned_correlation(np.concatenate(heard), burst)
    assert correlation > 0.5, correlation  # the burst was heard (0.8: through the server's resampling)
    return (min(origin) + at / RATE - said) * 1000
