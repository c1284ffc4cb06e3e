from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.audio.ringbuffer import RingBuffer, RingBufferClosed


def test_fifo_order_across_the_wrap() -> None:
    ring = RingBuffer(8)
    assert ring.write(np.arange(6, dtype=np.float32)) == 6
    np.testing.assert_array_equal(ring.read(4), [0, 1, 2, 3])
    assert ring.write(np.arange(6, 12, dtype=np.float32)) == 6  # wraps around the end
    assert len(ring) == 8 and ring.free == 0
    np.testing.assert_array_equal(ring.read(), np.arange(4, 12))
    assert len(ring) == 0


def test_non_blocking_write_drops_and_counts_what_does_not_fit() -> None:
    ring = RingBuffer(4)
    assert ring.write(np.ones(6, np.float32), timeout=0) == 4
    assert ring.dropped_frames == 2


def test_read_into_fills_silence_and_counts_underruns() -> None:
    ring = RingBuffer(16, channels=2)
    ring.write(np.ones((3, 2), np.float32))
    out = np.full((5, 2), 7.0, np.float32)
    assert ring.read_into(out) == 3
    np.testing.assert_array_equal(out[:3], 1.0)
    np.testing.assert_array_equal(out[3:], 0.0)
    assert ring.underrun_frames == 2


def test_channel_mismatch_is_an_error() -> None:
    ring = RingBuffer(16, channels=2)
    with pytest.raises(ValueError):
        ring.write(np.ones(4, np.float32))
    with pytest.raises(ValueError):
        RingBuffer(0)


def test_blocking_writer_is_paced_by_the_reader_and_nothing_is_lost() -> None:
    ring = RingBuffer(256)
    source = np.arange(20_000, dtype=np.float32)
    received: list[np.ndarray] = []

    def produce() -> None:
        for start in range(0, source.size, 1000):
            ring.write(source[start : start + 1000], timeout=None)  # larger than the buffer: waits for room
        ring.close()

    producer = threading.Thread(target=produce)
    producer.start()
    while True:
        if not ring.wait_readable(1, timeout=5):
            if ring.closed and len(ring) == 0:
                break
            continue
        received.append(ring.read(100))
        assert len(ring) <= ring.capacity
    producer.join(timeout=5)
    np.testing.assert_array_equal(np.concatenate(received), source)


def test_blocking_write_times_out_and_closed_buffer_raises() -> None:
    ring = RingBuffer(4)
    assert ring.write(np.ones(6, np.float32), timeout=0.05) == 4
    assert ring.dropped_frames == 0  # the caller still holds the rest
    ring.close()
    with pytest.raises(RingBufferClosed):
        ring.write(np.ones(1, np.float32), timeout=None)
    assert ring.read().size == 4  # what was stored can still be drained


def test_clear() -> None:
    ring = RingBuffer(4)
    ring.write(np.ones(3, np.float32))
    assert ring.clear() == 3 and len(ring) == 0
