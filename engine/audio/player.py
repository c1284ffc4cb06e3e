"""Gapless playback of audio pieces through a sounddevice OutputStream.

Producers call ``enqueue`` (resampling to the device rate happens here, not in the callback) and are paced by a
bounded ring buffer; the stream's callback only copies from the ring buffer and notes how many frames it played
and when. ``poll`` turns those notes into per-piece play start/end times and gaps.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.audio.devices import (
    AudioDeviceError,
    device_label,
    device_stopped,
    negotiate_rate,
    opened_as,
    sounddevice_module,
    stream_stopped,
)
from engine.audio.resample import StreamResampler
from engine.audio.ringbuffer import RingBuffer

log = logging.getLogger(__name__)

DEFAULT_BLOCK = 1024  # a fixed block size: a variable one underruns through ALSA's pulse plugin
DEFAULT_LATENCY_S = 0.2
DEFAULT_BUFFER_S = 20.0
CALLBACK_NOTES = 4096  # bounded record of callbacks not yet polled (~90 s at 1024-frame blocks and 48 kHz)
# A block starts where the one before it ended, unless the device's own clock puts it further away than this (the
# device played silence meanwhile, or the chain had drifted): it then starts where the device says.
RESYNC_S = 0.03


@dataclass(slots=True)
class PlayedPiece:
    key: object
    first_frame: int  # at the device rate, counted from the stream's start
    frames: int
    enqueued_at: float
    start_s: float | None = None  # when its first sample reached the speaker (clock of ``timer``)
    end_s: float | None = None


@dataclass(slots=True)
class PlayerStats:
    underruns: int = 0  # times the buffer ran dry after the first audio and playback later resumed
    gap_s: float = 0.0
    gaps: list[tuple[float, float]] = field(default_factory=list)  # (start, length) of each gap


class Player:
    """Plays float32 mono pieces on an output device; ``timer`` is the clock every reported time uses."""

    def __init__(
        self,
        sample_rate: int,
        device: int | str | None = None,
        blocksize: int = DEFAULT_BLOCK,
        latency_s: float = DEFAULT_LATENCY_S,
        buffer_s: float = DEFAULT_BUFFER_S,
        timer: Callable[[], float] = time.monotonic,
        on_output: Callable[[np.ndarray, float], None] | None = None,
    ) -> None:
        """``on_output(samples, start_s)`` is given every block the device played, silence included, with the time
        its first sample left (the same times as the pieces'), from whichever thread polls: what an echo canceller
        needs as its reference. The callback then also copies each block it plays."""
        self.source_rate = sample_rate
        self._on_output = on_output
        self._copies: collections.deque[np.ndarray] = collections.deque(maxlen=CALLBACK_NOTES)
        self.device = device
        self.blocksize = blocksize
        self.latency_s = latency_s
        self._timer = timer
        self._sd = sounddevice_module()
        self.device_rate = negotiate_rate(device, "output", sample_rate)
        self._resampler = StreamResampler(sample_rate, self.device_rate)
        self._ring = RingBuffer(int(buffer_s * self.device_rate))
        # per callback: frames, real frames among them, the timer then, and how long until its first frame plays
        self._notes: collections.deque[tuple[int, int, float, float | None]] = collections.deque(maxlen=CALLBACK_NOTES)
        self._pieces: collections.deque[PlayedPiece] = collections.deque()
        self._finished: collections.deque[PlayedPiece] = collections.deque(maxlen=CALLBACK_NOTES)
        self._outbox: collections.deque[PlayedPiece] = collections.deque(maxlen=CALLBACK_NOTES)
        self._poll_lock = threading.Lock()  # poll runs from a monitor thread and from drain
        self._written = 0
        self._played = 0  # frames handed to the device (polled)
        self._real_played = 0
        self._in_gap_since: float | None = None
        self._t0: float | None = None  # when the last polled block ends playing
        self._device_frames = 0
        self.stats = PlayerStats()
        self._stream: Any = None  # sounddevice's stream, once started
        self._lock = threading.Lock()
        self._close_lock = threading.Lock()

    # ----- stream
    def start(self) -> None:
        sd = self._sd
        try:
            with opened_as(self.device, "output") as device:
                self._stream = sd.OutputStream(
                    samplerate=self.device_rate,
                    blocksize=self.blocksize,
                    device=device,
                    channels=1,
                    dtype="float32",
                    latency=self.latency_s,
                    callback=self._callback,
                )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise AudioDeviceError(f"cannot open {device_label(self.device, 'output')}: {exc}") from exc

    def _callback(self, outdata: np.ndarray, frames: int, time_info: object, status: object) -> None:
        real = self._ring.read_into(outdata[:, 0])
        if self._on_output is not None:
            self._copies.append(outdata[:, 0].copy())  # appended before its note: poll finds it with the note
        self._notes.append((frames, real, self._timer(), _until_played(time_info)))

    @property
    def output_latency_s(self) -> float:
        stream = self._stream
        return float(stream.latency) if stream is not None else 0.0

    # ----- producer side
    def enqueue(self, samples: np.ndarray, key: object = None, last: bool = False) -> None:
        """Queue a piece; blocks while the ring buffer is full (playback paces the producer)."""
        data = self._resampler.process(np.asarray(samples, np.float32), last=last)
        with self._lock:
            self._pieces.append(PlayedPiece(key, self._written, data.size, self._timer()))
            self._written += data.size
        self._ring.write(data, timeout=None)

    @property
    def buffered_s(self) -> float:
        """Synthesized audio queued ahead of the playback cursor (the live time balance)."""
        return len(self._ring) / self.device_rate

    # ----- reports
    def poll(self) -> list[PlayedPiece]:
        """Process the callback notes; returns the pieces that finished playing since the last call.

        Times come from the device: each callback says when its first frame will reach the speaker (PortAudio's
        DAC time; the reported output latency where the host API gives none). Blocks follow one another by their
        frame counts while the device agrees within ``RESYNC_S``.
        """
        with self._poll_lock:
            return self._poll()

    def take_finished(self) -> list[PlayedPiece]:
        """Pieces that finished playing since the last call, whichever call to ``poll`` (or ``drain``) saw them."""
        taken = []
        while self._outbox:
            taken.append(self._outbox.popleft())
        return taken

    def _poll(self) -> list[PlayedPiece]:
        latency = self.output_latency_s
        done: list[PlayedPiece] = []
        while self._notes:
            frames, real, at, until_played = self._notes.popleft()
            played = self._copies.popleft() if self._on_output is not None and self._copies else None
            # A block starts playing when the one before it ends, as long as the device's clock agrees. A late
            # callback means the server played silence meanwhile; and the stream's reported latency is not when
            # the device plays: at the start the server plays the first blocks as they come, and a chain started
            # from the reported latency (and only ever moved later) stayed 0.26 s late (a sound server, 16 kHz).
            device_says = at + (latency if until_played is None else until_played)
            if self._t0 is None or abs(device_says - self._t0) > RESYNC_S:
                block_start = device_says
            else:
                block_start = self._t0
            self._t0 = block_start + frames / self.device_rate  # when this block ends
            if played is not None:
                self._on_output(played, block_start)  # type: ignore[misc]
            block_real = self._real_played  # ring frame index of its first real frame
            self._device_frames += frames
            self._real_played += real

            def when(real_frame: int, block_start: float = block_start, block_real: int = block_real) -> float:
                return block_start + (real_frame - block_real) / self.device_rate

            with self._lock:
                for piece in self._pieces:
                    if piece.first_frame >= self._real_played:
                        break
                    if piece.start_s is None and piece.frames:
                        piece.start_s = when(max(piece.first_frame, block_real))
                while self._pieces and self._pieces[0].first_frame + self._pieces[0].frames <= self._real_played:
                    piece = self._pieces.popleft()
                    piece.end_s = when(piece.first_frame + piece.frames)
                    if piece.start_s is None:
                        piece.start_s = piece.end_s
                    done.append(piece)
            # A gap is counted when playback resumes after the buffer ran dry; running dry at the very end is
            # not a gap.
            if real > 0 and self._in_gap_since is not None:
                length = max(when(block_real) - self._in_gap_since, 0.0)
                self.stats.gaps.append((self._in_gap_since, length))
                self.stats.gap_s += length
                self.stats.underruns += 1
                self._in_gap_since = None
            if real < frames and self._real_played > 0 and self._in_gap_since is None:
                self._in_gap_since = when(self._real_played)
        self._finished.extend(done)
        self._outbox.extend(done)
        return done

    @property
    def finished(self) -> list[PlayedPiece]:
        """The pieces that finished playing (the last ``CALLBACK_NOTES``), in order."""
        return list(self._finished)

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until everything queued has played (True), the timeout passes or the stream stops by itself (False);
        may be called again after a timeout (the resampler's tail is let out once: by the first call, or by
        ``enqueue(..., last=True)``)."""
        resampler = self._resampler
        tail = resampler.flush() if not (resampler.passthrough or resampler.finished) else np.zeros(0, np.float32)
        if tail.size:
            self._ring.write(tail, timeout=None)
            with self._lock:
                self._written += tail.size
        deadline = None if timeout is None else self._timer() + timeout
        while True:
            self.poll()
            with self._lock:
                if not self._pieces and len(self._ring) == 0:
                    break
            if deadline is not None and self._timer() > deadline:
                return False
            time.sleep(0.02)
            if stream_stopped(self._stream):
                return False  # the device went away: what is queued will never play (``check`` says why)
        time.sleep(self.output_latency_s)  # the last block is still in the device's buffer
        return True

    def check(self) -> None:
        """Raise ``AudioDeviceError`` when the stream stopped by itself (the device went away)."""
        if stream_stopped(self._stream):
            raise device_stopped(self.device, "output")

    def close(self) -> None:
        """Release the device. Safe to call twice and from two threads at once: a cancel from the window races the
        session's own end, and PortAudio must not stop or close one stream from two threads."""
        with self._close_lock:
            stream, self._stream = self._stream, None
            if stream is not None:
                try:
                    stream.stop()
                finally:
                    stream.close()
            self._ring.close()

    def __enter__(self) -> Player:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _until_played(time_info: object) -> float | None:
    """How long from the callback until the first frame of its block plays (PortAudio's DAC time), or None where
    the host API leaves the times at zero."""
    try:
        dac, now = float(time_info.outputBufferDacTime), float(time_info.currentTime)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return None
    if dac <= 0.0 or now <= 0.0 or not 0.0 <= dac - now < 2.0:
        return None
    return dac - now
