"""Practising on this computer's sound through the virtual devices: another application (paplay) plays the source on
the virtual speaker, whose monitor the session hears; the person is heard on the microphone. The source is recognized
live beside the person, the session ends when stopped, and its figures are checked against known truth and against
the offline scoring of the files it kept."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import load_audio
from engine.metrics.translation import chrf
from engine.metrics.wer import wer
from engine.practice.heard import HeardPracticeSession
from engine.practice.live_common import ATTEMPT_FILE, SOURCE_FILE, PracticeState
from tests import virtual_audio as va

pytestmark = [pytest.mark.audio, pytest.mark.slow]

SOURCE_ID = "ls_2412-153948-0000"  # 11.7 s, 36 words
SHORT_ID = "ls_61-70968-0000"  # 4.9 s, 17 words: a delay is measured as well on it, in half the time
DELAY_S = 1.0
AFTER_S = 3.0  # the session is stopped this long after the source ends


def _entry(speech_manifest: list[dict], recording: str = SOURCE_ID) -> dict:
    return next(e for e in speech_manifest if e["id"] == recording)


def _play(audio: va.VirtualAudio, wav: Path) -> subprocess.Popen:
    """Another application playing on this computer's (virtual) speaker."""
    return subprocess.Popen(
        ["paplay", f"--device={va.SPEAKER_SINK}", str(wav)],
        env=audio.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _practise(session: HeardPracticeSession, play) -> list:
    """Start, let ``play()`` start the players once the session hears, snapshot every 0.2 s until they end, then
    ``AFTER_S`` more, and stop."""
    session.prepare()
    session.start()
    snaps = [session.snapshot()]
    players = play()
    deadline = time.monotonic() + 60
    while any(p.poll() is None for p in players):
        snaps.append(session.snapshot())
        assert not session.wait(0.2), session.error
        assert time.monotonic() < deadline
    time.sleep(AFTER_S)
    snaps.append(session.snapshot())
    session.stop()
    assert session.wait(120), "the session did not end after Stop"
    assert session.state is PracticeState.DONE, session.error
    return snaps


def test_the_sound_heard_also_on_the_microphone_has_an_ear_voice_span_of_zero(
    virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    """The microphone is the speaker's monitor too: the person says every word as it plays, so the EVS is 0 whatever
    the two captures' latencies, which the session must place on one clock. The source's words, which nobody gave
    the session, are recognized live as it plays and whole at the end."""
    entry = _entry(speech_manifest)
    source = speech_dir / entry["wav"]
    virtual_audio.pactl("set-default-source", va.SPEAKER_MONITOR)
    try:
        with virtual_audio.listening(va.SPEAKER_MONITOR):  # the monitor delivering as a device does
            session = HeardPracticeSession("system", record_dir=tmp_path / "rec")
            snaps = _practise(session, lambda: [_play(virtual_audio, source)])
    finally:
        virtual_audio.pactl("set-default-source", va.MIC_SOURCE)
    report = session.report
    assert report is not None and "this computer's sound" in report["source"]
    assert report["source_words_from"] == "the recognizer"
    assert abs(report["evs_s"]["median"]) < 0.1 and report["evs_s"]["n"] >= 30, report["evs_s"]
    assert abs(report["live"]["evs_s"]["median"]) < 0.1, report["live"]
    assert report["accuracy"] >= 0.9 and report["missed_words"] <= 2
    assert wer(entry["text"], report["source_text"]) <= 0.1
    assert wer(entry["text"], report["live"]["source_text"]) <= 0.15  # recognized as it played
    # live: open-ended, the source's words grow as they are heard, marked as the person says them
    assert all(s.open_ended for s in snaps) and not snaps[0].words
    counts = [len(s.words) for s in snaps]
    assert counts == sorted(counts) and counts[len(counts) // 2] >= 5 and counts[-1] >= 30
    assert any(s.median_evs_s is not None for s in snaps[: len(snaps) // 2 + 1])
    kept = load_audio(tmp_path / "rec" / SOURCE_FILE), load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    assert kept[0].size == kept[1].size and kept[0].size / 16000 > 11.7 + AFTER_S - 1.0


def test_a_delayed_attempt_scores_as_the_kept_files_offline_and_as_their_delay(
    virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    """The source on the speaker and a copy 1 s late into the microphone, started together: the scored EVS is the
    delay between the two kept recordings (found by correlation), and the live EVS is the offline scoring of the
    kept files within 0.1 s."""
    from engine.practice.attempt import practice_file

    source = speech_dir / _entry(speech_manifest, SHORT_ID)["wav"]
    audio, rate = sf.read(str(source), dtype="float32")
    late = tmp_path / "late.wav"
    sf.write(str(late), np.concatenate([np.zeros(int(DELAY_S * rate), np.float32), audio]), rate)
    session = HeardPracticeSession("system", record_dir=tmp_path / "rec")
    _practise(session, lambda: [_play(virtual_audio, source), virtual_audio.play_into_mic(late)])
    report = session.report
    assert report is not None
    heard, attempt = load_audio(tmp_path / "rec" / SOURCE_FILE), load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    played = load_audio(source)
    (in_heard, at_heard), (in_attempt, at_attempt) = (va.aligned_correlation(x, played) for x in (heard, attempt))
    assert in_heard > 0.9 and in_attempt > 0.9
    truth = (at_attempt - at_heard) / 16000
    assert 0.0 < truth < DELAY_S + 1.0  # the two players start apart by their own latencies
    scored, live = report["evs_s"]["median"], report["live"]["evs_s"]["median"]
    assert abs(scored - truth) < 0.1, (scored, truth)
    offline = practice_file(tmp_path / "rec" / SOURCE_FILE, tmp_path / "rec" / ATTEMPT_FILE)
    assert abs(live - offline["evs_s"]["median"]) < 0.1, (live, offline["evs_s"])
    assert abs(scored - offline["evs_s"]["median"]) < 0.05
    assert report["missed_words"] <= 2
    assert json.loads((tmp_path / "rec" / "practice.json").read_text())["evs_s"]["median"] == scored


def test_interpreting_this_computers_sound_is_timed_per_sentence_against_the_translation_heard(
    virtual_audio: va.VirtualAudio, speech_xx_dir: Path, tmp_path: Path
) -> None:
    """Spanish plays; the person (the English voice saying the reference translation) begins 1 s after it ends. With
    no reference beside what is heard, chrF is against liveshadow's own translation, and the sentence lag is the
    one built in, measured on the kept recordings."""
    from engine.asr.vad import SileroVad, speech_flags
    from engine.cli import main

    entry = next(
        json.loads(line)
        for line in (speech_xx_dir / "manifest.jsonl").read_text().splitlines()
        if '"cv_es_19599961"' in line
    )
    source = speech_xx_dir / entry["wav"]
    spoken = tmp_path / "spoken.wav"
    assert main(["speak", entry["translation"].lower(), "--out", str(spoken)]) == 0
    voice, played = load_audio(spoken), load_audio(source)
    person = tmp_path / "person.wav"
    sf.write(str(person), np.concatenate([np.zeros(played.size + 16000, np.float32), voice]), 16000)
    session = HeardPracticeSession("system", "es", record_dir=tmp_path / "rec", interpret=True)
    snaps = _practise(session, lambda: [_play(virtual_audio, source), virtual_audio.play_into_mic(person)])
    report = session.report
    assert report is not None and report["task"] == "interpret" and report["language"] == "es"
    # liveshadow's own translation of sound heard live is not the same twice: Whisper base gave chrF 52.6, 62.1 and
    # 80.9 against the same rendering in three runs of the same code. So the rendering is held to the reference
    # translation it says (the file test's bound), and the report's chrF to the text it names.
    assert report["chrf_against"] == "liveshadow's own translation"
    assert chrf([entry["translation"]], [report["attempt_text"]]) >= 60, report["attempt_text"]
    assert report["chrf"] == pytest.approx(chrf([report["english_text"]], [report["attempt_text"]]))
    assert any(s.words for s in snaps) and "exclusive" in report["live"]["source_text"]  # translated as it played
    heard, attempt = load_audio(tmp_path / "rec" / SOURCE_FILE), load_audio(tmp_path / "rec" / ATTEMPT_FILE)
    in_heard, source_at = va.aligned_correlation(heard, played)  # where the source and the voice lie, one clock
    in_attempt, voice_at = va.aligned_correlation(attempt, voice)
    speech_end_s = (int(np.flatnonzero(speech_flags(played, SileroVad()))[-1]) + 1) * 512 / 16000
    voice_end_s = (int(np.flatnonzero(speech_flags(voice, SileroVad()))[-1]) + 1) * 512 / 16000
    expected = (voice_at - source_at) / 16000 + voice_end_s - speech_end_s
    lag = report["sentence_lag_s"]
    assert in_heard > 0.9 and in_attempt > 0.9 and lag["n"] == report["sentences"] >= 1
    # Both ends are Whisper's word ends, the truth's are the detector's. On a recording this sound is heard live, not
    # read from a file, and Whisper base's translated sentence end moved 0.13-0.53 s past the speech's end in runs of
    # the same code (0.29 s on the file itself, test_practice_live): the bound is the file test's 0.4 and that spread.
    assert lag["per_sentence"][-1]["lag_s"] == pytest.approx(expected, abs=0.6), (lag, expected, source_at, voice_at)


def test_the_command_hears_this_computers_sound_until_ctrl_c_and_keeps_the_attempt(
    virtual_audio: va.VirtualAudio,
    speech_dir: Path,
    speech_manifest: list[dict],
    tmp_path: Path,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from engine import cli
    from engine.practice import history

    source = speech_dir / _entry(speech_manifest)["wav"]
    command = [sys.executable, "-m", "engine", "practice", "--hear", "system", "--json"]
    env = {**virtual_audio.env(), "LIVESHADOW_DATA_DIR": str(data_dir)}
    # started with SIGINT ignored, as a shell's background job is: Ctrl+C must still end the session
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    players: list[subprocess.Popen] = []
    try:
        assert process.stderr is not None
        lines = []
        for line in process.stderr:
            lines.append(line)
            if line.startswith("liveshadow: listening to"):
                break
        players = [_play(virtual_audio, source), virtual_audio.play_into_mic(source)]
        for player in players:
            player.wait(timeout=30)
        time.sleep(AFTER_S)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == cli.EXIT_OK, "".join(lines) + err
    report = json.loads(out)
    assert report["accuracy"] > 0.8 and report["evs_s"]["n"] > 25 and "s heard" in err and "scoring" in err
    folder = Path(report["source_recording"]).parent
    assert folder.parent == data_dir / "practice" and (folder / ATTEMPT_FILE).is_file()
    assert len(history.attempts(folder / SOURCE_FILE)) == 1
    assert cli.main(["practice", str(source), "--hear", "system"]) == cli.EXIT_USAGE
    assert "--hear takes no SOURCE" in capsys.readouterr().err
    assert cli.main(["practice"]) == cli.EXIT_USAGE
    assert "needs a SOURCE" in capsys.readouterr().err


def test_the_devices_going_away_mid_practice_are_named_and_what_was_heard_is_still_scored(
    disposable_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    """Every device goes (a server of the test's own, which the sound-server library must reach though it first
    connected to the shared one)."""
    source = speech_dir / _entry(speech_manifest)["wav"]
    session = HeardPracticeSession("system", record_dir=tmp_path / "rec")
    session.prepare()
    session.start()
    players = [_play(disposable_audio, source), disposable_audio.play_into_mic(source)]
    time.sleep(7.0)  # mid-sentence
    disposable_audio.remove_devices()
    assert session.wait(60)
    for player in players:
        player.wait(timeout=10)
    assert session.state is PracticeState.FAILED and "stopped" in (session.error or ""), session.error
    report = session.report
    assert report is not None and report["evs_s"]["n"] >= 5, (session.error, report)  # the words said before
    assert (tmp_path / "rec" / ATTEMPT_FILE).is_file() and (tmp_path / "rec" / SOURCE_FILE).is_file()
