"""Live runs on the virtual devices, shared by tests: a recording recognized from the virtual microphone, and the
command line's live session waited for until it listens."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engine.asr.run import StreamRun, run_capture
from engine.asr.stream_values import CommittedWord
from engine.asr.streaming import StreamingRecognizer
from engine.audio.capture import Capture
from engine.clock import RealClock
from tests import virtual_audio as va

TAIL_S = 1.5  # recognition goes on this long after the recording ends, so its tail arrives


def recognize_played(
    audio: va.VirtualAudio, capture: Capture, recognizer: StreamingRecognizer, wav: Path
) -> tuple[StreamRun, list[CommittedWord]]:
    """Play ``wav`` into the virtual microphone and recognize it from ``capture`` (started); returns the run and
    the words committed while the recording was still playing."""
    first = capture.read(timeout=10)  # an input stream is silent for its first moments
    assert first is not None and first.sample_rate == capture.rate
    recognizer.insert_audio(first.samples)
    player = audio.play_into_mic(wav)
    clock = RealClock()
    finished_at: list[float] = []
    during: list[CommittedWord] = []

    def should_stop() -> bool:
        if player.poll() is None:
            return False
        finished_at.append(clock.now()) if not finished_at else None
        return clock.now() - finished_at[0] > TAIL_S

    run = run_capture(
        capture,
        recognizer,
        clock,
        should_stop,
        on_step=lambda step: during.extend(step.committed) if player.poll() is None else None,
    )
    return run, during


def wait_until_listening(process: subprocess.Popen) -> list[str]:
    """Read the stderr of ``liveshadow shadow --live`` until it says it listens (the models load first)."""
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("listening"):
            return lines
    pytest.fail("".join(lines))
