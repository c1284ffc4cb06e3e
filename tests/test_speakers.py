"""Speakers, for real: the virtual speaker's sound reaches the virtual microphone through ``module-loopback`` (60 ms
late, 6 dB down) while a recording plays into the microphone. With the echo guard ``cancel`` the session commits
close to what the same session commits fed the file (no echo at all), and none of the voice's words again; with the
guard off, the voice's words come back (what cancel is for, and the proof that the loopback is heard). The loopback
keeps a fixed latency (``adjust_time=0``), as a laptop's own speakers and microphone on one clock do: the canceller
does not follow two devices' clocks drifting apart (see docs/DESIGN.md)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from engine.audio.sound_server import volume_factor
from engine.metrics.wer import wer
from engine.pipeline.bench_echo import echo_words
from engine.pipeline.config import ShadowConfig
from engine.pipeline.records import State
from engine.pipeline.session import ShadowSession
from engine.pipeline.sources import open_source
from tests import virtual_audio as va
from tests.echo_trace import echo_trace

pytestmark = pytest.mark.audio
# 11.7 s, 36 words read without a break: the voice speaks over the speaker from its third second on (double talk).
RECORDING = "ls_2412-153948-0000"  # the recording of the passage_file_session fixture
ECHO_DB = 6.0
TAIL_S = 3.0  # the microphone listens on while the voice finishes (and is heard)
# The bound is the spread of single sessions on this route (AMD EPYC VM, 2 cores, 2026-12-07): the file session
# commits the passage without an error (0.000 at three step phases); ten cold cancel sessions, as here, 0.000-0.028,
# twelve started warm from the one before 0.000-0.139 (five words lost under the voice's first words, "antecedents"
# heard as "answer to this"), and a cold one in CI 0.111: a canceller still learning the room in the first seconds
# of double talk costs up to five of the 36 words (issue 72's open item). The bound is that and a word. (On the 51 s
# sonnet, 115 words, 37 cold sessions on an Intel Xeon were -0.041 to +0.049 of its file session; it took 80 s more.
# `bench echo` measures the mean over recordings.)
CANCEL_OVER_FILE, CANCEL_ECHO_WORDS = 0.17, 0
# With no guard the voice comes back, most of it its words said again: 0.278-0.806 in 9 sessions (the same VM and
# day; one of them with no word marked an echo, the voice's words heard in place of the speaker's). The bound lies
# between that and the cancelled sessions' 0.000-0.139.
UNGUARDED_WER = 0.2


def _session(audio: va.VirtualAudio, models, wav, guard: str, record_dir: Path) -> tuple[dict, str]:
    """The session's report, and what its canceller did second by second (``echo_trace``)."""
    devices = {"input_device": f"pulse:{va.MIC_SOURCE}", "output_device": f"pulse:{va.SPEAKER_SINK}"}
    config = ShadowConfig(echo_guard=guard, **devices)
    source = open_source("mic", config)
    session = ShadowSession(source.config, models, record_dir=record_dir)
    session.keep_heard = True
    session.start_live(source.capture)
    time.sleep(1.0)
    player = audio.play_into_mic(wav)
    try:
        player.wait(60)
        time.sleep(TAIL_S)
        session.stop()
        assert session.wait(60)
    finally:
        player.kill()
    assert session.state == State.DONE, session.error
    return session.figures.report(), echo_trace(session)


def _loopback(audio: va.VirtualAudio) -> str:
    """The speaker's monitor into the microphone's feed, 60 ms late and ``ECHO_DB`` down; returns the module."""
    import pulsectl

    arguments = (
        f"source={va.SPEAKER_MONITOR}",
        f"sink={va.MIC_SINK}",
        "latency_msec=60",
        "adjust_time=0",
        "source_dont_move=true",
        "sink_dont_move=true",
    )
    module = audio.pactl("load-module", "module-loopback", *arguments).strip()

    with pulsectl.Pulse("liveshadow-test") as pulse:
        loop = next(i for i in pulse.sink_input_list() if str(i.owner_module) == module)
        pulse.volume_set_all_chans(loop, volume_factor(ECHO_DB))
    return module


def test_on_speakers_cancel_keeps_the_voice_out_of_what_is_heard(
    virtual_audio, shadow_models, speech_dir, speech_manifest, passage_file_session, tmp_path
) -> None:
    """The first session on the route learns the room while the speaker talks over the voice, and commits close to
    what the session fed the file commits, none of the voice's words among them; with no guard the voice's words
    come back. (The sessions after it start from what it learned: tests/test_echo_path.py, and docs/RESULTS.md.)"""
    entry = next(e for e in speech_manifest if e["id"] == RECORDING)
    from_file = passage_file_session
    module = _loopback(virtual_audio)
    try:
        wav = speech_dir / entry["wav"]
        cancelled, trace = _session(virtual_audio, shadow_models, wav, "cancel", tmp_path / "cancel")
        unguarded, _ = _session(virtual_audio, shadow_models, wav, "off", tmp_path / "off")
    finally:
        virtual_audio.pactl("unload-module", module)
    assert not cancelled["echo"]["warm_start"] and cancelled["echo"]["measured_delay_ms"] is not None
    said = {
        name: wer(entry["text"], report["committed_text"])
        for name, report in (("file", from_file), ("cancel", cancelled))
    }
    echoes = echo_words(cancelled["words"], entry["text"])
    why = {  # what tells a recognizer's repeat at the end from an echo: when each last word was heard and spoken
        "wer": said,
        "echo_words": echoes,
        "last_words": [(w["text"], w["source_end_s"], w["speak_end_s"]) for w in cancelled["words"][-8:]],
        "echo": cancelled["echo"],
        "texts": [from_file["committed_text"], cancelled["committed_text"]],
        "trace": trace,
    }
    assert said["cancel"] <= said["file"] + CANCEL_OVER_FILE, json.dumps(why, default=str)  # whole, in CI's log
    assert len(echoes) <= CANCEL_ECHO_WORDS, json.dumps(why, default=str)
    unguarded_wer = wer(entry["text"], unguarded["committed_text"])
    unguarded_echoes = echo_words(unguarded["words"], entry["text"])
    assert unguarded_wer > UNGUARDED_WER, (unguarded_wer, unguarded_echoes, unguarded["committed_text"])
