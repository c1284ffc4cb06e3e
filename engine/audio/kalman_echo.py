"""An echo canceller that keeps the speaker: a partitioned-block frequency-domain Kalman filter and a gentle
residual-echo suppressor.

The voice's echo is the played voice through the room, a linear path; the speaker is a second talker uncorrelated
with it. The filter models the path (the room's response, in partitions of one block) and subtracts its estimate
of the echo; it never attenuates anything else, so the speaker's words come through untouched while the voice
plays (double talk, which is most of a shadowing session).

Its step size is a Kalman gain per frequency and partition (the diagonal frequency-domain adaptive Kalman filter
of Enzner and Vary, partitioned as by Kuech et al.): large while the path is uncertain, small where the error holds
more than the filter's own uncertainty explains (the speaker talking). So it does not diverge in double talk,
without a double-talk detector; while the speaker talks it learns slowly (a few seconds of voice to 15 dB).

The filter's uncertainty is also its estimate of the echo it has not removed, per frequency; ``ResidualSuppressor``
lowers the bins where that estimate is a large part of what is left (a Wiener-like gain with a floor), on 50 %
overlapped sqrt-Hann frames, so the output is 20 ms late. Where the speaker dominates a bin it is left alone.
"""

from __future__ import annotations

import numpy as np

BLOCK = 320  # 20 ms at 16 kHz
DEFAULT_TAPS_S = 0.3  # the room's response it can model (with the delay left in the reference)
TRANSITION = 0.9999  # how fast the path may change (the state's first-order Markov factor)
# the path's prior variance per coefficient: in the first 10 s of double talk with a loud echo (module-loopback
# test), 0.01 removed 1-3 dB of it, 0.1 removed 2-10 dB
INITIAL_UNCERTAINTY = 0.1
# ... up to PRIOR_FLAT_S (a longer delay is taken out of the reference: pipeline/echo.py), then falling with the lag
# as a room's echo does (40 dB over the next 0.3 s). A filter as unsure of the tail as of the first reflections
# spreads what it learns in the first seconds of double talk over all of it. Cold, the echo the speaker's words
# came out with went from 11.7 to 14.1 dB below the echo heard (median, simulated room on ../shared/speech-hard;
# 10.3 to 11.9 on ../shared/speech); ten live sessions through the test loopback, replayed: mean WER against the
# transcript 0.011 (max 0.056), with the prior flat 0.028-0.093 (docs/RESULTS.md).
PRIOR_FLAT_S = 0.1
PRIOR_DECAY_DB_PER_S = 40.0 / 0.3
# A digital path (the monitor of the output the voice plays on: its exact copy, through the server's resampler) is
# short and at full gain: a short filter that expects a large path learns it within seconds of double talk.
DIGITAL_TAPS_S = 0.06
DIGITAL_UNCERTAINTY = 1.0
PATHS = ("room", "digital")
NOISE_SMOOTHING = 0.8  # of the observation-noise estimate (the speaker and the echo not modelled), per block
# The suppressor removes this many times the residual echo it expects. While the filter is new, it expects the
# whole prior as residual and lowers every frequency the voice sounds at, the speaker's words with them: twice the
# estimate turned the speaker's "antecedents", said over the voice's first words, into "hands of theta" (four live
# loopback sessions replayed: 0.09 against the transcript, 0.03 with 1.0; the simulated room 0.098 and 0.096).
OVER_SUBTRACTION = 1.0
GAIN_FLOOR = 0.03  # and never lowers a bin by more than this (-30 dB)
# A block the canceller made this much quieter than the microphone heard it holds nothing but what is left of the
# echo, and is silenced: the recognizer hears speech far below the speaker's level (a window's loudness does not
# matter to it), and 30-50 dB down the voice's words were still recognized and spoken again. The speaker talking
# over the echo leaves a block within a few dB of what was heard.
ECHO_ONLY_DB = 25.0
QUIET = 1e-8  # a block's mean square below this (-80 dBFS) is silence either way


class KalmanEchoFilter:
    """``block(near, far)`` on one block of ``BLOCK`` samples each; returns the near block with the echo removed."""

    @classmethod
    def for_path(cls, path: str, rate: int = 16000) -> KalmanEchoFilter:
        """The filter for an acoustic ``room`` or a ``digital`` copy of the voice."""
        if path not in PATHS:
            raise ValueError(f"an echo path is one of {', '.join(PATHS)}, not {path!r}")
        if path == "digital":  # a copy, not a room: no decay
            return cls(rate, DIGITAL_TAPS_S, initial_uncertainty=DIGITAL_UNCERTAINTY, room=False)
        return cls(rate)

    def __init__(
        self,
        rate: int = 16000,
        taps_s: float = DEFAULT_TAPS_S,
        block: int = BLOCK,
        initial_uncertainty: float = INITIAL_UNCERTAINTY,
        room: bool = True,
    ) -> None:
        self.block_size = block
        self._n = 2 * block
        bins = block + 1
        self.partitions = max(int(np.ceil(taps_s * rate / block)), 1)
        self._w = np.zeros((self.partitions, bins), np.complex128)  # the path, one row per partition
        self._x = np.zeros((self.partitions, bins), np.complex128)  # far spectra, newest first
        lag_s = np.arange(self.partitions) * block / rate
        decay_db = PRIOR_DECAY_DB_PER_S * np.maximum(lag_s - PRIOR_FLAT_S, 0.0) if room else np.zeros(lag_s.size)
        prior = initial_uncertainty * 10 ** (-decay_db / 10)
        self._uncertainty = np.repeat(prior[:, None], bins, axis=1)
        self._prior = self._uncertainty.copy()
        self._noise = np.full(bins, 1e-4)
        self._far_previous = np.zeros(block)
        self.residual_power = np.zeros(bins)  # the echo the last block still holds, as the filter expects it

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """What the filter learned of the path (and how sure it is), to start the next session from."""
        return self._w.copy(), self._uncertainty.copy()

    def restore(self, state: tuple[np.ndarray, np.ndarray]) -> None:
        """Start from a path learned before, no surer of it than of a new one: the speakers' volume may have changed
        since, and a filter too sure of an old path learns the new one slowly."""
        w, uncertainty = state
        if w.shape == self._w.shape:
            self._w = w.copy()
            self._uncertainty = np.maximum(uncertainty, self._uncertainty)

    def shifted(self, state: tuple[np.ndarray, np.ndarray], lag: int) -> tuple[np.ndarray, np.ndarray]:
        """``state`` (of a filter like this one) for an echo ``lag`` samples later (earlier when negative): the same
        room, heard through a session whose clocks line up differently."""
        w, uncertainty = state
        b, n = self.block_size, self._n
        taps = np.fft.irfft(w, n, axis=1)[:, :b].reshape(-1)  # the whole impulse response
        moved = np.zeros_like(taps)
        if 0 <= lag < taps.size:
            moved[lag:] = taps[: taps.size - lag]
        elif -taps.size < lag < 0:
            moved[:lag] = taps[-lag:]
        blocks = np.zeros((w.shape[0], n))
        blocks[:, :b] = moved.reshape(w.shape[0], b)
        return np.fft.rfft(blocks, axis=1), uncertainty

    def rescale(self, factor: float) -> None:
        """The microphone is ``factor`` times louder from now on (``echo_scale``): the path and what the filter
        learned of it scale with it. Its doubt does too, but not across the prior, which is what a path may be at
        the level the microphone is brought to: a filter that learned nothing yet stays as unsure as a new one
        (raised during the silence before the speaker starts and lowered again, it would be sure of a path it never
        heard), and one that learned a path is never made surer of it than it was."""
        self._w *= factor
        scaled = self._uncertainty * factor**2
        if factor > 1:
            self._uncertainty = np.minimum(scaled, np.maximum(self._prior, self._uncertainty))
        else:
            self._uncertainty = np.maximum(scaled, np.minimum(self._prior, self._uncertainty))
        self._noise *= factor**2
        self.residual_power = self.residual_power * factor**2

    def seed_delay(self, lag: int, uncertainty: float = 0.005) -> None:
        """Start from a path that is the reference ``lag`` samples late at full gain (a digital copy whose delay was
        measured), fairly sure of it: the filter then only refines what the sound server's resampling did."""
        b = self.block_size
        partition, offset = divmod(max(lag, 0), b)
        if partition >= self.partitions:
            return
        impulse = np.zeros(self._n)
        impulse[offset] = 1.0
        self._w[:] = 0.0
        self._w[partition] = np.fft.rfft(impulse)
        self._uncertainty[:] = uncertainty

    def block(self, near: np.ndarray, far: np.ndarray, hold: bool = False) -> np.ndarray:
        """``hold``: the microphone's level is not known yet (``echo_scale``), so neither is the path's: the block
        is given back as heard, with no residual expected, and nothing is learned from it (a path restored from a
        session at another level would subtract an echo tens of dB too loud)."""
        b, n = self.block_size, self._n
        far = np.asarray(far, np.float64)
        x = self._x
        x[1:] = x[:-1]
        x[0] = np.fft.rfft(np.concatenate([self._far_previous, far]))
        self._far_previous = far
        echo = np.zeros(b) if hold else np.fft.irfft(np.sum(self._w * x, axis=0), n)[b:]
        error = np.asarray(near, np.float64) - echo
        spectrum = np.fft.rfft(np.concatenate([np.zeros(b), error]))
        power = np.abs(x) ** 2
        explained = np.sum(power * self._uncertainty, axis=0)
        residual = np.maximum(np.abs(spectrum) ** 2 - 0.5 * explained, 1e-10)
        self._noise = NOISE_SMOOTHING * self._noise + (1 - NOISE_SMOOTHING) * residual  # what it heard, held or not
        if hold:
            self.residual_power = np.zeros_like(self.residual_power)
            return np.asarray(near, np.float32)
        self.residual_power = explained
        gain = self._uncertainty * np.conj(x) / (explained + 2 * self._noise + 1e-10)[None, :]
        w = self._w + gain * spectrum[None, :]
        # only the first half of each partition's impulse response is a linear convolution (overlap-save)
        taps = np.fft.irfft(w, n, axis=1)
        taps[:, b:] = 0.0
        w = np.fft.rfft(taps, axis=1)
        self._w = w
        uncertainty = self._uncertainty * (1 - 0.5 * np.real(gain * x))
        self._uncertainty = TRANSITION**2 * uncertainty + (1 - TRANSITION**2) * np.abs(w) ** 2
        return error.astype(np.float32)


class ResidualSuppressor:
    """Per block: the filter's output and its residual-echo power per bin → the block before, with the bins that
    are mostly residual echo lowered (``OVER_SUBTRACTION``, ``GAIN_FLOOR``). The output is one block late."""

    def __init__(self, block: int = BLOCK) -> None:
        self.block_size = block
        self._window = np.sqrt(np.hanning(2 * block + 1)[: 2 * block])
        self._previous = np.zeros(block)
        self._tail = np.zeros(block)  # the second half of the last frame, waiting for the next frame's first half

    def rescale(self, factor: float) -> None:
        """The input is ``factor`` times louder from now on: what it holds of the blocks before is too."""
        self._previous = self._previous * factor
        self._tail = self._tail * factor

    def block(self, error: np.ndarray, residual_power: np.ndarray) -> np.ndarray:
        b = self.block_size
        frame = np.concatenate([self._previous, error]) * self._window
        self._previous = np.asarray(error, np.float64)
        spectrum = np.fft.rfft(frame)
        power = spectrum.real**2 + spectrum.imag**2
        gain = np.maximum(1.0 - OVER_SUBTRACTION * residual_power / np.maximum(power, 1e-12), GAIN_FLOOR)
        out = np.fft.irfft(gain * spectrum, 2 * b) * self._window
        done = self._tail + out[:b]
        self._tail = out[b:]
        return done.astype(np.float32)


class ResidualGate:
    """Per block: the microphone's block and the canceller's output for the block before it (the suppressor's
    output is one block late) → that output, silenced when it is ``ECHO_ONLY_DB`` below what was heard. Each block
    fades from the last block's gain to its own, so the gate does not click."""

    def __init__(self, block: int = BLOCK) -> None:
        self._heard = np.zeros(block)  # the microphone's block the next output belongs to
        self._gain = 1.0
        self._ratio = 10 ** (-ECHO_ONLY_DB / 10)
        self.gated_blocks = 0

    def rescale(self, factor: float) -> None:
        """The microphone is ``factor`` times louder from now on (the block it holds too)."""
        self._heard = self._heard * factor

    def block(self, near: np.ndarray, out: np.ndarray) -> np.ndarray:
        heard = float(np.mean(np.square(self._heard)))
        self._heard = np.asarray(near, np.float64)
        echo_only = heard > QUIET and float(np.mean(np.square(out, dtype=np.float64))) < heard * self._ratio
        gain = 0.0 if echo_only else 1.0
        self.gated_blocks += echo_only
        if gain == self._gain == 1.0:
            return out
        faded = out * np.linspace(self._gain, gain, out.size, dtype=np.float32)
        self._gain = gain
        return faded.astype(np.float32)
