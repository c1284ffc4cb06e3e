"""One sentence in the voice on the speaker, before a session: does the output play, and is it loud enough."""

from __future__ import annotations

import logging

import numpy as np

from engine.audio.device_check import play_on
from engine.tts.policies import make_policy
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.voice import TwoStageVoice

log = logging.getLogger(__name__)

TEST_SENTENCE = "This is liveshadow's voice. If you can hear this sentence, the speaker works."


def speak_on(device: int | str | None, voice: TwoStageVoice, text: str = TEST_SENTENCE) -> float:
    """Speak ``text`` with ``voice`` on the output ``device`` and wait until it has played; returns its seconds.
    Raises ``AudioDeviceError`` with what to do when the device fails."""
    synthesizer = IncrementalSynthesizer(voice, make_policy("full"))
    pieces = synthesizer.feed(text) + synthesizer.flush()
    audio = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
    if audio.size == 0:
        raise RuntimeError("the voice made no audio for the test sentence")
    play_on(device, audio, voice.sample_rate)
    seconds = audio.size / voice.sample_rate
    log.info("spoke the test sentence on %r (%.1f s)", device, seconds)
    return seconds
