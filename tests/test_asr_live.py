"""Live: a real recording played into the virtual microphone is recognized and committed as it plays."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.asr.commit import make_commit_policy
from engine.asr.run import run_capture
from engine.asr.streaming import StreamingRecognizer
from engine.asr.vad import SileroVad
from engine.asr.whisper_backend import WhisperBackend
from engine.audio.capture import Capture
from engine.clock import RealClock
from engine.metrics.wer import wer
from tests import virtual_audio as va

pytestmark = [pytest.mark.audio, pytest.mark.slow]


def test_live_microphone_commits_the_spoken_words(
    virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict]
) -> None:
    item = next(e for e in speech_manifest if e["id"] == "librivox_ss_0870")
    recognizer = StreamingRecognizer(WhisperBackend(), make_commit_policy("la2"), SileroVad())
    committed_during_playback = []
    with Capture() as capture:
        first = capture.read(timeout=10)  # an input stream is silent for its first moments
        assert first is not None
        recognizer.insert_audio(first.samples)
        player = virtual_audio.play_into_mic(speech_dir / item["wav"])
        clock = RealClock()
        finished_at: list[float] = []

        def should_stop() -> bool:
            if player.poll() is None:
                return False
            finished_at.append(clock.now()) if not finished_at else None
            return clock.now() - finished_at[0] > 1.5  # let the tail arrive

        run = run_capture(
            capture, recognizer, clock, should_stop,
            on_step=lambda step: committed_during_playback.extend(step.committed) if player.poll() is None else None,
        )  # fmt: skip
        assert capture.dropped_blocks == 0
    text = " ".join(w.text for w in run.committed)
    assert wer(item["text"], text) <= 0.3, text
    assert len(committed_during_playback) >= 5  # words were committed while the speaker was still talking
    assert run.compute_s / max(run.audio_s, 1e-9) < 1.0
