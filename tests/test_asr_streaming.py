"""The streaming recognizer with the real models on the simulated clock: accuracy, silence, noise, bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.asr.bench import load_manifest
from engine.asr.commit import make_commit_policy
from engine.asr.run import StreamRun, run_stream
from engine.asr.streaming import StreamingRecognizer
from engine.asr.transcribe import transcribe_file
from engine.asr.vad import SileroVad, speech_flags
from engine.asr.whisper_backend import FAILED_DECODE_LOGPROB, WhisperBackend
from engine.audio.io import AudioFileError, load_audio
from engine.clock import SimulatedClock
from engine.eval.stress import BABBLE_TALKERS, SNR_DB, babble, speech_rms, with_noise
from engine.metrics import names as m
from engine.metrics.wer import normalize_for_wer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def whisper() -> WhisperBackend:
    return WhisperBackend()


@pytest.fixture(scope="module")
def vad() -> SileroVad:
    return SileroVad()


def entry(manifest: list[dict], recording: str) -> dict:
    return next(e for e in manifest if e["id"] == recording)


@pytest.mark.parametrize("commit", ["la2", "hold2", "waitk", "offline"])
def test_policies_commit_the_recording(whisper, vad, speech_manifest, speech_dir: Path, commit: str) -> None:
    item = entry(speech_manifest, "librivox_ss_0870")
    report = transcribe_file(speech_dir / item["wav"], whisper, commit, vad=vad, entry=item)
    assert report[m.WER_COMMITTED] <= 0.25
    assert report["commit_latency_reference"].startswith("manifest")
    latency = report[m.COMMIT_LATENCY_S]
    assert latency["n"] >= 0.7 * len(item["text"].split())
    if commit == "offline":
        assert latency["min"] >= 0  # everything waits for the end
    else:
        assert latency["median"] < 3.0
    times = [w["commit_s"] for w in report["words"]]
    assert times == sorted(times)


def test_local_agreement_is_close_to_offline_accuracy(whisper, vad, speech_manifest, speech_dir: Path) -> None:
    item = entry(speech_manifest, "ls_2412-153948-0000")
    report = transcribe_file(speech_dir / item["wav"], whisper, "la2", vad=vad, entry=item)
    assert report[m.WER_COMMITTED] - report[m.WER_OFFLINE] <= 0.05  # how far behind it ends: bench asr's figure


def test_numbers_said_on_a_call_are_committed_whole(whisper, vad, speech_hard_dir: Path) -> None:
    """An earnings call on a telephone line (Earnings-22): "627,000 subscribers", "7%", "43,000 more". faster-whisper
    gives "627" and ",000" as two words; joined with a space they scored as two errors, and the voice spoke
    "six hundred twenty-seven, zero zero zero" (la2 WER 0.14-0.19 here before, 0 decoded the stock way)."""
    item = entry(load_manifest(speech_hard_dir / "manifest.jsonl"), "earnings22_4483589_303_316")
    report = transcribe_file(item["path"], whisper, "la2", vad=vad, entry=item)
    heard = normalize_for_wer(report["committed_text"])
    assert "627000 subscribers" in heard and "43000 more subscribers" in heard and "7%" in heard, heard
    assert report[m.WER_COMMITTED] <= 0.05, heard


def test_a_quiet_speakers_first_words_at_the_recordings_first_sample_are_committed(
    whisper, vad, speech_hard_dir: Path
) -> None:
    """A video call (Earnings-22, -37 dBFS) opens with "We are" at 0.13 s, then two seconds of quiet: the detector,
    from a cold state, never called them speech, the buffer was dropped, and la2 began at "gathered"."""
    item = entry(load_manifest(speech_hard_dir / "manifest.jsonl"), "earnings22_4482311_003_063")
    audio = load_audio(item["path"])[: 7 * 16000]
    vad.reset()
    run = run_stream(audio, StreamingRecognizer(whisper, make_commit_policy("la2"), vad), SimulatedClock())
    heard = normalize_for_wer(" ".join(w.text for w in run.committed))
    assert heard.startswith("we are gathered"), heard


@pytest.mark.parametrize("kind", ["silence", "noise"])
def test_ten_seconds_without_speech_commit_nothing(whisper, vad, kind: str) -> None:
    rng = np.random.default_rng(1)
    audio = (
        np.zeros(160_000, np.float32) if kind == "silence" else (0.03 * rng.standard_normal(160_000)).astype(np.float32)
    )
    vad.reset()
    recognizer = StreamingRecognizer(whisper, make_commit_policy("la2"), vad)
    run = run_stream(audio, recognizer, SimulatedClock())
    assert run.committed == []
    assert recognizer.buffer_s <= 1.0


@pytest.mark.parametrize(("commit", "seconds"), [("la2", None), ("offline", 29.0)])
def test_buffer_stays_bounded_and_nothing_is_lost_on_the_long_passage(
    whisper, vad, speech_manifest, speech_dir, commit: str, seconds: float | None
) -> None:
    """The 51 s sonnet (offline: its first 29 s, past the 25 s cap, the buffer held whole until then). How far
    behind the stream ends is the machine's speed: ``bench asr`` reports it (``behind_s``), a test does not. Steps of
    two seconds: the buffer's bound and the words kept do not depend on how often it is decoded, the test's time
    does (la2 committed 114 and 113 of the 115 words at steps of 1 and 2 s, offline 63 and 64 of 64, AMD EPYC)."""
    item = entry(speech_manifest, "librivox_sonnet002")
    audio = load_audio(speech_dir / item["wav"])
    said = item["text"].split()
    if seconds is not None:  # the words said in the part kept: as many as the whole-window decode of it hears
        audio = audio[: int(seconds * 16000)]
        said = said[: len(whisper.transcribe_offline(audio))]
    vad.reset()
    recognizer = StreamingRecognizer(whisper, make_commit_policy(commit), vad)
    run = run_stream(audio, recognizer, SimulatedClock(), min_step_s=2.0)
    assert max(run.step_buffer_s) <= recognizer.config.max_buffer_s
    assert len(run.committed) > 0.85 * len(said), (len(run.committed), len(said))


def test_a_decode_below_whispers_confidence_mark_gives_no_words(whisper, speech_manifest, speech_dir) -> None:
    audio = load_audio(speech_dir / entry(speech_manifest, "ls_61-70968-0000")["wav"])
    assert whisper.transcribe(audio) and not whisper.failed  # clear speech passes Whisper's mark
    whisper.min_avg_logprob = 0.0  # no decode is that sure
    try:
        assert whisper.transcribe(audio) == [] and whisper.failed
        assert whisper.transcribe_offline(audio) and not whisper.failed  # a whole-recording decode uses every word
    finally:
        whisper.min_avg_logprob = FAILED_DECODE_LOGPROB


def test_speech_under_babble_is_not_spoken_from_unsure_decodes(whisper, vad, speech_manifest, speech_dir) -> None:
    """The JFK excerpt under four other talkers at 10 dB (the stress set's babble): tiny.en writes the other voices'
    words at about Whisper's failed-decode mark; those steps commit nothing. The clean excerpt passes the mark.

    The recognizer steps every 0.3 s of audio whatever a step costs (a clock whose timer stands still), so the runs
    do not depend on how busy the machine is: with the steps timed by their compute, the babble run committed 17 to
    27 words for the 22 said in thirteen runs. ``bench shadow`` on the stress set measures the 1.1 target."""
    item = entry(speech_manifest, "jfk_inaugural")
    clean = load_audio(speech_dir / item["wav"])
    others = [load_audio(speech_dir / e["wav"]) for e in speech_manifest if e["id"] != item["id"]][:BABBLE_TALKERS]
    level = speech_rms(clean, speech_flags(clean, vad))
    noisy = with_noise(clean, babble(others, clean.size), SNR_DB, level)

    def stream(audio: np.ndarray, floor: float | None) -> StreamRun:
        whisper.min_avg_logprob = floor
        vad.reset()
        recognizer = StreamingRecognizer(whisper, make_commit_policy("la2"), vad)
        return run_stream(audio, recognizer, SimulatedClock(timer=lambda: 0.0), min_step_s=0.3)

    try:
        runs = {
            "clean": stream(clean, FAILED_DECODE_LOGPROB),
            "babble": stream(noisy, FAILED_DECODE_LOGPROB),
            "babble, no floor": stream(noisy, None),
        }
    finally:
        whisper.min_avg_logprob = FAILED_DECODE_LOGPROB
    said = normalize_for_wer(item["text"]).split()
    unsaid = {
        name: [w for w in normalize_for_wer(" ".join(c.text for c in run.committed)).split() if w not in said]
        for name, run in runs.items()
    }
    assert runs["clean"].failed_decodes <= 1 and len(runs["clean"].committed) >= 0.9 * len(said)
    assert runs["babble"].failed_decodes >= 3 and runs["babble, no floor"].failed_decodes == 0
    # the floor adds no word the speaker did not say: here 7 with it and 7 without (tests' kernels, conftest). What it
    # saves depends on the mix: 85 against 89 over 3-5 talkers at 8, 10 and 12 dB, fewer in five of the nine, more in
    # two (AMD EPYC VM, 2026-12-07); on the Intel Xeon's own kernels 5 against 14 here
    assert len(unsaid["babble"]) <= len(unsaid["babble, no floor"]), unsaid
    assert len(runs["babble"].committed) <= 1.2 * len(said), [w.text for w in runs["babble"].committed]


def test_stereo_48k_file_is_resampled(tmp_path: Path, speech_dir: Path) -> None:
    mono = load_audio(speech_dir / "wav" / "vctk_p226_001.wav")
    from engine.audio import resample

    stereo = np.stack([resample(mono, 16000, 48000)] * 2, axis=1)
    path = tmp_path / "stereo48k.wav"
    sf.write(str(path), stereo, 48000)
    again = load_audio(path)
    assert abs(again.size - mono.size) <= 2


def test_bad_audio_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match="not found"):
        load_audio(tmp_path / "missing.wav")
    corrupt = tmp_path / "corrupt.wav"
    corrupt.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunk")
    with pytest.raises(AudioFileError, match="cannot read"):
        load_audio(corrupt)
    empty = tmp_path / "empty.wav"
    sf.write(str(empty), np.zeros(0, np.float32), 16000)
    with pytest.raises(AudioFileError, match="no audio"):
        load_audio(empty)


def test_transcribe_command(tmp_path: Path, speech_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine import cli

    report_path = tmp_path / "report.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "transcribe",
            str(speech_dir / "wav" / "vctk_p225_002.wav"),
            "--commit",
            "la2",
            "--simulate",
            "--report",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(report_path.read_text())
    for name in (m.COMMIT_LATENCY_S, m.WER_COMMITTED, m.WER_OFFLINE, m.RTF_ASR, m.BEHIND_S):
        assert name in report
    assert report[m.WER_COMMITTED] <= 0.2
    assert run.stdout.strip()
    # the errors in this process (``cli.main``): the one command run above is the process a user starts
    assert cli.main(["transcribe", str(tmp_path / "x.wav")]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert "not found" in err and "Traceback" not in err
    wav = str(speech_dir / "wav" / "vctk_p225_002.wav")
    assert cli.main(["transcribe", wav, "--model", str(tmp_path)]) == cli.EXIT_ERROR
    assert "no Whisper model" in capsys.readouterr().err


def test_transcribe_realtime_paces_like_a_microphone(tmp_path: Path, speech_dir: Path) -> None:
    import time

    report_path = tmp_path / "report.json"
    started = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine",
            "transcribe",
            str(speech_dir / "wav" / "vctk_p226_001.wav"),
            "--realtime",
            "--report",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(report_path.read_text())
    assert report["config"]["mode"] == "realtime"
    assert time.monotonic() - started >= report["audio_s"]  # it waited for the audio to "arrive"
    assert report[m.WER_COMMITTED] <= 0.2


@pytest.mark.parametrize("phase_s", [0.0, 0.1, 0.25])
def test_the_steps_meet_the_speech_at_the_phase_asked_for(whisper, vad, speech_manifest, speech_dir, phase_s) -> None:
    """With steps that cost nothing on the clock, every step comes at a whole number of step periods after the
    first, which comes ``phase_s`` after one period."""
    item = entry(speech_manifest, "jfk_inaugural")
    vad.reset()
    recognizer = StreamingRecognizer(whisper, make_commit_policy("la2"), vad)
    audio = load_audio(speech_dir / item["wav"])[: 3 * 16000]
    run = run_stream(audio, recognizer, SimulatedClock(timer=lambda: 0.0), min_step_s=0.3, phase_s=phase_s)
    periods = (np.asarray(run.step_at_s) - phase_s) / 0.3
    assert len(periods) >= 8 and periods[0] >= 1 - 1e-9
    assert np.allclose(periods, np.round(periods), atol=1e-6), run.step_at_s
