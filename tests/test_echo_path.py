"""The echo path on speakers: the voice's played samples, the simulated room, the canceller and the gate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.audio.echo_canceller import EchoCanceller, erle_db
from engine.audio.kalman_echo import BLOCK
from engine.audio.levels import speech_level
from engine.audio.played_track import PlayedTrack
from engine.audio.room import RoomMicrophone, room_response
from engine.pipeline.bench_echo import echo_words
from engine.pipeline.echo import EchoPath

RATE = 16000


def _speechlike(seconds: float, seed: int) -> np.ndarray:
    """Noise shaped into syllables (4 Hz bursts): broadband like speech, never silent for long."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    envelope = 0.5 * (1 + np.sin(2 * np.pi * 4 * t + seed)) ** 2
    return (0.05 * rng.standard_normal(t.size) * envelope).astype(np.float32)


def test_the_played_track_keeps_samples_where_they_played_and_forgets_beyond_its_length() -> None:
    track = PlayedTrack(keep_s=2.0)
    piece = np.linspace(-0.5, 0.5, RATE, dtype=np.float32)
    track.write(piece, RATE, 1.0)
    assert np.array_equal(track.read(1.0, RATE), piece)
    assert not track.read(0.0, RATE).any() and not track.read(2.0, RATE).any()
    assert track.active(1.2, 1.3) and not track.active(2.1, 2.2)
    track.write(piece, RATE, 5.0)  # 4 s later: the first piece is older than what is kept
    assert not track.read(1.0, RATE).any() and np.array_equal(track.read(5.0, RATE), piece)
    track.write(np.ones(22050, np.float32), 22050, 6.0)  # the voice's own rate, resampled
    assert abs(track.read(6.0, RATE)[RATE // 2] - 1.0) < 0.05 and track.end_s == pytest.approx(7.0, abs=0.01)


def test_the_room_convolves_what_was_played_before_each_slice_in_order() -> None:
    track = PlayedTrack()
    voice = _speechlike(1.0, 1)
    track.write(voice, RATE, 0.5)
    response = room_response(0.3, seed=3)
    assert float(np.sum(response**2)) == pytest.approx(1.0, rel=1e-4) and response[0] > 0.5
    speaker = np.zeros(3 * RATE, np.float32)
    room = RoomMicrophone(speaker, track, echo_gain=0.5, delay_s=0.06, response=response)
    heard = np.concatenate([room[0:7001], room[7001:30000], room[30000 : speaker.size]])
    expected = np.convolve(np.concatenate([np.zeros(int(0.56 * RATE)), voice]), response) * 0.5
    expected = np.pad(expected, (0, speaker.size))[: speaker.size]
    assert np.max(np.abs(heard - expected)) < 1e-4
    assert np.array_equal(room.echo, heard)
    with pytest.raises(ValueError, match="in order"):
        room[0:10]


def _room_echo(far: np.ndarray, delay_s: float = 0.03) -> np.ndarray:
    echo = np.convolve(np.concatenate([np.zeros(int(delay_s * RATE), np.float32), far]), room_response(0.2, 4))
    return (0.5 * echo[: far.size]).astype(np.float32)


@pytest.mark.parametrize(("method", "erle"), [("kalman", 20), ("webrtc", 12)])
def test_the_canceller_removes_a_known_echo_path(method: str, erle: float) -> None:
    far = _speechlike(8.0, 2)
    near = _room_echo(far)
    canceller = EchoCanceller(method)
    out = np.concatenate([canceller.process(near[i : i + 1234], far[i : i + 1234]) for i in range(0, far.size, 1234)])
    out = np.concatenate([out, canceller.flush()])
    assert out.size == near.size and canceller.pending == 0
    last = slice(4 * RATE, None)  # after it has converged
    assert erle_db(near[last], out[last]) > erle
    assert erle_db(near[:RATE], near[:RATE]) == pytest.approx(0.0)
    assert canceller.compute_ratio > 0  # measured; what it costs is bench echo's aec_compute_ratio, not a bound here
    with pytest.raises(ValueError, match="same length"):
        canceller.process(near[:10], far[:11])


def _double_talk(quiet_db: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The speaker over the voice's echo (1.5 s phrases, 0.5 s pauses), the microphone ``quiet_db`` down; the voice
    played at its own level: the far end, the speaker as heard, the echo as heard."""
    far, speaker = _speechlike(10.0, 2), _speechlike(10.0, 7)
    speaker[(np.arange(speaker.size) % (2 * RATE)) >= 1.5 * RATE] = 0.0
    down = np.float32(10 ** (-quiet_db / 20))
    return far, speaker * down, _room_echo(far) * down


def test_the_kalman_canceller_keeps_the_speaker_through_double_talk() -> None:
    """The speaker talks through the voice, pausing between phrases (shadowing): the echo goes, the speaker stays as
    they were."""
    far, speaker, echo = _double_talk(0.0)
    canceller = EchoCanceller("kalman")
    out = canceller.process(speaker + echo, far)[canceller.delay_samples :]  # 20 ms late: aligned with the input
    late = slice(5 * RATE, out.size)
    left = out[late] - speaker[late]  # what is left that is not the speaker: the echo not removed
    assert erle_db(echo[late], left) > 10
    kept = speech_level(out[late]) / speech_level(speaker[late])
    assert 0.9 < kept < 1.1
    assert canceller.raised_db == 0.0  # a microphone at the usual level is not touched


def test_a_quiet_microphone_is_raised_and_keeps_the_speaker_through_double_talk(monkeypatch) -> None:
    """The same 40 dB down (speech about -65 dBFS): the filter's prior, set for the usual level, would let it take
    the speaker for echo (measured: 6 dB of the echo and the speaker's changes left, against 14 raised)."""
    from engine.audio import echo_scale

    far, speaker, echo = _double_talk(40.0)

    def left_db() -> tuple[float, float]:
        canceller = EchoCanceller("kalman")
        out = canceller.process(speaker + echo, far)[canceller.delay_samples :]
        late = slice(5 * RATE, out.size)
        return erle_db(echo[late], out[late] - speaker[late]), canceller.raised_db

    raised, steps = left_db()
    assert raised > 10 and steps >= 24, (raised, steps)
    monkeypatch.setattr(echo_scale, "QUIET_PEAK_DBFS", -300.0)  # never raised
    unraised, steps = left_db()
    assert unraised < 8 and steps == 0, unraised


def test_a_path_learned_at_the_usual_level_waits_for_a_quiet_microphones_level() -> None:
    """The session before was at the usual level; this one's microphone is 40 dB down. Until its level is read
    (half a second of the voice) the restored path, 40 dB too loud for it, would subtract a hundred echoes for one:
    the microphone is passed through instead."""
    far, speaker, echo = _double_talk(0.0)
    learned = EchoCanceller("kalman")
    learned.process(speaker + echo, far)
    far, speaker, echo = _double_talk(40.0)
    canceller = EchoCanceller("kalman")
    canceller.restore(learned.state())
    out = canceller.process(speaker + echo, far)[canceller.delay_samples :]
    first = slice(0, RATE // 2)  # before the first reading
    assert erle_db(echo[first], out[first] - speaker[first]) > -1.0
    assert canceller.raised_db >= 24


def test_the_input_scale_raises_a_quiet_microphone_in_steps_and_lowers_it_when_it_is_loud_again() -> None:
    from engine.audio.echo_scale import STEP_DB, TARGET_PEAK_DBFS, InputScale

    def feed(scale: InputScale, audio: np.ndarray) -> list[float]:
        return [scale.observe(audio[i : i + BLOCK]) for i in range(0, audio.size - BLOCK + 1, BLOCK)]

    loud = _speechlike(4.0, 3)
    scale = InputScale()
    assert scale.waiting  # the filter waits for a first level ...
    scale.observe(loud[:BLOCK] * np.float32(0.01))
    assert scale.waiting
    scale.observe(loud[:BLOCK])
    assert not scale.waiting  # ... unless it heard a block at the usual level
    assert set(feed(scale, loud)) == {1.0} and scale.gain == 1.0
    quiet = np.concatenate([loud] * 3) * np.float32(10 ** (-40 / 20))  # longer than the window of loud blocks
    factors = [f for f in feed(scale, quiet) if f != 1.0]
    assert factors and all(f > 1 for f in factors) and scale.raised_db % STEP_DB == 0 and 30 <= scale.raised_db <= 48
    peak = 10 * np.log10(np.percentile(np.square(quiet * scale.gain).reshape(-1, BLOCK).mean(axis=1), 95))
    assert TARGET_PEAK_DBFS - STEP_DB <= peak <= TARGET_PEAK_DBFS + STEP_DB
    feed(scale, np.concatenate([loud] * 3))  # the loud blocks fill the window again
    assert scale.gain == 1.0


def test_a_filter_raised_before_it_heard_anything_and_lowered_again_is_as_unsure_as_a_new_one() -> None:
    """The silence before the speaker starts is quiet: the microphone is raised, then lowered when they talk. A
    filter that learned nothing meanwhile keeps its prior; one that learned a path scales it with the level."""
    from engine.audio.kalman_echo import KalmanEchoFilter

    new = KalmanEchoFilter()
    prior = new.state()[1].copy()
    new.rescale(64.0)
    new.rescale(1 / 64.0)
    assert np.allclose(new.state()[1], prior)
    far = _speechlike(4.0, 2)
    near = _room_echo(far)
    learned = KalmanEchoFilter()
    for i in range(0, far.size, BLOCK):
        learned.block(near[i : i + BLOCK], far[i : i + BLOCK])
    path, doubt = (a.copy() for a in learned.state())
    learned.rescale(4.0)
    assert np.allclose(learned.state()[0], 4.0 * path) and np.all(learned.state()[1] <= np.maximum(16 * doubt, prior))


def test_a_new_filter_expects_a_room_and_learns_it_sooner_in_double_talk(monkeypatch) -> None:
    """The path's prior is flat over the first 0.1 s of lag and falls after it as a room's echo does: in the first
    seconds of double talk, what is left of the echo is lower than with a prior as unsure of the tail as of the start
    (the speaker's first words over the voice's first words, live)."""
    from engine.audio import kalman_echo

    def echo_left(decay_db_per_s: float) -> float:
        monkeypatch.setattr(kalman_echo, "PRIOR_DECAY_DB_PER_S", decay_db_per_s)
        canceller = EchoCanceller("kalman")
        out = canceller.process(speaker + echo, far)[canceller.delay_samples :]
        first = slice(0, 3 * RATE)
        return float(erle_db(echo[first], out[first] - speaker[first]))

    far, speaker = _speechlike(3.5, 2), _speechlike(3.5, 7)
    echo = _room_echo(far)
    prior = kalman_echo.KalmanEchoFilter()._uncertainty[:, 0]
    flat = int(kalman_echo.PRIOR_FLAT_S * RATE / BLOCK)
    assert np.allclose(prior[: flat + 1], prior[0]) and np.all(np.diff(prior[flat:]) < 0)
    assert np.allclose(kalman_echo.KalmanEchoFilter.for_path("digital")._uncertainty, kalman_echo.DIGITAL_UNCERTAINTY)
    assert echo_left(kalman_echo.PRIOR_DECAY_DB_PER_S) > echo_left(0.0) + 1.0


def test_what_is_left_of_the_echo_alone_is_silenced_and_the_speaker_over_it_is_not() -> None:
    """The recognizer hears words far below the speaker's level: once the filter has converged, a stretch of echo
    alone comes out as silence (the gate), while the speaker talking over the echo comes through."""
    far, speaker = _speechlike(10.0, 2), _speechlike(10.0, 7)
    speaker[: 6 * RATE] = 0.0  # the voice alone for 6 s, then both
    echo = _room_echo(far)
    canceller = EchoCanceller("kalman")
    out = canceller.process(speaker + echo, far)[canceller.delay_samples :]
    alone = slice(4 * RATE, 6 * RATE - BLOCK)
    assert not out[alone].any() and canceller.echo_only_s >= 2.0
    both = slice(7 * RATE, out.size)
    kept = speech_level(out[both]) / speech_level(speaker[both])
    assert 0.9 < kept < 1.1


@pytest.mark.parametrize("method", ["kalman", "webrtc"])
def test_the_canceller_keeps_the_speaker_when_the_voice_is_silent(method: str) -> None:
    speaker = _speechlike(4.0, 5)
    canceller = EchoCanceller(method)
    out = canceller.process(speaker, np.zeros_like(speaker))
    assert out.size == speaker.size // canceller.frame * canceller.frame
    out = out[canceller.delay_samples :]
    kept = speech_level(out[RATE:]) / speech_level(speaker[RATE : out.size])
    if method == "kalman":  # untouched, not only as loud (WebRTC's filters the capture: high-pass)
        assert np.max(np.abs(out[RATE:] - speaker[RATE : out.size])) < 1e-4
    assert 0.7 < kept < 1.3
    with pytest.raises(ValueError, match="one of kalman, webrtc"):
        EchoCanceller("speex")


def test_the_gate_silences_the_microphone_while_the_track_plays_and_for_its_tail() -> None:
    track = PlayedTrack()
    track.write(np.full(RATE, 0.3, np.float32), RATE, 1.0)  # the voice plays from 1 s to 2 s
    path = EchoPath("gate", track)
    mic = np.full(3 * RATE, 0.1, np.float32)
    out = path.process(mic, 0.0)
    assert out.size == mic.size
    assert out[: int(0.9 * RATE)].all() and not out[int(1.1 * RATE) : int(2.3 * RATE)].any()
    assert out[int(2.6 * RATE) :].all() and path.gated_s == pytest.approx(1.5, abs=0.11)
    assert path.report()["guard"] == "gate"
    with pytest.raises(ValueError):
        EchoPath("loud", track)


def test_echo_words_are_inserted_words_the_voice_had_just_said() -> None:
    def word(text: str, start: float, speak_end: float | None) -> dict:
        return {"text": text, "source_start_s": start, "source_end_s": start + 0.3, "speak_end_s": speak_end}

    words = [
        word("the", 0.0, 2.0),
        word("cat", 0.4, 2.4),
        word("sat", 0.8, 2.8),
        word("cat", 2.6, 4.5),
        word("down", 3.0, 5.0),
        word("sat", 9.0, 11.0),
    ]
    # "cat" heard again 0.2 s after the voice said it: an echo; the last "sat" came 6 s after: not one
    assert echo_words(words, "The cat sat down") == ["cat"]
    assert echo_words(words[:3], "the cat sat") == []
    assert echo_words([], "anything") == []


@pytest.mark.slow
def test_bench_echo_shadows_in_a_room_and_cancel_stops_the_echo(tmp_path, speech_manifest, speech_dir, shadow_models):
    """The real voice in a simulated room: unguarded, it is heard and spoken again; cancelled, it is not."""
    from engine.metrics import names as m
    from engine.pipeline.bench_echo import format_table, run_bench

    entry = next(e for e in speech_manifest if e["id"] == "ls_61-70968-0000")  # 4.9 s
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({**entry, "wav": str(speech_dir / entry["wav"])}) + "\n")
    report = run_bench(manifest, routes=("off", "cancel"), models=shadow_models, ablate=True)
    off, cancel = report["results"]["off"], report["results"]["cancel"]
    # the room played the voice at about the asked level (-7.5 and -7.8 dB heard for -6 asked, Intel Xeon VM): a
    # failure below then is the recognizer's, not a voice that never reached the microphone
    assert off[m.ECHO_HEARD_DB] > report["config"]["echo_db"] - 6, off
    # unguarded, the voice is heard: its words spoken again (1 and 14 in two runs here, AMD EPYC VM; 8-13 on the
    # 11.7 s passage), or in one CI run none of them but the speaker's words lost under it; either way far from the
    # transcript (WER 0.82 and 0.94, against 0.24 and 0.35 cancelled)
    assert off[m.ECHO_WORDS] > 0 or off[m.WER_COMMITTED] > 0.3, off
    # cold on its one recording, cancel let one word through in one of two CI runs (the whole set: docs/RESULTS.md)
    assert cancel[m.ECHO_WORDS] <= 1
    assert cancel[m.WER_COMMITTED] < off[m.WER_COMMITTED]
    assert cancel[m.ERLE_DB] > 6 and 0 < cancel[m.AEC_COMPUTE_RATIO] < 0.1
    assert off[m.ERLE_DB] is None and off[m.AEC_COMPUTE_RATIO] is None
    assert cancel[m.EAR_VOICE_LAG_S]["n"] > 10
    assert "cancel" in format_table(report) and report["config"]["echo_db"] == -6.0
    # the recognizer apart from the session on the cancel route's signals: the speaker alone is heard as read
    signals = report["ablation"]["signals"]
    assert set(signals) == {"speaker", "microphone", "cancelled"} and report["ablation"]["recordings"] == 1
    assert signals["speaker"]["la2"] < 0.2 and signals["speaker"]["stock_offline"] < 0.2, signals
    assert all(0 <= row["la2"] <= 1 and row["texts"][entry["id"]] for row in signals.values()), signals
    assert "cancelled" in format_table(report)
    # the canceller leaves less of the voice in the speaker's pauses than the microphone heard
    assert signals["cancelled"]["echo_left_db"] < signals["microphone"]["echo_left_db"] - 6, signals
    assert "echo_left_db" not in signals["speaker"] and "echo_left_db" in format_table(report)
    assert signals["cancelled"]["per_recording"][entry["id"]]["speaker_kept_db"] > 0


def test_the_ablations_signals_are_the_speaker_the_microphone_and_the_aligned_canceller_output() -> None:
    from types import SimpleNamespace

    from engine.pipeline.echo_ablation import heard_signals

    speaker = np.linspace(-0.1, 0.1, 1000, dtype=np.float32)
    echo = np.full(1000, 0.01, np.float32)
    room = SimpleNamespace(speaker=speaker, echo=echo, noise_level=0.0)
    heard = heard_signals("r", "words", room, np.ones(600, np.float32), seed=3)  # type: ignore[arg-type]
    assert np.array_equal(heard.speaker, speaker) and np.allclose(heard.microphone, speaker + echo)
    assert heard.cancelled.size == 1000 and heard.cancelled[:600].all() and not heard.cancelled[600:].any()
    noisy = heard_signals("r", "words", SimpleNamespace(speaker=speaker, echo=echo, noise_level=0.01), np.ones(1), 3)
    assert 0.005 < float(np.std(noisy.microphone - speaker - echo)) < 0.02


def test_the_ablations_figures_are_the_speaker_kept_while_talking_and_the_echo_left_in_the_pauses() -> None:
    from engine.pipeline.echo_ablation import HeardSignals, signal_figures

    rng = np.random.default_rng(5)
    speaker = (0.1 * rng.standard_normal(2 * RATE)).astype(np.float32)
    speaker[RATE:] = 0.0  # talks for a second, then silent
    echo = (0.01 * rng.standard_normal(2 * RATE)).astype(np.float32)  # 20 dB under the speaker's level
    damaged = speaker * np.float32(0.5) + echo * np.float32(0.01)  # the speaker halved, the echo 40 dB down
    heard = HeardSignals("r", "words", speaker, speaker + echo, damaged)
    kept, left = signal_figures(heard, "microphone")
    assert kept == pytest.approx(20.0, abs=0.5) and left == pytest.approx(-20.0, abs=0.5)
    kept, left = signal_figures(heard, "cancelled")
    assert kept == pytest.approx(6.0, abs=0.5) and left == pytest.approx(-60.0, abs=0.5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "shadow", "--echo-db", "-6"], "--echo-db and --echo-delay-ms are for bench echo"),
        (["bench", "echo", "--echo-db", "40", "--manifest", "MANIFEST"], "the echo level must be between"),
        (["bench", "echo", "--echo-delay-ms", "5000", "--manifest", "MANIFEST"], "the echo delay must be between"),
        (["shadow", "x.wav", "--echo-guard", "cancel", "--echo-hint-ms", "-3"], "echo delay hint"),
    ],
)
def test_bad_echo_options_are_named(argv, message, tmp_path, capsys) -> None:
    from engine import cli

    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"id": "a", "wav": str(tmp_path / "a.wav"), "text": "a"}) + "\n")
    argv = [str(manifest) if a == "MANIFEST" else a for a in argv]
    assert cli.main(argv) == cli.EXIT_USAGE
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("delay_s", [0.06, 0.3])
def test_the_echo_delay_is_measured_through_double_talk(delay_s: float) -> None:
    from engine.audio.echo_delay import EchoDelayEstimator

    far, speaker = _speechlike(8.0, 3), _speechlike(8.0, 9)
    lag = int(delay_s * RATE)
    near = speaker + 0.4 * np.concatenate([np.zeros(lag, np.float32), far[:-lag]])
    estimator, settled = EchoDelayEstimator(), []
    for i in range(0, far.size, 1600):
        found = estimator.add(near[i : i + 1600], far[i : i + 1600])
        if found is not None:
            settled.append((i / RATE, found))
    assert len(settled) == 1 and settled[0][1] == pytest.approx(delay_s, abs=0.002)
    assert settled[0][0] < 4.0  # two measurements agreed within the first seconds
    quiet = EchoDelayEstimator()
    assert all(quiet.add(near[i : i + 1600], np.zeros(1600, np.float32)) is None for i in range(0, far.size, 1600))
    assert quiet.delay_s is None  # no voice played: nothing to measure


def test_an_echo_that_comes_before_its_play_time_is_measured_and_read_later() -> None:
    """Live, a session may put the voice's play times later than they were (the output's latency is estimated):
    the echo then leads the reference, and the reference is read that much later."""
    from engine.audio.echo_delay import EchoDelayEstimator

    far, speaker = _speechlike(8.0, 5), _speechlike(8.0, 6)
    lead = int(0.12 * RATE)
    near = speaker + 0.4 * np.concatenate([far[lead:], np.zeros(lead, np.float32)])
    estimator = EchoDelayEstimator()
    found = [f for i in range(0, far.size, 1600) if (f := estimator.add(near[i : i + 1600], far[i : i + 1600]))]
    assert found and found[0] == pytest.approx(-0.12, abs=0.002)
    track = PlayedTrack()
    track.write(far, RATE, 0.0)
    path, echo = EchoPath("cancel", track), near - speaker  # the voice alone: a canceller can only follow it later
    out = np.concatenate([path.process(echo[i : i + 1600], i / RATE) for i in range(0, echo.size, 1600)])
    assert path.shift_s == pytest.approx(-0.14, abs=0.003)
    late = slice(6 * RATE, 7 * RATE)
    delay = path.canceller.delay_samples
    assert erle_db(echo[late], out[late.start + delay : late.stop + delay]) > 15


def test_a_learned_path_is_moved_to_where_the_next_sessions_echo_comes() -> None:
    """The next session's clocks line up 40 ms differently: the learned path, moved by that, cancels at once."""
    from engine.pipeline.echo import EchoMemory

    memory, far = EchoMemory(), _speechlike(8.0, 2)
    track = PlayedTrack()
    track.write(far, RATE, 0.0)
    first = EchoPath("cancel", track, memory=memory, route=("mic", "speakers"))
    first.process(_room_echo(far), 0.0)
    first.remember()
    near = _room_echo(far, delay_s=0.07)  # the same room, 40 ms later on this session's clock
    again = EchoPath("cancel", track, memory=memory, route=("mic", "speakers"))
    out = np.concatenate([again.process(near[i : i + 1600], i / RATE) for i in range(0, near.size, 1600)])
    assert again.warm and again.delay.delay_s == pytest.approx(first.delay.delay_s + 0.04, abs=0.002)
    moved = slice(4 * RATE, 5 * RATE)  # soon after the delay was measured
    delay = again.canceller.delay_samples
    assert erle_db(near[moved], out[moved.start + delay : moved.stop + delay]) > 15


def test_a_digital_copy_is_measured_at_once_and_the_filter_starts_from_it() -> None:
    from engine.audio.echo_delay import EchoDelayEstimator

    far, speaker = _speechlike(3.0, 4), _speechlike(3.0, 8)
    near = speaker + np.concatenate([np.zeros(80, np.float32), far[:-80]])  # the voice itself, 5 ms late
    estimator = EchoDelayEstimator(digital=True)
    found = [f for i in range(0, far.size, 1600) if (f := estimator.add(near[i : i + 1600], far[i : i + 1600]))]
    assert found and found[0] == pytest.approx(0.005, abs=0.001)
    canceller = EchoCanceller(path="digital")
    canceller.seed_delay(found[0])
    out = canceller.process(near, far)[canceller.delay_samples :]
    left = out - speaker[: out.size]
    assert erle_db(near[: out.size] - speaker[: out.size], left) > 15  # from the first block on


def test_the_next_session_on_the_same_route_starts_from_the_learned_path() -> None:
    from engine.pipeline.echo import EchoMemory

    memory, track = EchoMemory(), PlayedTrack()
    far = _speechlike(6.0, 2)
    track.write(far, RATE, 0.0)
    near = _room_echo(far)
    first = EchoPath("cancel", track, memory=memory, route=("mic", "speakers"))
    first.process(near, 0.0)
    first.remember()
    assert first.report()["warm_start"] is False
    again = EchoPath("cancel", track, memory=memory, route=("mic", "speakers"))
    other = EchoPath("cancel", track, memory=memory, route=("usb mic", "speakers"))
    assert again.warm and not other.warm
    late = slice(RATE, 2 * RATE)  # its first second: the learned path already cancels
    assert erle_db(near[late], again.process(near[: 2 * RATE], 0.0)[late]) > 15
    for number in range(EchoMemory.MAX_ROUTES + 2):
        memory.put(("route", number), None, 0.0)
    assert memory.get(("route", 0)) is None and memory.get(("route", EchoMemory.MAX_ROUTES + 1)) is not None


def test_a_capture_time_creeping_a_few_ms_a_block_keeps_the_reference_read_and_a_dropped_block_re_reads_it() -> None:
    """A live capture's block times on the session clock creep while its origin estimate settles (6-8 ms a block
    over the first second on the test server, 55-80 ms in all): summed against the anchor, that re-read the track
    60 ms off late in a session. Only a jump between two blocks (one dropped) re-reads it."""
    far = _speechlike(4.0, 2)
    track = PlayedTrack()
    track.write(far, RATE, 0.0)
    near = np.concatenate([np.zeros(80, np.float32), far[:-80]])  # the voice itself, 5 ms late
    block = 1600  # 0.1 s
    path = EchoPath("cancel", track, path="digital")
    for number, first in enumerate(range(0, 20 * block, block)):
        creep_s = -0.007 * min(number, 10)  # 70 ms earlier in all, 7 ms a block
        path.process(near[first : first + block], first / RATE + creep_s)
    assert path.reanchored == 0
    dropped = 21 * block  # block 20 never came
    path.process(near[dropped : dropped + block], dropped / RATE - 0.07)
    assert path.reanchored == 1


def test_the_echo_delay_is_followed_to_the_sample_once_it_settled() -> None:
    from engine.audio.echo_delay import EchoDelayEstimator

    far, speaker = _speechlike(10.0, 3), _speechlike(10.0, 9)
    lag, slip, at = 960, 3, 5 * RATE  # 60 ms, then 3 samples more from 5 s on
    echo = np.concatenate([np.zeros(lag, np.float32), far[:-lag]])
    echo[at:] = np.concatenate([np.zeros(lag + slip, np.float32), far])[at : far.size]
    estimator, followed = EchoDelayEstimator(), {}
    for i in range(0, far.size, 1600):
        estimator.add(speaker[i : i + 1600] + 0.4 * echo[i : i + 1600], far[i : i + 1600])
        followed[i + 1600] = estimator.tracked_s
    assert estimator.delay_s == pytest.approx(lag / RATE, abs=1e-4)  # settled once: the slip is far under 20 ms
    assert followed[at] is not None and followed[at] * RATE == pytest.approx(lag, abs=0.5)
    assert followed[far.size] * RATE == pytest.approx(lag + slip, abs=0.5)
    assert followed[at + RATE + 1600] * RATE == pytest.approx(lag + slip, abs=0.5)  # within a second of the slip


@pytest.mark.parametrize("slip", [8, -3])  # 0.5 ms later, 3 samples sooner
def test_a_playback_that_slipped_is_followed_and_its_echo_stays_cancelled(slip: int, monkeypatch) -> None:
    """The voice plays ``slip`` samples off what the session says from 8 s on (a sound server that played a late
    block's silence): the reference read moves with it, and the echo after the speaker stopped is removed as well as
    before; a filter left to learn the moved path again removes a few dB of it (the voice's words heard again)."""
    from engine.pipeline import echo as echo_module

    far, speaker = _speechlike(13.0, 4), _speechlike(13.0, 7)
    speaker[10 * RATE :] = 0.0  # the speaker stops at 10 s; the voice goes on
    played = far.copy()  # what the speakers really played
    at = 8 * RATE
    played[at:] = np.roll(far, slip)[at:]
    echo = _room_echo(played)
    near = speaker + echo
    track = PlayedTrack()
    track.write(far, RATE, 0.0)

    def tail_erle() -> tuple[float, int]:
        path = EchoPath("cancel", track)
        out = np.concatenate([path.process(near[i : i + 1600], i / RATE) for i in range(0, near.size, 1600)])
        tail, delay = slice(11 * RATE, 12 * RATE), path.canceller.delay_samples
        erle = erle_db(echo[tail], out[tail.start + delay : tail.stop + delay])
        assert erle is not None
        return erle, path.follows

    followed, follows = tail_erle()
    monkeypatch.setattr(echo_module, "FOLLOW_MAX_S", 0.0)
    learned_again, none = tail_erle()
    assert follows == 1 and none == 0
    assert followed > 25 and learned_again < followed - 10, (followed, learned_again)
