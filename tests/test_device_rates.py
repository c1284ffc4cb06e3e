"""Devices that do not take the engine's rates, for real: the virtual devices are made to refuse 16 kHz (the
recognizer's) and 22.05 kHz (the voice's), so the capture and the player open them at their own default rate and
resample; speech still goes through, in a session and in the speaker test too."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from engine.audio import resample
from engine.audio.capture import Capture
from engine.audio.io import load_audio
from engine.audio.player import Player
from engine.metrics.wer import wer
from engine.pipeline.config import ShadowConfig
from engine.pipeline.records import State
from engine.pipeline.session import ShadowSession
from engine.tts.policies import make_policy
from engine.tts.speaker_check import speak_on
from engine.tts.synthesizer import IncrementalSynthesizer, synthesize_text
from tests import virtual_audio as va
from tests.live_audio import recognize_played

pytestmark = [pytest.mark.audio, pytest.mark.slow]


@pytest.fixture
def refuses(monkeypatch: pytest.MonkeyPatch):
    """``refuses(rate)``: every device now refuses ``rate``, as a device that runs at one fixed rate does."""
    import sounddevice as sd

    def refusing(check):
        def checked(*args, samplerate=None, **kwargs):
            if samplerate is not None and int(samplerate) in refused:
                raise sd.PortAudioError(f"Invalid sample rate {samplerate}")
            return check(*args, samplerate=samplerate, **kwargs)

        return checked

    refused: set[int] = set()
    monkeypatch.setattr(sd, "check_input_settings", refusing(sd.check_input_settings))
    monkeypatch.setattr(sd, "check_output_settings", refusing(sd.check_output_settings))
    return refused.add


def test_a_microphone_that_refuses_16_khz_is_recorded_at_its_own_rate_and_recognized(
    virtual_audio: va.VirtualAudio, refuses, shadow_models, speech_dir: Path, speech_manifest: list[dict]
) -> None:
    refuses(16000)
    item = next(e for e in speech_manifest if e["id"] == "librivox_ss_0870")
    recognizer = shadow_models.recognizer(ShadowConfig())  # tiny.en, la2
    with Capture() as capture:
        assert capture.device_rate != 16000 and capture.rate == 16000
        run, _ = recognize_played(virtual_audio, capture, recognizer, speech_dir / item["wav"])
    text = " ".join(w.text for w in run.committed)
    assert wer(item["text"], text) <= 0.3, text


def test_a_speaker_that_refuses_the_voices_rate_plays_it_at_its_own(
    virtual_audio: va.VirtualAudio, refuses, shadow_models, tmp_path: Path
) -> None:
    voice = shadow_models.voice
    refuses(voice.sample_rate)
    text = "A speaker that refuses this rate still plays the voice, at its own rate."
    speech, _ = synthesize_text(IncrementalSynthesizer(voice, make_policy("lookahead-1")), text)
    out = tmp_path / "speaker.wav"
    with virtual_audio.record_speaker(out, rate=16000):
        with Player(voice.sample_rate) as player:
            assert player.device_rate != voice.sample_rate
            half = speech.size // 2
            player.enqueue(speech[:half], key=0)
            player.enqueue(speech[half:], key=1, last=True)
            assert player.drain(timeout=30)
            played = player.finished
    assert [p.key for p in played] == [0, 1] and player.stats.underruns == 0
    assert played[1].end_s - played[0].start_s == pytest.approx(speech.size / voice.sample_rate, abs=0.1)
    recorded, _ = va.read_mono(out)
    correlation, _ = va.aligned_correlation(recorded, resample(speech, voice.sample_rate, 16000))
    assert correlation > 0.9, correlation


def test_the_speaker_test_and_a_session_play_on_a_speaker_that_refuses_the_voices_rate(
    virtual_audio: va.VirtualAudio,
    refuses,
    shadow_models,
    speech_dir: Path,
    speech_manifest: list[dict],
    tmp_path: Path,
) -> None:
    """Both drain the player more than once or after its last piece: the resampler's tail is let out once."""
    refuses(shadow_models.voice.sample_rate)
    out = tmp_path / "speaker.wav"
    with virtual_audio.record_speaker(out, rate=16000):
        assert speak_on(None, shadow_models.voice) > 1.0  # "Test speaker" in the window
    recorded, _ = va.read_mono(out)
    assert np.abs(recorded).max() > 0.05

    item = next(e for e in speech_manifest if e["id"] == "ls_61-70968-0000")
    session = ShadowSession(ShadowConfig(), shadow_models)
    session.start_file(load_audio(speech_dir / item["wav"]), play=True)
    assert session.wait(60)
    assert session.state == State.DONE and session.error is None, session.error
    words = session.figures.report()["words"]
    assert len(words) >= 8 and all(w["speak_end_s"] is not None for w in words)
    deadline = time.monotonic() + 5
    while virtual_audio.pactl("list", "short", "sink-inputs").strip():  # the session let the speaker go
        assert time.monotonic() < deadline, virtual_audio.pactl("list", "short", "sink-inputs")
        time.sleep(0.1)
