"""Speakers, for real: the virtual speaker's sound reaches the virtual microphone through ``module-loopback`` (60 ms
late, 6 dB down) while a recording plays into the microphone. With the echo guard ``cancel`` the session commits
close to what the same session commits with no loopback (headphones), and few of the voice's words again; with the
guard off, the voice's words come back (what cancel is for, and the proof that the loopback is heard). The loopback
keeps a fixed latency (``adjust_time=0``), as a laptop's own speakers and microphone on one clock do: the canceller
does not follow two devices' clocks drifting apart (see docs/DESIGN.md)."""

from __future__ import annotations

import time

import pytest

from engine.audio.sound_server import volume_factor
from engine.metrics.wer import wer
from engine.pipeline.bench_echo import echo_words
from engine.pipeline.config import ShadowConfig
from engine.pipeline.records import State
from engine.pipeline.session import ShadowSession
from engine.pipeline.sources import open_source
from tests import virtual_audio as va

pytestmark = pytest.mark.audio
RECORDING = "ls_2412-153948-0000"  # 11.7 s
ECHO_DB = 6.0
TAIL_S = 3.0  # the microphone listens on while the voice finishes (and is heard)
# The target against headphones, the first session on the route: 0.05 (one word of 36). Before a word Whisper
# wrote on the quiet after the last word was dropped (speech_filter.without_quiet_tail) it held in 8 of 10 sessions,
# 0.111 once in CI; after, 0.0-0.028 in six (docs/RESULTS.md). No echo word is allowed. With no guard, 0.25-0.81: the
# echo comes back, as repeated phrases the echo-word count does not always catch (0-17 of them), so the unguarded
# check is on the WER.
CANCEL_WER, CANCEL_ECHO_WORDS, UNGUARDED_WER = 0.05, 0, 0.2


def _session(audio: va.VirtualAudio, models, wav, guard: str) -> dict:
    devices = {"input_device": f"pulse:{va.MIC_SOURCE}", "output_device": f"pulse:{va.SPEAKER_SINK}"}
    config = ShadowConfig(echo_guard=guard, **devices)
    source = open_source("mic", config)
    session = ShadowSession(source.config, models)
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
    return session.figures.report()


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
    virtual_audio, shadow_models, speech_dir, speech_manifest
) -> None:
    """The first session on the route learns the room while the speaker talks over the voice, and commits close to
    what headphones commit, none of the voice's words among them; with no guard the voice's words come back.
    (The sessions after it start from what it learned: tests/test_echo_path.py, and docs/RESULTS.md for real.)"""
    entry = next(e for e in speech_manifest if e["id"] == RECORDING)
    wav = speech_dir / entry["wav"]
    headphones = _session(virtual_audio, shadow_models, wav, "off")
    module = _loopback(virtual_audio)
    try:
        cancelled = _session(virtual_audio, shadow_models, wav, "cancel")
        unguarded = _session(virtual_audio, shadow_models, wav, "off")
    finally:
        virtual_audio.pactl("unload-module", module)
    assert not cancelled["echo"]["warm_start"] and cancelled["echo"]["measured_delay_ms"] is not None
    measured = {}
    for name, report in (("cancel", cancelled), ("off", unguarded)):
        measured[name] = (
            wer(headphones["committed_text"], report["committed_text"]),
            len(echo_words(report["words"], entry["text"])),
        )
    measured["texts"] = [report["committed_text"] for report in (headphones, cancelled, unguarded)]
    assert measured["cancel"][0] <= CANCEL_WER and measured["cancel"][1] <= CANCEL_ECHO_WORDS, measured
    assert measured["off"][0] > max(UNGUARDED_WER, measured["cancel"][0] + 0.1), measured
