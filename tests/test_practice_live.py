"""Live practice through the virtual devices: the source plays on the virtual speaker, an attempt is heard on the
virtual microphone, and the session's figures (live and scored) are checked against known truth and against the
offline scoring of the same files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import load_audio
from engine.practice.live import ATTEMPT_FILE, TAIL_S, PracticeSession, PracticeState
from engine.practice.marks import WordState
from tests import virtual_audio as va

pytestmark = [pytest.mark.audio, pytest.mark.slow]

SOURCE_ID = "ls_2412-153948-0000"  # 11.7 s, 36 words
SHORT_ID = "ls_61-70968-0000"  # 4.9 s, 17 words: a delay is measured as well on it, in half the time
DELAY_S = 1.0


@pytest.fixture(scope="module")
def practice_backend():
    from engine.practice.attempt import load_recognizer

    return load_recognizer("en")


def _source(speech_dir: Path, speech_manifest: list[dict], recording: str = SOURCE_ID) -> Path:
    return speech_dir / next(e for e in speech_manifest if e["id"] == recording)["wav"]


def _run(session: PracticeSession, on_playing=None) -> list:
    """Start, call ``on_playing`` once the source is heard, take a snapshot every 0.2 s until the end."""
    session.prepare()
    session.start()
    snaps, called = [], False
    while not session.wait(0.2):
        snap = session.snapshot()
        snaps.append(snap)
        if on_playing is not None and not called and snap.position_s > 0:
            on_playing()
            called = True
        assert time.monotonic() < deadline[0], "the session did not end"
    assert session.state is PracticeState.DONE, session.error
    return snaps


deadline = [0.0]


def test_the_speaker_heard_as_the_microphone_has_an_ear_voice_span_of_zero(
    virtual_audio: va.VirtualAudio,
    speech_dir: Path,
    speech_manifest: list[dict],
    tmp_path: Path,
    practice_backend,
    data_dir: Path,
) -> None:
    """The microphone is the speaker's monitor: the attempt is the source as it played, to the sample, so every word
    is said with an EVS of 0 — whatever the devices' latencies, which the session must place on one clock."""
    source = _source(speech_dir, speech_manifest, SHORT_ID)
    virtual_audio.pactl("set-default-source", va.SPEAKER_MONITOR)
    # a listener at 10 ms keeps the monitor delivering as a device does (test_play_times), not in late bursts
    try:
        with virtual_audio.listening(va.SPEAKER_MONITOR):
            session = PracticeSession(source, record_dir=tmp_path / "rec", backend=practice_backend)
            deadline[0] = time.monotonic() + 120
            snaps = _run(session)
    finally:
        virtual_audio.pactl("set-default-source", va.MIC_SOURCE)
    report = session.report
    assert report is not None
    evs = report["evs_s"]
    assert evs["n"] >= 14 and abs(evs["median"]) < 0.1, evs  # of its 17 words
    assert abs(report["live"]["evs_s"]["median"]) < 0.1, report["live"]
    assert report["missed_words"] <= 2 and report["accuracy"] >= 0.9
    # the marks, five times a second: words were said while the source still played, none counted before it played
    during = [s for s in snaps if s.state is PracticeState.RUNNING and 0 < s.position_s < s.duration_s]
    assert len(during) >= 5 * 3
    assert any(s.median_evs_s is not None for s in during)
    for snap in during:
        assert all(w.state is WordState.AHEAD for w in snap.words if w.start_s > snap.position_s + 0.5)
    # the pace-setter: the machine shadowing the same recording, kept for the next attempt
    machine = report["machine_lag_s"]
    assert machine["n"] >= 12 and 0.3 < machine["median"] < 5.0, machine
    assert any(s.pace for s in during) and len(list((data_dir / "pace-setter").glob("*.json"))) == 1
    recorded = load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    played = load_audio(source)
    assert abs(recorded.size / 16000 - (played.size / 16000 + TAIL_S)) < 1.0  # the source and the tail


def test_a_delayed_attempt_on_the_microphone_scores_as_the_same_files_offline(
    virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path, practice_backend
) -> None:
    """A copy of the source, 1 s late, played into the microphone once the source is heard: the live figures equal
    the offline scoring of the session's recording within 0.1 s, and both equal the delay the copy arrived with
    (found in the recording by correlation)."""
    from engine.practice.attempt import practice_file

    source = _source(speech_dir, speech_manifest, SHORT_ID)
    audio, rate = sf.read(str(source), dtype="float32")
    attempt = tmp_path / "attempt_in.wav"
    sf.write(str(attempt), np.concatenate([np.zeros(int(DELAY_S * rate), np.float32), audio]), rate)
    session = PracticeSession(source, record_dir=tmp_path / "rec", backend=practice_backend, pace_setter=False)
    deadline[0] = time.monotonic() + 120
    players = []
    _run(session, on_playing=lambda: players.append(virtual_audio.play_into_mic(attempt)))
    players[0].wait(timeout=10)
    report = session.report
    assert report is not None
    recorded = load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    score, lag = va.aligned_correlation(recorded, load_audio(source))
    truth = lag / 16000
    assert score > 0.9 and DELAY_S < truth < DELAY_S + 1.0
    offline = practice_file(source, tmp_path / "rec" / ATTEMPT_FILE, backend=practice_backend)
    live, scored = report["live"]["evs_s"]["median"], report["evs_s"]["median"]
    assert abs(live - offline["evs_s"]["median"]) < 0.1, (live, offline["evs_s"])
    assert scored == pytest.approx(offline["evs_s"]["median"], abs=1e-9)  # the session scored what it kept (16-bit)
    assert abs(scored - truth) < 0.1, (scored, truth)
    assert report["missed_words"] <= 2
    saved = json.loads((tmp_path / "rec" / "practice.json").read_text())
    assert saved["evs_s"]["median"] == scored


def test_the_command_plays_the_source_scores_the_person_and_keeps_the_recording(
    virtual_audio: va.VirtualAudio,
    speech_dir: Path,
    speech_manifest: list[dict],
    tmp_path: Path,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
    passage_file_session: dict,
) -> None:
    """``liveshadow practice SOURCE --live``: progress on stderr while the source plays, the report on stdout, the
    recording kept, the attempt in the history. The pace-setter is the one kept from an earlier attempt (the source's
    default file session, tests/conftest.py); the first attempt's own run is checked above."""
    from engine import cli
    from engine.practice import history
    from engine.practice.pace_setter import PaceSetter, keep

    source = _source(speech_dir, speech_manifest)  # passage_file_session's recording
    keep(PaceSetter.of_session(passage_file_session), source)
    # the person begins 3.5 s after the session: after the microphone's first block (0.4-1.9 s here) and the lead-in
    audio, rate = sf.read(str(source), dtype="float32")
    person = tmp_path / "person.wav"
    sf.write(str(person), np.concatenate([np.zeros(int(3.5 * rate), np.float32), audio]), rate)
    command = [
        sys.executable,
        "-m",
        "engine",
        "practice",
        str(source),
        "--live",
        "--record",
        str(tmp_path / "rec"),
        "--json",
    ]
    env = {**virtual_audio.env(), "LIVESHADOW_DATA_DIR": str(data_dir)}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    speaking = None
    try:
        assert process.stderr is not None
        lines = []
        for line in process.stderr:
            lines.append(line)
            if line.startswith("liveshadow: shadow this"):
                break
        speaking = virtual_audio.play_into_mic(person)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        if speaking is not None:
            speaking.wait(timeout=30)
    assert process.returncode == cli.EXIT_OK, "".join(lines) + err
    report = json.loads(out)
    assert report["command"] == "practice --live" and report["accuracy"] > 0.8 and report["evs_s"]["n"] > 25
    assert report["machine_lag_s"]["median"] > 0.3 and "said " in err and "EVS last" in err
    assert (tmp_path / "rec" / ATTEMPT_FILE).is_file() and len(history.attempts(source)) == 1
    for argv, message in (
        (["--live", "--voice", str(source)], "not with --voice"),
        (["--record", str(tmp_path)], "are for --live"),
    ):
        assert cli.main(["practice", str(source), *argv]) == cli.EXIT_USAGE
        assert message in capsys.readouterr().err


def test_a_headset_unplugged_mid_practice_is_named_and_what_was_said_is_still_scored_and_kept(
    disposable_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path, practice_backend
) -> None:
    source = _source(speech_dir, speech_manifest)
    session = PracticeSession(source, record_dir=tmp_path / "rec", backend=practice_backend, pace_setter=False)
    session.prepare()
    session.start()
    while session.snapshot().position_s <= 0:
        assert not session.wait(0.05), session.error
    speaking = disposable_audio.play_into_mic(source)
    time.sleep(6.0)  # mid-sentence
    disposable_audio.remove_devices()
    assert session.wait(30)
    speaking.wait(timeout=10)
    assert session.state is PracticeState.FAILED and session.error
    assert "stopped" in session.error and "unplugged" in session.error, session.error
    report = session.report
    assert report is not None and report["evs_s"]["n"] >= 5  # the words said before
    assert (tmp_path / "rec" / ATTEMPT_FILE).is_file() and (tmp_path / "rec" / "practice.json").is_file()


def test_a_live_interpreting_practice_is_timed_per_sentence_as_its_recording_is_offline(
    virtual_audio: va.VirtualAudio, speech_xx_dir: Path, tmp_path: Path, practice_backend
) -> None:
    """The source in Spanish on the virtual speaker; the person (the English voice saying the reference translation)
    begins 1 s after the source ends. The session waits for them past its usual tail, and its sentence lag is the one
    built in, and the one of the kept recording scored offline."""
    from engine.asr.vad import SileroVad, speech_flags
    from engine.cli import main
    from engine.practice.interpreting import interpret_practice_file, load_translator

    source = speech_xx_dir / "wav" / "cv_es_19599961.wav"
    entry = next(
        json.loads(line)
        for line in (speech_xx_dir / "manifest.jsonl").read_text().splitlines()
        if '"cv_es_19599961"' in line
    )
    spoken = tmp_path / "spoken.wav"
    assert main(["speak", entry["translation"].lower(), "--out", str(spoken)]) == 0
    voice, source_audio = load_audio(spoken), load_audio(source)
    person = tmp_path / "person.wav"
    sf.write(str(person), np.concatenate([np.zeros(source_audio.size + 16000, np.float32), voice]), 16000)
    session = PracticeSession(
        source, "es", record_dir=tmp_path / "rec", backend=practice_backend, pace_setter=False, interpret=True
    )
    deadline[0] = time.monotonic() + 120
    players = []
    snaps = _run(session, on_playing=lambda: players.append(virtual_audio.play_into_mic(person)))
    players[0].wait(timeout=10)
    report = session.report
    assert report is not None and report["task"] == "interpret" and report["chrf_against"] == "reference translation"
    assert report["chrf"] >= 60, report["attempt_text"]
    assert not any(w.state is WordState.SAID for w in snaps[0].words)
    # the truth: where the voice is in the kept recording (the source's clock), and where the source's speech ends
    recorded = load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    score, at = va.aligned_correlation(recorded, voice)
    vad = SileroVad()
    speech_end_s = (int(np.flatnonzero(speech_flags(source_audio, vad))[-1]) + 1) * 512 / 16000
    voice_end_s = (int(np.flatnonzero(speech_flags(voice, SileroVad()))[-1]) + 1) * 512 / 16000
    expected = at / 16000 + voice_end_s - speech_end_s
    lag = report["sentence_lag_s"]
    assert score > 0.9 and lag["n"] == report["sentences"] >= 1
    assert lag["per_sentence"][-1]["lag_s"] == pytest.approx(expected, abs=0.4), (lag, expected)
    offline = interpret_practice_file(
        source, tmp_path / "rec" / ATTEMPT_FILE, "es", translator=load_translator("es"), english=practice_backend
    )
    assert offline["sentence_lag_s"]["median"] == pytest.approx(lag["median"], abs=0.1)


def test_a_broken_recording_to_practise_on_is_named_before_any_device_opens(tmp_path: Path, capsys) -> None:
    from engine import cli

    broken = tmp_path / "talk.wav"
    broken.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    assert cli.main(["practice", str(broken), "--live", "--no-history"]) == cli.EXIT_ERROR
    assert f"cannot read {broken} as audio" in capsys.readouterr().err
