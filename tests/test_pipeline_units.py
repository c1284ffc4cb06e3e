"""Pipeline parts without models: word keys, shadowing metrics on constructed timelines, recorder, echo gate."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest

from engine.audio.block import AudioBlock
from engine.metrics.shadowing import chunk_delay_s, ear_voice_lag_s, lag_drift_s
from engine.pipeline.config import ShadowConfig
from engine.pipeline.echo import EchoGate
from engine.pipeline.recorder import INPUT_WAV, METRICS, OUTPUT_WAV, TRANSCRIPT, RecorderError, SessionRecorder
from engine.tts.keys import SentenceKeys
from engine.tts.timeline import PlaybackTimeline, simulate_playback


def test_sentence_keys_follow_sentence_ends() -> None:
    keys = SentenceKeys()
    got = [key for word in ["Hello", "there.", "How", "are", "you?", "Fine"] for _, key in keys.tokens(word)]
    assert got == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (2, 0)]
    assert keys.end_sentence() == 2
    assert keys.end_sentence() is None  # an empty sentence is not counted
    assert keys.tokens("again")[0][1] == (3, 0)
    keys.cancel()
    assert keys.tokens("new")[0][1] == (4, 0)


def test_ear_voice_lag_and_chunk_delay_on_a_constructed_timeline() -> None:
    # three words end at 1, 2, 3 s in the source; their audio finishes playing at 2.5, 3.5, 5.0 s
    assert [ear_voice_lag_s(p, s) for p, s in [(2.5, 1.0), (3.5, 2.0), (5.0, 3.0)]] == [1.5, 1.5, 2.0]
    # two chunks: ends playing at 3.5 (last word ended 2.0) and 5.0 (3.0): mean of 1.5 and 2.0
    assert chunk_delay_s([(3.5, 2.0), (5.0, 3.0)]) == pytest.approx(1.75)
    assert chunk_delay_s([]) is None


def test_lag_drift_is_the_slope_in_seconds_per_minute() -> None:
    t = np.linspace(0, 120, 200)  # two minutes of words
    assert lag_drift_s(t, 2.0 + 0.25 * t / 60.0) == pytest.approx(0.25)
    assert lag_drift_s(t, np.full_like(t, 2.0)) == pytest.approx(0.0, abs=1e-9)
    rng = np.random.default_rng(0)
    assert abs(lag_drift_s(t, 2.0 + 0.3 * rng.standard_normal(t.size))) < 0.2  # noise, no trend
    assert lag_drift_s([1.0, 2.0], [1.0, 1.0]) is None  # too few words
    assert lag_drift_s([0.0, 1.0, 2.0], [1.0, 2.0, 3.0]) is None  # too short to mean anything


def test_incremental_playback_timeline_matches_the_batch_one() -> None:
    rng = np.random.default_rng(3)
    ready = np.cumsum(rng.uniform(0.05, 0.8, 40))
    audio = rng.uniform(0.2, 0.6, 40)
    inputs = ready - rng.uniform(0.0, 0.5, 40)
    batch = simulate_playback(ready, audio, inputs)
    playback = PlaybackTimeline()
    spans = [playback.add(r, a, i) for r, a, i in zip(ready, audio, inputs, strict=True)]
    assert [s for s, _ in spans] == batch.start_s and [e for _, e in spans] == batch.end_s
    assert playback.timeline.underruns == batch.underruns and playback.timeline.starved_s == batch.starved_s


def test_recorder_files_are_valid_before_close(tmp_path: Path) -> None:
    recorder = SessionRecorder(tmp_path / "session", 16000, 22050)
    recorder.input_audio(np.full(16000, 0.25, np.float32))
    recorder.output_audio(np.full(2205, 0.5, np.float32), start_s=1.0)  # 1 s of silence is written first
    recorder.output_audio(np.full(2205, 0.5, np.float32), start_s=1.05)  # starts before the last ended: no gap
    recorder.transcript({"event": "committed", "text": "hello", "lag": float("inf")})
    recorder.metrics({"t_s": 1.0})
    recorder._flush()  # what the once-a-second flush does; a crash now must leave readable files
    with wave.open(str(tmp_path / "session" / INPUT_WAV)) as w:
        assert (w.getframerate(), w.getnframes()) == (16000, 16000)
    with wave.open(str(tmp_path / "session" / OUTPUT_WAV)) as w:
        frames = np.frombuffer(w.readframes(w.getnframes()), "<i2")
    assert frames.size == 22050 + 2 * 2205 and frames[:22050].max() == 0 and frames[-1] > 16000
    line = json.loads((tmp_path / "session" / TRANSCRIPT).read_text().splitlines()[0])
    assert line == {"event": "committed", "text": "hello", "lag": None}
    recorder.close()
    recorder.input_audio(np.zeros(10, np.float32))  # after close: ignored, no crash
    assert (tmp_path / "session" / METRICS).read_text().strip() == '{"t_s": 1.0}'


def test_recorder_reports_a_folder_it_cannot_create(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RecorderError, match="cannot record"):
        SessionRecorder(blocker / "session", 16000, 22050)


def test_echo_gate_mutes_while_the_voice_plays_and_for_a_tail() -> None:
    playing = {"on": False}
    gate = EchoGate(lambda now: playing["on"], tail_s=0.3)
    block = AudioBlock(np.ones(1600, np.float32), 16000)
    assert gate.apply(block, 0.0).samples.max() == 1.0
    playing["on"] = True
    assert gate.apply(block, 1.0).samples.max() == 0.0
    playing["on"] = False
    assert gate.apply(block, 1.2).samples.max() == 0.0  # the tail
    assert gate.apply(block, 1.5).samples.max() == 1.0
    assert gate.gated_s == pytest.approx(0.2)


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="echo guard"):
        ShadowConfig(echo_guard="loud")
    with pytest.raises(ValueError, match="voice rate"):
        ShadowConfig(voice_rate=5.0)
    with pytest.raises(ValueError, match="phrase chunk"):
        ShadowConfig(phrase_chunk=-1)
    assert ShadowConfig.from_dict({"k": 2, "unknown": 1}).k == 2
    with pytest.raises(ValueError, match="recognizer steps must be positive"):
        ShadowConfig(interpret_step_s=0)


def test_interpreting_steps_the_recognizer_less_often() -> None:
    """Translation hypotheses need more new audio between them than transcripts before local agreement trusts them."""
    assert ShadowConfig().step_s == ShadowConfig().min_step_s == 0.3
    assert ShadowConfig(translate_from="es").step_s == ShadowConfig().interpret_step_s == 0.75
    assert ShadowConfig(translate_from="auto", min_step_s=1.5).step_s == 1.5
