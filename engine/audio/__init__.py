"""Audio primitives: blocks on the source clock, a bounded ring buffer, a streaming resampler."""

from engine.audio.block import AudioBlock
from engine.audio.resample import StreamResampler, resample
from engine.audio.ringbuffer import RingBuffer

__all__ = ["AudioBlock", "RingBuffer", "StreamResampler", "resample"]
