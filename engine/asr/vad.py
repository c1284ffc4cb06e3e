"""Voice activity from silero-vad's bundled ONNX model, run with onnxruntime (no torch at run time).

The recognizer is only given audio that holds speech: Whisper turns silence and noise into "Thank you." and
similar text, which a commit policy would then commit.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

RATE = 16000
FRAME = 512  # samples per decision at 16 kHz (32 ms)
CONTEXT = 64  # samples of the previous frame the model sees before each frame
FRAME_S = FRAME / RATE
# Silence the detector has heard at every reset. From a zero state it scores the first half second of a stream low:
# a quiet speaker's first words at a recording's first sample (0.13 s, -37 dBFS) peaked at 0.47 and were dropped as
# not speech; after half a second of silence the same words score 0.7-0.9.
PRIME_S = 0.5


class VadError(RuntimeError):
    """The voice-activity model is missing or broken."""


def bundled_model_path() -> Path:
    """The ONNX file inside the silero-vad package, found without importing the package: its ``__init__`` imports
    torch, which costs ~200 MB of memory and a second of start-up and is never used here."""
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or not spec.submodule_search_locations:
        raise VadError("the silero-vad package is not installed (run scripts/setup)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "silero_vad.onnx"
    if not path.is_file():
        raise VadError(f"the silero-vad package has no model at {path}; reinstall it (run scripts/setup)")
    return path


@dataclass(frozen=True, slots=True)
class GateConfig:
    threshold: float = 0.5  # speech starts at this probability
    release: float = 0.35  # and continues while the probability stays above this
    min_speech_s: float = 0.25  # shorter bursts (clicks, coughs) are not speech
    hangover_s: float = 0.3  # speech ends only after this much time below ``release``


class SileroVad:
    """Streaming speech probabilities: feed 16 kHz float32 audio in any block size, get one value per 32 ms."""

    def __init__(self, model_path: Path | None = None) -> None:
        import onnxruntime as ort

        path = model_path or bundled_model_path()
        if not path.is_file():
            raise VadError(f"voice-activity model not found: {path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's own exception types
            raise VadError(f"cannot load the voice-activity model {path}: {exc}") from exc
        self._primed = np.zeros((2, 1, 128), np.float32)  # the zero state, until ``PRIME_S`` of silence is heard
        self.reset()
        try:
            self.probabilities(np.zeros(int(PRIME_S * RATE), np.float32))
        except Exception as exc:  # onnxruntime's own exception types
            raise VadError(f"cannot run the voice-activity model {path}: {exc}") from exc
        self._primed = self._state.copy()
        self.reset()

    def reset(self) -> None:
        """A new stream, heard from the state ``PRIME_S`` of silence leaves."""
        self._state = self._primed.copy()
        self._context = np.zeros(CONTEXT, np.float32)
        self._pending = np.zeros(0, np.float32)

    def probabilities(self, samples: np.ndarray) -> np.ndarray:
        """Speech probability of every complete 512-sample frame; a partial frame waits for the next call."""
        data = np.concatenate([self._pending, np.asarray(samples, np.float32).reshape(-1)])
        n = data.size // FRAME
        self._pending = data[n * FRAME :].copy()
        out = np.empty(n, np.float32)
        sr = np.array(RATE, dtype=np.int64)
        for i in range(n):
            frame = data[i * FRAME : (i + 1) * FRAME]
            x = np.concatenate([self._context, frame])[None, :]
            prob, self._state = self._session.run(None, {"input": x, "state": self._state, "sr": sr})
            self._context = frame[-CONTEXT:].copy()
            out[i] = float(prob.reshape(-1)[0])
        return out


class SpeechGate:
    """Hysteresis over frame probabilities: which frames are speech, with bursts too short to be speech dropped."""

    def __init__(self, config: GateConfig | None = None) -> None:
        self.config = config or GateConfig()
        self._in_speech = False
        self._quiet_frames = 0

    def reset(self) -> None:
        self._in_speech = False
        self._quiet_frames = 0

    def decide(self, probabilities: np.ndarray) -> np.ndarray:
        """One boolean per frame (streaming: state carries over between calls)."""
        cfg = self.config
        hangover = max(int(round(cfg.hangover_s / FRAME_S)), 1)
        speech = np.zeros(probabilities.size, bool)
        for i, p in enumerate(probabilities):
            if self._in_speech:
                self._quiet_frames = 0 if p >= cfg.release else self._quiet_frames + 1
                if self._quiet_frames >= hangover:
                    self._in_speech = False
            elif p >= cfg.threshold:
                self._in_speech = True
                self._quiet_frames = 0
            speech[i] = self._in_speech
        return speech


def speech_flags(samples: np.ndarray, vad: SileroVad, config: GateConfig | None = None) -> np.ndarray:
    """Which frames (``FRAME`` samples each) of a whole signal are speech, from a fresh detector and gate."""
    vad.reset()
    return SpeechGate(config).decide(vad.probabilities(samples))


def speech_span(samples: np.ndarray, vad: SileroVad, keep_s: float = 0.0) -> tuple[int, int] | None:
    """The samples from the first speech to the last (``keep_s`` more each side, within the signal); None: none."""
    speech = np.flatnonzero(speech_flags(samples, vad))
    if not speech.size:
        return None
    keep = int(keep_s * RATE)
    return max(int(speech[0]) * FRAME - keep, 0), min((int(speech[-1]) + 1) * FRAME + keep, samples.size)


def speech_seconds(samples: np.ndarray, vad: SileroVad | None = None, config: GateConfig | None = None) -> float:
    """Seconds of speech in a whole signal, counting only runs of at least ``min_speech_s``."""
    flags = speech_flags(samples, vad or SileroVad(), config)
    min_frames = int(round((config or GateConfig()).min_speech_s / FRAME_S))
    total, run = 0, 0
    for flag in [*flags, False]:
        if flag:
            run += 1
        else:
            total += run if run >= min_frames else 0
            run = 0
    return total * FRAME_S
