"""The speech-chain check (``wer_spoken``): the voice's output recognized again, whatever silence came before it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from engine.asr.backend import SAMPLE_RATE
from engine.metrics.wer import normalize_for_wer
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.shadow import LEAD_IN_S, from_first_sound, spoken_floor, spoken_wer
from engine.tts.speak import SpeakOptions, speak

pytestmark = pytest.mark.untimed  # the slow tests' results do not depend on the machine's speed


def test_the_check_starts_a_fixed_lead_in_before_the_first_sound() -> None:
    sound = np.full(100, 0.5, np.float32)
    lead = round(LEAD_IN_S * SAMPLE_RATE)
    for silence in (lead + 1, 3 * lead + 17):
        audio = np.concatenate([np.zeros(silence, np.float32), sound, np.zeros(50, np.float32)])
        kept = from_first_sound(audio)
        assert kept.size == lead + 150 and not kept[:lead].any() and kept[lead] == 0.5
    short = np.concatenate([np.zeros(10, np.float32), sound])
    assert np.array_equal(from_first_sound(short), short)  # less silence than the lead-in: all of it
    assert from_first_sound(np.zeros(1000, np.float32)).size == 0


@pytest.mark.slow
def test_the_same_voice_output_is_heard_the_same_after_any_silence(tmp_path: Path) -> None:
    """Whisper heard one output of "Please call Stella." as "... still up." after some lead-ins and not others."""
    voice = speak([["Please", "call", "Stella."]], SpeakOptions())
    models = Models.load(ShadowConfig())
    heard = set()
    for number, silence_s in enumerate(np.arange(2.40, 2.96, 0.052)):
        wav = tmp_path / f"output{number}.wav"
        silence = np.zeros(round(silence_s * voice.sample_rate), np.float32)
        soundfile.write(wav, np.concatenate([silence, voice.audio]), voice.sample_rate)
        score, text = spoken_wer(models, wav, "Please call Stella.")
        heard.add((score, text))
    assert len(heard) == 1, heard
    score, text = heard.pop()
    assert score <= 1 / 3 and text.lower().startswith("please call")


@pytest.mark.slow
def test_the_floor_is_the_transcript_spoken_whole_and_heard_back(shadow_models) -> None:
    """``wer_spoken_floor``: what the voice and the recognizer lose with no streaming at all. A transcript in capitals
    (speech-hard's AMI and speechocean762 items) is spoken as words, not spelled out; the voice's rate is left as it
    was."""
    text = "ASK NOT WHAT YOUR COUNTRY CAN DO FOR YOU"
    shadow_models.voice.rate = 1.3
    score, heard = spoken_floor(shadow_models, text)
    assert shadow_models.voice.rate == 1.3
    shadow_models.voice.rate = 1.0
    assert score <= 0.3, heard  # spelled out, "W H A T" would be several errors a word
    assert abs(len(normalize_for_wer(heard).split()) - 9) <= 1, heard
    assert spoken_floor(shadow_models, "")[1] == ""
