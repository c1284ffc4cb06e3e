"""Live: a real recording played into the virtual microphone is recognized and committed as it plays."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.asr.commit import make_commit_policy
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.asr.whisper_backend import WhisperBackend
from engine.audio.capture import Capture
from engine.metrics.wer import wer
from tests import virtual_audio as va
from tests.live_audio import recognize_played

pytestmark = [pytest.mark.audio, pytest.mark.slow]


def test_live_microphone_commits_the_spoken_words(
    virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict]
) -> None:
    item = next(e for e in speech_manifest if e["id"] == "librivox_ss_0870")
    recognizer = StreamingRecognizer(WhisperBackend(), make_commit_policy("la2"), SileroVad())
    with Capture() as capture:
        run, committed_during_playback = recognize_played(virtual_audio, capture, recognizer, speech_dir / item["wav"])
        assert capture.dropped_blocks == 0
    text = " ".join(w.text for w in run.committed)
    assert wer(item["text"], text) <= 0.3, text
    assert len(committed_during_playback) >= 5  # words were committed while the speaker was still talking
    assert run.compute_s / max(run.audio_s, 1e-9) < 1.0
