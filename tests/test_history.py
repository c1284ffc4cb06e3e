"""Past sessions: listed with their figures, replayed from their files a block at a time."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.io import AudioFileError
from engine.metrics import names as m
from engine.pipeline.history import SIDE_BY_SIDE, TOGETHER, list_sessions, read_session, replay_blocks


def _tone(freq: float, seconds: float, rate: int) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _session(folder: Path, heard_s: float = 2.0, voice_s: float = 3.0, report: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    sf.write(folder / "input.wav", _tone(440, heard_s, 16000), 16000, subtype="PCM_16")
    sf.write(folder / "output.wav", _tone(660, voice_s, 22050), 22050, subtype="PCM_16")
    (folder / "transcript.jsonl").write_text("", encoding="utf-8")
    if report is not None:
        (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return folder


def _dominant(x: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(x))
    return float(np.fft.rfftfreq(x.size, 1 / rate)[int(np.argmax(spectrum))])


def test_side_by_side_puts_the_speaker_left_and_the_voice_right_on_one_clock(tmp_path: Path) -> None:
    folder = _session(tmp_path / "2026-11-24_10-00-00")
    audio = np.concatenate(list(replay_blocks(folder, SIDE_BY_SIDE, 22050, block_s=0.1)))
    assert audio.shape[1] == 2 and audio.shape[0] == pytest.approx(3.0 * 22050, abs=300)
    first = audio[int(0.5 * 22050) : int(1.5 * 22050)]
    assert _dominant(first[:, 0], 22050) == pytest.approx(440, abs=5)
    assert _dominant(first[:, 1], 22050) == pytest.approx(660, abs=5)
    tail = audio[int(2.2 * 22050) : int(2.8 * 22050)]  # the speaker stopped at 2 s, the voice goes on
    assert np.abs(tail[:, 0]).max() < 1e-3 and np.abs(tail[:, 1]).max() > 0.2


def test_together_mixes_both_and_a_start_skips_ahead(tmp_path: Path) -> None:
    folder = _session(tmp_path / "s")
    audio = np.concatenate(list(replay_blocks(folder, TOGETHER, 22050, start_s=1.0)))
    assert audio.shape[0] == pytest.approx(2.0 * 22050, abs=300)
    assert np.array_equal(audio[:, 0], audio[:, 1])
    spectrum = np.abs(np.fft.rfft(audio[: 22050 // 2, 0]))
    freqs = np.fft.rfftfreq(22050 // 2, 1 / 22050)
    assert spectrum[np.argmin(np.abs(freqs - 440))] > 0.1 * spectrum.max()
    assert spectrum[np.argmin(np.abs(freqs - 660))] > 0.1 * spectrum.max()


def test_a_session_without_its_recording_or_with_a_bad_mode_is_refused(tmp_path: Path) -> None:
    folder = _session(tmp_path / "s")
    with pytest.raises(ValueError, match="side by side"):
        next(replay_blocks(folder, "backwards", 22050))
    (folder / "output.wav").write_bytes(b"RIFF0000WAVEjunk")
    with pytest.raises(AudioFileError, match="cannot replay"):
        next(replay_blocks(folder, TOGETHER, 22050))


def test_sessions_are_listed_newest_first_with_their_figures(tmp_path: Path) -> None:
    report = {"audio_s_heard": 12.0, "words": [{"speak_end_s": 14.5}] * 30, m.EAR_VOICE_LAG_S: {"median": 2.25}}
    _session(tmp_path / "2026-11-24_09-00-00", report=report)
    _session(tmp_path / "2026-11-24_10-00-00")  # cut short by a crash: no report
    (tmp_path / "not-a-session").mkdir()
    sessions = list_sessions(tmp_path)
    assert [s.folder.name for s in sessions] == ["2026-11-24_10-00-00", "2026-11-24_09-00-00"]
    assert "no report" in sessions[0].title
    assert sessions[1].title == "2026-11-24 09:00:00 · 14 s · 30 words · lag median 2.25 s"
    assert read_session(tmp_path / "2026-11-24_09-00-00").lag_median_s == 2.25
    assert list_sessions(tmp_path / "missing") == []


def test_a_session_stopped_by_an_error_says_why_in_the_list(tmp_path: Path) -> None:
    error = "recognition stopped: the input device 'default' stopped delivering audio (unplugged?)"
    report = {"audio_s_heard": 5.0, "words": [{"speak_end_s": 6.0}] * 4, "error": error}
    past = read_session(_session(tmp_path / "2026-11-24_11-00-00", report=report))
    assert past.error == error and past.title.endswith(f"4 words · stopped by an error: {error}")
