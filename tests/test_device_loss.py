"""A headset unplugged mid-session, for real: the devices of a private PulseAudio server are removed while a live
session records and speaks through them (the engine's, the window's and ``shadow --live``'s), and while a past
session replays on them."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from engine.audio.capture import Capture
from engine.audio.device_check import DRAIN_MARGIN_S, WHAT_TO_DO
from engine.audio.devices import AudioDeviceError
from engine.audio.replay import Replay
from engine.pipeline.config import ShadowConfig
from engine.pipeline.recorder import INPUT_WAV, REPORT, TRANSCRIPT
from engine.pipeline.records import SessionListener, State, WordRecord
from engine.pipeline.session import ShadowSession
from engine.tts.speaker_check import speak_on
from tests import virtual_audio as va
from tests.live_audio import wait_until_listening

pytestmark = [pytest.mark.audio, pytest.mark.slow]

RECORDING = "ls_2412-153948-0000"  # 11.7 s: the speaker is still talking when the headset goes


def _wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_headset_unplugged_mid_session_ends_it_saying_so_and_keeps_what_was_heard(
    disposable_audio: va.VirtualAudio, shadow_models, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    item = next(e for e in speech_manifest if e["id"] == RECORDING)
    spoken: list[WordRecord] = []
    errors: list[str] = []

    class Listener(SessionListener):
        def on_spoken(self, words: list[WordRecord]) -> None:
            spoken.extend(words)

        def on_error(self, message: str) -> None:
            errors.append(message)

    folder = tmp_path / "rec"
    session = ShadowSession(ShadowConfig(), shadow_models, Listener(), record_dir=folder)
    session.start_live(Capture())
    speaker = disposable_audio.play_into_mic(speech_dir / item["wav"])
    try:
        assert _wait_for(lambda: bool(spoken), 60), "the voice never spoke"
        unplugged_at = time.monotonic()
        disposable_audio.remove_devices()
        assert session.wait(30), "the session did not end after its devices went away"
        ended_after_s = time.monotonic() - unplugged_at
    finally:
        speaker.kill()
        speaker.wait()
        if not session.wait(0):
            session.cancel()
    # One message, the first failure's: the other device of the headset only adds to the log.
    assert session.state == State.FAILED and errors == [session.error]
    message = session.error or ""
    assert "stopped delivering audio" in message or "stopped playing" in message, message
    assert "the default" in message and "None" not in message, message  # says which device, in words
    assert ended_after_s < 10, ended_after_s

    # What was heard and said until then is kept: the input, the transcript and the report.
    with wave.open(str(folder / INPUT_WAV)) as w:
        heard_s = w.getnframes() / w.getframerate()
    assert heard_s >= 1.0, heard_s
    events = [json.loads(line) for line in (folder / TRANSCRIPT).read_text().splitlines()]
    committed = [(e["sentence"], e["index"]) for e in events if e.get("event") == "committed"]
    assert set(committed) >= {w.key for w in spoken}, (committed, [w.key for w in spoken])
    report = json.loads((folder / REPORT).read_text())
    assert report["command"] == "shadow" and report["error"] == session.error
    assert len(report["committed_text"].split()) >= len(spoken)


def test_a_replay_whose_speaker_is_unplugged_ends_saying_so(disposable_audio: va.VirtualAudio) -> None:
    rate = 22050
    tone = 0.1 * np.sin(np.arange(rate // 5) * 2 * np.pi * 440 / rate).astype(np.float32)
    blocks = (np.stack([tone, tone], axis=1) for _ in range(150))  # 30 s, longer than the test waits
    replay = Replay(blocks, rate)
    replay.start()
    try:
        time.sleep(1.0)
        assert not replay.finished and replay.error is None
        disposable_audio.remove_devices()
        assert replay.wait(10), "the replay went on waiting for a speaker that is gone"
        assert replay.error is not None and "the default output device stopped playing" in replay.error
    finally:
        replay.stop()


def test_test_speaker_unplugged_while_it_speaks_names_the_speaker_and_says_what_to_do(
    disposable_audio: va.VirtualAudio, shadow_models
) -> None:
    unplug = threading.Timer(1.0, disposable_audio.remove_devices)  # the test sentence lasts about 3 s
    unplug.start()
    started = time.monotonic()
    try:
        with pytest.raises(AudioDeviceError) as caught:
            speak_on(None, shadow_models.voice)  # "Test speaker" with the default speaker
    finally:
        unplug.join()
    # it says so when the speaker goes, not after waiting out the sentence and the drain's margin
    assert time.monotonic() - started < DRAIN_MARGIN_S
    message = str(caught.value)
    assert "the default output device" in message and message.endswith(WHAT_TO_DO), message
    assert "None" not in message


@pytest.mark.gui
def test_the_window_says_the_headset_was_unplugged_keeps_the_session_and_hears_it_come_back(
    qtbot,
    caplog,
    disposable_audio: va.VirtualAudio,
    shadow_models,
    data_dir: Path,
    speech_dir: Path,
    speech_manifest: list[dict],
) -> None:
    from app.main_window import MainWindow

    item = next(e for e in speech_manifest if e["id"] == RECORDING)
    window = MainWindow()
    qtbot.addWidget(window)
    window.controller.models = shadow_models
    window.show()
    speaker = None
    try:
        window.start_button.click()  # the source is the microphone by default
        qtbot.waitUntil(lambda: window.state == "running", timeout=10_000)
        qtbot.wait(1500)  # an input stream delivers nothing for its first 0.4-1.7 s
        speaker = disposable_audio.play_into_mic(speech_dir / item["wav"])
        qtbot.waitUntil(lambda: window.transcript.counts[2] >= 1, timeout=60_000)  # the voice has spoken
        disposable_audio.remove_devices()
        qtbot.waitUntil(lambda: window.state == "failed", timeout=15_000)  # once the session has ended
        message = window.message.text()
        assert "stopped delivering audio" in message or "stopped playing" in message, message
        chosen = (f"sound server's input '{va.MIC_SOURCE}'", f"sound server's output '{va.SPEAKER_SINK}'")
        assert any(name in message for name in chosen)  # the window names the server's device it chose
        assert window.start_button.isEnabled()
        assert window.transcript.counts[2] >= 1  # the words spoken are still on screen
        assert "stopped by an error" in window.meters.summary.text()
        folder = window.controller.session_folder
        for name in (INPUT_WAV, TRANSCRIPT, REPORT):
            assert (folder / name).stat().st_size > 0, name
        assert json.loads((folder / REPORT).read_text())["error"] == window.controller.session.error

        # Idle, the window listens for the microphone again: with none there, it neither replaces the session's
        # message nor tries to open the device at every meter tick.
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            qtbot.wait(2500)
            window._check_hotplug()  # the pickers see the devices gone (their timer's next tick, made sure of)
        assert window.message.text() == message
        tries = [r for r in caplog.records if "microphone cannot be opened" in r.getMessage().lower()]
        assert len(tries) <= 1, [r.getMessage() for r in tries]

        # The headset is plugged back in: the window hears the microphone again, and a new session runs.
        disposable_audio.add_devices()
        qtbot.waitUntil(lambda: window.level_monitor is not None, timeout=10_000)
        window.start_button.click()
        qtbot.waitUntil(lambda: window.state == "running", timeout=10_000)
        window.stop_button.click()
        qtbot.waitUntil(lambda: window.state == "done", timeout=30_000)
    finally:
        if speaker is not None:
            speaker.kill()
            speaker.wait()
        window.controller.shutdown()


def test_the_command_line_writes_the_report_of_a_session_its_headset_left(
    disposable_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    item = next(e for e in speech_manifest if e["id"] == RECORDING)
    report_path = tmp_path / "report.json"
    command = [sys.executable, "-m", "engine", "shadow", "--live", "--seconds", "60", "--report", str(report_path)]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=disposable_audio.env()
    )
    speaker = None
    try:
        lines = wait_until_listening(process)  # models load first; play once the session listens
        time.sleep(1.5)  # an input stream delivers nothing for its first 0.4-1.7 s
        speaker = disposable_audio.play_into_mic(speech_dir / item["wav"])
        time.sleep(6.0)  # the speaker is mid-sentence, the voice has begun
        disposable_audio.remove_devices()
        out, rest = process.communicate(timeout=60)
    finally:
        process.kill()
        if speaker is not None:
            speaker.kill()
            speaker.wait()
    assert process.returncode == 1, "".join(lines) + rest
    assert "liveshadow: recognition stopped" in rest or "liveshadow: playback stopped" in rest, rest
    report = json.loads(report_path.read_text())  # written although the session failed
    assert report["error"] and report["error"] in rest
    assert len(report["committed_text"].split()) >= 3, report["committed_text"]
    assert out.strip() == report["spoken_text"]


def test_the_command_line_playing_a_recording_writes_its_report_when_the_speaker_goes(
    disposable_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    item = next(e for e in speech_manifest if e["id"] == RECORDING)
    report_path = tmp_path / "report.json"
    command = [
        sys.executable,
        "-m",
        "engine",
        "shadow",
        str(speech_dir / item["wav"]),
        "--play",
        "--report",
        str(report_path),
    ]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=disposable_audio.env()
    )
    try:
        # the voice is mid-sentence once the speaker has played a second and a half of it (a fixed 3 s after its
        # stream opened was, on a slow run, before its first word)
        with disposable_audio.speaker_level() as speaker:
            assert _wait_for(lambda: speaker.voiced_s >= 1.5, 120), speaker.voiced_s
        disposable_audio.remove_devices()
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 1, err
    assert "liveshadow: playback stopped: the default output device stopped playing" in err, err
    report = json.loads(report_path.read_text())  # written although the session failed
    assert report["error"] and report["error"] in err, err
    assert report["wer_committed"] is None  # half a session is not scored against the whole reference
    assert len(report["spoken_text"].split()) >= 3, report["spoken_text"]
    assert out.strip() == report["spoken_text"]
