"""Practice and shadowing sources that are not WAV: MP3, M4A, Opus and the audio track of an MP4, made from a
``../shared/speech`` recording with the system's ``ffmpeg`` at test time (``engine.audio.media``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from engine.asr.backend import SAMPLE_RATE
from engine.audio.io import AudioFileError, load_audio

RECORDING = "ls_2412-153948-0000"  # 11.7 s, a reference transcript beside it
# ffmpeg's arguments for each kind of file (the MP4 has a video track of its own)
ENCODINGS = {
    "mp3": ["-c:a", "libmp3lame", "-b:a", "96k"],
    "m4a": ["-c:a", "aac", "-b:a", "96k"],
    "opus": ["-c:a", "libopus", "-b:a", "48k"],
    "mp4": [
        "-f",
        "lavfi",
        "-i",
        "color=c=navy:s=160x120:r=10",
        "-map",
        "1:v",
        "-map",
        "0:a",
        "-shortest",
        "-c:v",
        "mpeg4",
        "-c:a",
        "aac",
        "-b:a",
        "96k",
    ],
}
MAX_TIME_ERROR_S = 0.05  # the bound on a figure of the same recording in another format


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


@pytest.fixture(scope="module")
def encoded(tmp_path_factory: pytest.TempPathFactory, speech_dir: Path, speech_manifest: list[dict]) -> dict[str, Path]:
    """The recording in every format, each with the reference transcript beside it (an .srt beside the MP4)."""
    if shutil.which("ffmpeg") is None:
        pytest.fail("ffmpeg is not installed (scripts/setup installs it)")
    folder = tmp_path_factory.mktemp("media")
    wav = folder / "talk_wav.wav"
    shutil.copy(speech_dir / "wav" / f"{RECORDING}.wav", wav)
    text = next(e["text"] for e in speech_manifest if e["id"] == RECORDING)
    wav.with_suffix(".txt").write_text(text, encoding="utf-8")
    files = {"wav": wav}
    for kind, args in ENCODINGS.items():
        path = folder / f"talk_{kind}.{kind}"
        _ffmpeg("-i", str(wav), *args, str(path))
        files[kind] = path
        if kind == "mp4":  # subtitles people already have, in two cues
            half = len(text.split()) // 2
            cues = (" ".join(text.split()[:half]), " ".join(text.split()[half:]))
            path.with_suffix(".srt").write_text(
                f"1\n00:00:00,000 --> 00:00:05,000\n{cues[0]}\n\n2\n00:00:05,000 --> 00:00:11,000\n<i>{cues[1]}</i>\n",
                encoding="utf-8",
            )
        else:
            path.with_suffix(".txt").write_text(text, encoding="utf-8")
    return files


def _lag_s(a: np.ndarray, b: np.ndarray) -> float:
    """How much later ``b`` runs than ``a`` (cross-correlation of their envelopes, 10 ms resolution)."""
    hop = SAMPLE_RATE // 100
    n = min(a.size, b.size) // hop
    ea = np.abs(a[: n * hop]).reshape(n, hop).mean(axis=1)
    eb = np.abs(b[: n * hop]).reshape(n, hop).mean(axis=1)
    ea, eb = ea - ea.mean(), eb - eb.mean()
    corr = np.correlate(eb, ea, mode="full")
    return (int(np.argmax(corr)) - (n - 1)) / 100


@pytest.mark.parametrize("kind", sorted(ENCODINGS))
def test_every_format_decodes_to_the_recordings_samples_on_its_clock(encoded: dict[str, Path], kind: str) -> None:
    wav = load_audio(encoded["wav"])
    shares: list[float] = []
    other = load_audio(encoded[kind], progress=shares.append)
    # nothing lost; a lossy codec ends on a whole frame of its own (AAC: 1024 samples at 48 kHz, plus its priming)
    assert -MAX_TIME_ERROR_S <= (other.size - wav.size) / SAMPLE_RATE <= 0.1, (other.size, wav.size)
    assert abs(_lag_s(wav, other)) <= MAX_TIME_ERROR_S
    n = min(wav.size, other.size)
    assert np.corrcoef(wav[:n], other[:n])[0, 1] > 0.9  # the same speech, up to the codec's loss
    assert shares and shares == sorted(shares) and shares[-1] > 0.95, shares


def test_a_file_with_video_and_no_audio_a_truncated_mp3_and_a_text_named_mp3_give_one_line_errors(
    encoded: dict[str, Path], tmp_path: Path
) -> None:
    silent = tmp_path / "silent.mp4"
    _ffmpeg("-f", "lavfi", "-i", "color=c=black:s=160x120:r=10:d=2", "-c:v", "mpeg4", str(silent))
    truncated = tmp_path / "truncated.mp3"
    data = encoded["mp3"].read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    text = tmp_path / "notes.mp3"
    text.write_text("these are my notes, not a recording\n" * 20, encoding="utf-8")
    expected = {silent: "video track but no audio track", truncated: "cut short", text: "cannot read"}
    for path, words in expected.items():
        with pytest.raises(AudioFileError, match=words) as caught:
            load_audio(path)
        assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_a_missing_ffmpeg_is_named(encoded: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(AudioFileError, match="needs FFmpeg"):
        load_audio(encoded["m4a"])


def test_the_command_line_names_a_broken_file_in_one_line(tmp_path: Path, capsys) -> None:
    from engine import cli

    text = tmp_path / "lecture.mp3"
    text.write_text("not audio\n", encoding="utf-8")
    assert cli.main(["practice", str(text), "--live", "--no-history"]) == cli.EXIT_ERROR
    last = capsys.readouterr().err.strip().splitlines()[-1]  # after "preparing…": one line that names the file
    assert last.startswith("liveshadow: cannot read") and str(text) in last, last


@pytest.mark.slow
def test_practice_scores_the_same_in_every_format(encoded: dict[str, Path]) -> None:
    """The machine's attempt (the recording itself, 1 s later) scored against the source in each format, the
    attempt stored as an M4A, the transcript beside the MP4 an .srt: the figures of the WAV within 0.05 s."""
    import soundfile

    from engine.practice.attempt import load_recognizer, practice_file

    backend = load_recognizer("en")
    folder = encoded["mp3"].parent
    audio = load_audio(encoded["wav"])
    delayed_wav = folder / "attempt.wav"
    soundfile.write(str(delayed_wav), np.concatenate([np.zeros(SAMPLE_RATE, np.float32), audio]), SAMPLE_RATE)
    delayed_m4a = folder / "attempt.m4a"
    _ffmpeg("-i", str(delayed_wav), *ENCODINGS["m4a"], str(delayed_m4a))
    base = practice_file(encoded["wav"], delayed_wav, backend=backend)
    assert base["source_words_from"].startswith("reference transcript")
    for kind in sorted(ENCODINGS):
        report = practice_file(encoded[kind], delayed_m4a, backend=backend)
        assert report["source_words_from"].startswith("reference transcript"), (kind, report["source_words_from"])
        assert report["source_words"] == base["source_words"], kind
        assert abs(report["evs_s"]["median"] - base["evs_s"]["median"]) <= MAX_TIME_ERROR_S, (kind, report["evs_s"])
        assert abs(report["accuracy"] - base["accuracy"]) <= 0.05, kind


@pytest.mark.slow
def test_the_recognizer_hears_the_same_words_at_the_same_times_in_a_video(encoded: dict[str, Path]) -> None:
    from engine.asr.offline import transcribe_long
    from engine.asr.whisper_backend import WhisperBackend

    backend = WhisperBackend()
    wav = transcribe_long(backend, load_audio(encoded["wav"]))
    video = transcribe_long(backend, load_audio(encoded["mp4"]))
    assert [w.text for w in video] == [w.text for w in wav]
    # each word's end within Whisper's own spread (one word 0.10 s apart in the run that set this, the rest 0.0-0.02)
    moved = sorted(abs(a.end_s - b.end_s) for a, b in zip(wav, video, strict=True))
    assert moved[len(moved) // 2] <= MAX_TIME_ERROR_S and moved[-1] <= 0.2, moved


@pytest.mark.slow
def test_the_command_exports_a_video_sources_attempt_for_praat_and_elan(
    encoded: dict[str, Path], tmp_path: Path
) -> None:
    import json

    import pympi
    from praatio import textgrid

    from engine import cli

    attempt = tmp_path / "attempt.m4a"
    _ffmpeg("-i", str(encoded["wav"]), "-af", "adelay=800", *ENCODINGS["m4a"], str(attempt))
    out, report_path = tmp_path / "export", tmp_path / "report.json"
    assert (
        cli.main(
            [
                "practice",
                str(encoded["mp4"]),
                "--voice",
                str(attempt),
                "--export",
                str(out),
                "--no-history",
                "--report",
                str(report_path),
            ]
        )
        == cli.EXIT_OK
    )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    grid = textgrid.openTextgrid(str(out / "talk_mp4.TextGrid"), includeEmptyIntervals=False)
    assert grid.tierNames == ("source", "attempt", "mark", "evs")
    source = [w for w in report["words"] if w["source"] is not None]
    assert [e.label for e in grid.getTier("source").entries] == [w["source"] for w in source]
    assert grid.getTier("source").entries[0].start == pytest.approx(source[0]["source_start_s"], abs=0.001)
    evs = [w["evs_s"] for w in report["words"] if w["evs_s"] is not None and w["source"] is not None]
    assert [float(e.label) for e in grid.getTier("evs").entries] == pytest.approx(evs, abs=0.001)
    eaf = pympi.Elan.Eaf(str(out / "talk_mp4.eaf"))
    assert len(eaf.get_annotation_data_for_tier("source")) == len(source)
    assert [f["RELATIVE_MEDIA_URL"] for f in eaf.get_linked_files()] == ["talk_mp4.mp4", "attempt.m4a"]
    assert (out / "talk_mp4.csv").read_text(encoding="utf-8").count("\n") == len(report["words"]) + 1


@pytest.mark.slow
def test_shadowing_every_format_commits_the_words_of_the_wav_at_its_times(
    encoded: dict[str, Path], shadow_models, passage_file_session
) -> None:
    """The streaming recognizer on each format commits the WAV's words (their punctuation aside), each timed on the
    source within 0.05 s of the WAV's. A format that decodes to the samples of one already run (the MP4's AAC track is
    the M4A's) is not run again."""
    from engine.asr.words import normalize_token
    from engine.pipeline.config import ShadowConfig
    from engine.pipeline.shadow import shadow_file

    base = passage_file_session  # the WAV's session (tests/conftest.py): the recording is RECORDING
    run: list[np.ndarray] = []
    for kind in sorted(ENCODINGS):
        audio = load_audio(encoded[kind])
        if any(np.array_equal(audio, other) for other in run):
            continue
        run.append(audio)
        report = shadow_file(encoded[kind], ShadowConfig(), shadow_models, speech_chain=False)
        keys = [normalize_token(w["text"]) for w in report["words"]]
        assert keys == [normalize_token(w["text"]) for w in base["words"]], kind  # a comma may be a full stop
        moved = [
            abs(a["source_end_s"] - b["source_end_s"]) for a, b in zip(base["words"], report["words"], strict=True)
        ]
        assert float(np.median(moved)) <= MAX_TIME_ERROR_S, (kind, moved)
        # (the voice's lag is not compared: timed on the compute-aware clock it moved 0.03 s between two runs of the
        # WAV, and the MP3's "antecedents." for the WAV's "antecedents," moved it 0.21 s: a full stop ends a sentence)
    assert len(run) >= 3  # MP3, Opus and AAC at least
