"""Echo guards for speakers: what the recognizer hears of the microphone while the voice plays on speakers.

With speakers the voice reaches the microphone and would be recognized and spoken again. Two guards:

- **gate**: the captured audio is replaced with silence while the voice plays and for a short tail after it (the
  room's echo and the device's latency). The cost: what the speaker says while the voice plays is not heard.
- **cancel**: the voice's own played samples (``PlayedTrack``, on the session clock) are the reference of an
  acoustic echo canceller (``engine.audio.echo_canceller``), which removes their echo and keeps the speaker. The
  reference for microphone time t is what played at t − ``hint_s``.

Headphones need no guard.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from engine.audio.block import AudioBlock
from engine.audio.echo_canceller import EchoCanceller
from engine.audio.echo_delay import EchoDelayEstimator
from engine.audio.played_track import PlayedTrack

log = logging.getLogger(__name__)

DEFAULT_TAIL_S = 0.4
# A measured delay longer than this is taken out of the reference (the canceller starts again on the shifted one);
# a shorter one the canceller's filter models itself. The reference keeps ``DELAY_MARGIN_S`` of lead.
SHIFT_ABOVE_S = 0.1
DELAY_MARGIN_S = 0.02
GATE_BLOCK_S = 0.1  # a recording's intake is gated in blocks of this length, as a microphone delivers them
# A learned path is moved to this session's echo only when the two delays differ by more than this: one route's
# delay measures a few milliseconds differently from session to session (70.9, 70.2, 68.2 ms through the test
# server's loopback), and a path moved by that is off by dozens of samples, cancelling little above a few hundred Hz.
REALIGN_ABOVE_S = 0.01
REANCHOR_S = 0.05  # a block this far from where the last one ended (a dropped block, a new clock) re-reads the track
# Once the canceller has learned the path, an echo that moves against the reference by this much (the delay followed
# between samples, ``EchoDelayEstimator.tracked_s``) moves the reference read with it, by whole samples: the filter's
# path stays where the echo is, instead of being learned again (which took it longer than a session; a move of up to
# ``FOLLOW_MAX_S``: a longer one is a new delay, measured and taken out as one).
# Only a path learned from ``FOLLOW_AFTER_S`` of the voice is moved: a filter still new learns a moved echo where it
# is faster than it is moved (a live session whose echo moved 60 samples 2 s into the voice: moved, the echo at its
# end 14-35 dB down; learned again, 20-62 dB).
FOLLOW_SAMPLES = 0.75
FOLLOW_MAX_S = 0.1
FOLLOW_AFTER_S = 3.0
VOICE_LEVEL = 1e-4  # a reference block above this holds the voice
NOTE_GAP_S = 0.015  # a smaller move than that, beyond the origin estimate's creep, is only logged


class EchoGate:
    def __init__(self, voice_active: Callable[[float], bool], tail_s: float = DEFAULT_TAIL_S) -> None:
        self._voice_active = voice_active
        self.tail_s = tail_s
        self._last_active: float | None = None
        self.gated_s = 0.0  # microphone time replaced by silence

    def apply(self, block: AudioBlock, now_s: float) -> AudioBlock:
        if self._voice_active(now_s):
            self._last_active = now_s
        if self._last_active is None or now_s - self._last_active > self.tail_s:
            return block
        self.gated_s += block.duration_s
        return AudioBlock(np.zeros_like(block.samples), block.sample_rate, block.start_s)


class EchoMemory:
    """What the canceller learned of each echo path, kept between sessions (by the loaded models, for the process's
    life): the room and the speakers stay where they were, so the next session with the same devices starts from the
    path the last one learned instead of from nothing. Bounded to a few routes."""

    MAX_ROUTES = 8

    def __init__(self) -> None:
        # route → (canceller state, reference shift, the echo's measured delay then, None if not measured)
        self._learned: dict[tuple, tuple[object, float, float | None]] = {}

    def get(self, route: tuple) -> tuple[object, float, float | None] | None:
        return self._learned.get(route)

    def put(self, route: tuple, state: object, shift_s: float, delay_s: float | None = None) -> None:
        self._learned.pop(route, None)
        self._learned[route] = (state, shift_s, delay_s)
        while len(self._learned) > self.MAX_ROUTES:
            self._learned.pop(next(iter(self._learned)))


class EchoPath:
    """The chosen guard between the microphone and the recognizer.

    ``process(samples, start_s)`` takes the microphone's next samples (16 kHz) with the session time of the first,
    and returns what the recognizer hears. The gate's output is as long as its input; the canceller's trails it by
    less than one block (``EchoCanceller``) and its content is ``delay_samples`` late. ``voice_active`` (live: voice
    still queued on the device) replaces the track for the gate, whose question is only whether the voice is playing
    now."""

    def __init__(
        self,
        guard: str,
        track: PlayedTrack,
        hint_s: float = 0.0,
        noise_suppression: bool = False,
        voice_active: Callable[[float], bool] | None = None,
        method: str = "kalman",
        path: str = "room",
        memory: EchoMemory | None = None,
        route: tuple = (),
    ) -> None:
        """``memory`` and ``route`` (the devices): start from what an earlier session learned of this route, and
        leave what this one learned there (``remember``)."""
        if guard not in ("gate", "cancel"):
            raise ValueError(f"an echo path guards with 'gate' or 'cancel', not {guard!r}")
        self.guard = guard
        self.track = track
        self.hint_s = hint_s
        self.gate = EchoGate(voice_active or self._track_active) if guard == "gate" else None
        self.canceller = EchoCanceller(method, noise_suppression, path) if guard == "cancel" else None
        self.delay = EchoDelayEstimator(digital=path == "digital") if guard == "cancel" else None
        self.shift_s = 0.0  # taken out of the reference after measuring the delay
        self.followed_s = 0.0  # and what following the echo's moves since took out on top (``_follow``)
        self.follows = 0
        self._aligned_s: float | None = None  # the delay (followed) the filter's path was learned at
        self._voice_s = 0.0  # how much of the voice the filter has learned from on this alignment
        self.compute_s = 0.0  # the cancelling path's own work (canceller and delay estimator)
        self.audio_s = 0.0
        self._next_s: float | None = None  # where the reference read goes on (see ``_cancel``)
        self._last_end_s: float | None = None  # where the last block ended, by the capture's times
        self.reanchored = 0
        self.cleaned: list[np.ndarray] | None = None  # a list here keeps what the recognizer heard (the benchmark)
        self.memory, self.route = memory, (guard, method, path, *route)
        self.warm = False  # started from an earlier session's path
        # an earlier session's path, and where its echo came in its reference: to line it up once this one's is known
        self._realign: tuple[object, float] | None = None
        learned = memory.get(self.route) if memory is not None and self.canceller is not None else None
        if learned is not None and self.canceller is not None:
            state, self.shift_s, delay_s = learned
            self.canceller.restore(state)
            self.warm = True
            if delay_s is not None:
                self._realign = (state, delay_s - self.shift_s)

    def _track_active(self, now_s: float) -> bool:
        return self.track.active(now_s - GATE_BLOCK_S, now_s)

    @property
    def gated_s(self) -> float:
        return self.gate.gated_s if self.gate is not None else 0.0

    def process(self, samples: np.ndarray, start_s: float, rate: int = 16000) -> np.ndarray:
        if self.canceller is not None:
            out = self._cancel(samples, start_s)
        else:
            assert self.gate is not None
            step = max(int(GATE_BLOCK_S * rate), 1)
            parts = []
            for first in range(0, samples.size, step):
                block = AudioBlock(samples[first : first + step], rate, start_s + first / rate)
                parts.append(self.gate.apply(block, block.end_s).samples)
            out = np.concatenate(parts) if parts else samples[:0]
        if self.cleaned is not None:
            self.cleaned.append(out)
        return out

    def _cancel(self, samples: np.ndarray, start_s: float) -> np.ndarray:
        assert self.canceller is not None and self.delay is not None
        t0 = time.perf_counter()
        # The reference is read on from where the last block's ended: a live capture's times on the session clock
        # are estimated block by block and move by a few milliseconds as the estimate improves, and every such
        # move would change the echo's delay under the filter. Only a real gap re-reads it at the block's time.
        # A jump is measured from the last block, not from the anchor: the capture's origin estimate creeps by a few
        # milliseconds a block while a stream starts (55-80 ms in all on the test server's monitor), and summed
        # against the anchor that creep re-read the track late in a session, 60 ms off, just as the voice's last
        # words played alone (they came back as words nobody said in 8 of 13 such sessions).
        wanted = start_s - self.hint_s
        gap_s = 0.0 if self._last_end_s is None else wanted - self._last_end_s
        jumped = abs(gap_s) > REANCHOR_S
        if NOTE_GAP_S < abs(gap_s) <= REANCHOR_S:
            log.info("echo canceller: a capture block %+.0f ms from where the last one ended (read on)", gap_s * 1000)
        if self._next_s is None or jumped:
            if self._next_s is not None:  # what the delay estimator holds is on the old alignment: measure again
                self.reanchored += 1
                self.delay = EchoDelayEstimator(digital=self.delay.digital)
                self._aligned_s, self._voice_s = None, 0.0
            self._next_s = wanted
        self._last_end_s = wanted + samples.size / self.track.rate
        reference, self._next_s = self._next_s, self._next_s + samples.size / self.track.rate
        settled = self.delay.add(samples, self.track.read(reference, samples.size))
        if settled is not None:
            self._settle(settled)
        self._follow()
        shift = self.shift_s + self.followed_s
        far = self.track.read(reference - shift, samples.size)
        if far.size and float(np.max(np.abs(far))) > VOICE_LEVEL:
            self._voice_s += samples.size / self.track.rate
        out = self.canceller.process(samples, far)
        self.compute_s += time.perf_counter() - t0
        self.audio_s += samples.size / self.track.rate
        return out

    def _settle(self, delay_s: float) -> None:
        """A measured delay: a long one (or an echo that comes before the reference says the voice played) is taken
        out of the reference, and the canceller starts again on the shifted one; a digital copy's filter starts
        from the delay left. A path an earlier session learned on this route is moved by how much later its echo
        comes in this session's reference, when that is more than the measurement's own spread: the session's
        clocks may line up differently (a device's latency changed), and a path off by that subtracts an echo not
        there."""
        canceller = self.canceller
        assert canceller is not None
        shift = delay_s - DELAY_MARGIN_S if delay_s > SHIFT_ABOVE_S or delay_s < 0 else 0.0
        restarted = abs(shift - self.shift_s) > DELAY_MARGIN_S
        if restarted:
            log.info("echo canceller: the reference shifted by %.0f ms; starting again", shift * 1000)
            self.shift_s, self.followed_s, self._aligned_s, self._voice_s = shift, 0.0, None, 0.0
            fresh = EchoCanceller(canceller.method, canceller.noise_suppression, canceller.path)
            fresh.carry(canceller)
            self.canceller = canceller = fresh
        if self._realign is not None:
            state, echo_at_s = self._realign
            self._realign = None
            lag_s = (delay_s - self.shift_s) - echo_at_s
            lag_s = lag_s if abs(lag_s) > REALIGN_ABOVE_S else 0.0
            if restarted or lag_s:  # the learned path where this session's echo is
                canceller.restore(state, lag_s)
                self._aligned_s, self._voice_s = None, 0.0
        elif canceller.path == "digital" and not self.warm:
            canceller.seed_delay(delay_s - self.shift_s)

    def _follow(self) -> None:
        """Move the reference read with the echo (``FOLLOW_SAMPLES``). Until the filter has learned from
        ``FOLLOW_AFTER_S`` of the voice, the delay followed is the one its path is being learned at."""
        assert self.delay is not None
        tracked = self.delay.tracked_s
        if tracked is None:
            return
        if self._aligned_s is None or self._voice_s < FOLLOW_AFTER_S:
            self._aligned_s = tracked
            return
        rate = self.track.rate
        moved = tracked - self._aligned_s
        samples = round(moved * rate)
        if abs(moved) * rate < FOLLOW_SAMPLES or abs(moved) > FOLLOW_MAX_S:  # 0.75 of a sample rounds to one
            return
        self.followed_s += samples / rate
        self._aligned_s += samples / rate
        self.follows += 1
        log.info("echo canceller: the echo moved %+d samples against the reference; followed", samples)

    def remember(self) -> None:
        """Leave what the canceller learned for the next session on this route."""
        if self.memory is not None and self.canceller is not None and self.canceller.audio_s > 0:
            state = self.canceller.state()
            if state is not None:
                delay = self.delay.delay_s if self.delay is not None else None
                if delay is not None and self._aligned_s is not None:
                    delay = self._aligned_s  # where the echo was for the path as learned, to the sample
                self.memory.put(self.route, state, self.shift_s + self.followed_s, delay)

    def report(self) -> dict:
        """The guard's figures for the session's report."""
        figures: dict = {"guard": self.guard, "gated_s": self.gated_s}
        if self.canceller is not None:
            canceller = self.canceller
            delay = self.delay.delay_s if self.delay is not None else None
            figures.update(
                method=canceller.method,
                path=canceller.path,
                aec_compute_ratio=self.compute_s / self.audio_s if self.audio_s else None,
                aec_audio_s=self.audio_s,
                hint_ms=self.hint_s * 1000,
                measured_delay_ms=None if delay is None else delay * 1000,
                shift_ms=self.shift_s * 1000,
                followed_ms=self.followed_s * 1000,  # the echo's moves followed mid-session (``_follow``)
                follows=self.follows,
                noise_suppression=canceller.noise_suppression,
                warm_start=self.warm,
                reanchored=self.reanchored,
                echo_only_s=canceller.echo_only_s,
                raised_db=canceller.raised_db,  # a quiet microphone raised before the filter (``echo_scale``)
            )
        return figures
