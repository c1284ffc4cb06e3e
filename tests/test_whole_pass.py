"""A recorded session's whole recording recognized again for its captions (``engine.pipeline.whole_pass``)."""

from __future__ import annotations

import json
import wave
from pathlib import Path

import numpy as np
import pytest
import srt

from engine.asr.offline import transcribe_long
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.metrics.wer import normalize_for_wer
from engine.pipeline.captions import WHOLE_PASS, read_whole_pass
from engine.pipeline.config import ShadowConfig
from engine.pipeline.recorder import INPUT_WAV, REPORT, TRANSCRIPT
from engine.pipeline.session import ShadowSession
from engine.pipeline.whole_pass import (
    WholePassError,
    WholePassSkipped,
    WholePassStopped,
    run_whole_pass,
    skip_reason,
)

SHORT = "ls_61-70968-0000"
RATE = 16000


class _WindowBackend:
    """Hears one word per window of the windowed pass (no ``task``: not the English whole pass)."""

    def __init__(self) -> None:
        self.calls = 0

    def transcribe_offline(self, audio: np.ndarray) -> list[Word]:
        self.calls += 1
        return [Word(f"word{self.calls}", 0.5, 1.0)]

    def transcribe(self, audio: np.ndarray) -> list[Word]:
        raise AssertionError("the whole pass decodes windows with transcribe_offline")


def _folder(tmp_path: Path, seconds: float = 45.0, echo_guard: str = "off") -> Path:
    folder = tmp_path / "rec"
    folder.mkdir()
    rng = np.random.default_rng(0)
    samples = (rng.standard_normal(int(seconds * RATE)) * 3000).astype("<i2")
    with wave.open(str(folder / INPUT_WAV), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.tobytes())
    (folder / REPORT).write_text(json.dumps({"config": {"echo_guard": echo_guard}}), encoding="utf-8")
    committed = {"event": "committed", "sentence": 0, "index": 0, "text": "live", "source_start_s": 1.0,
                 "source_end_s": 1.3}  # fmt: skip
    (folder / TRANSCRIPT).write_text(json.dumps(committed) + "\n", encoding="utf-8")
    return folder


def _srt_words(path: Path) -> list[str]:
    return " ".join(c.content.replace("\n", " ") for c in srt.parse(path.read_text(encoding="utf-8"))).split()


def test_the_pass_writes_its_words_and_the_captions_take_them(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    shares: list[float] = []
    words = run_whole_pass(folder, _WindowBackend(), shares.append)  # type: ignore[arg-type]
    assert [w.text for w in words] == ["word1", "word2", "word3"]
    assert {WHOLE_PASS, "heard.srt", "committed.srt", "transcript.txt"} <= {p.name for p in folder.iterdir()}
    assert shares[0] == 0.0 and shares[-1] == 1.0 and shares == sorted(shares) and len(shares) >= 4  # 3 windows
    assert [w.text for w in read_whole_pass(folder / WHOLE_PASS) or []] == ["word1", "word2", "word3"]
    assert _srt_words(folder / "heard.srt") == ["word1", "word2", "word3"]
    assert _srt_words(folder / "committed.srt") == ["live"]  # the live words are kept
    assert (folder / "transcript.txt").read_text(encoding="utf-8").split() == ["word1", "word2", "word3"]
    assert not list(folder.glob("*.part"))


def test_a_stopped_pass_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    backend = _WindowBackend()
    with pytest.raises(WholePassStopped):
        run_whole_pass(folder, backend, should_stop=lambda: backend.calls >= 1)  # type: ignore[arg-type]
    assert backend.calls == 1
    assert sorted(p.name for p in folder.iterdir()) == sorted([INPUT_WAV, REPORT, TRANSCRIPT])


def test_a_speakers_interpreted_or_vosk_session_or_an_empty_or_broken_recording_is_not_passed_again(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path, echo_guard="cancel")
    assert "echo" in (skip_reason(folder) or "")
    with pytest.raises(WholePassSkipped, match="echo"):
        run_whole_pass(folder, _WindowBackend())  # type: ignore[arg-type]
    for config in ({"translate_from": "es"}, {"backend": "vosk"}):
        (folder / REPORT).write_text(json.dumps({"config": config}), encoding="utf-8")
        assert skip_reason(folder) is not None
    (folder / REPORT).unlink()  # a session cut short has no report: its recording is still passed
    assert skip_reason(folder) is None
    (folder / INPUT_WAV).write_bytes(b"RIFF0000WAVEjunk" * 4)
    with pytest.raises(WholePassError, match="cannot read"):
        run_whole_pass(folder, _WindowBackend())  # type: ignore[arg-type]
    (folder / INPUT_WAV).unlink()
    assert skip_reason(folder) == "nothing was recorded"
    assert not (folder / WHOLE_PASS).exists()


def test_an_unreadable_pass_leaves_the_live_captions(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from engine.pipeline.captions import write_captions

    folder = _folder(tmp_path)
    (folder / WHOLE_PASS).write_text('{"event": "whole_pass"}\n{"text": "x", "start_s": "soon"}\n', encoding="utf-8")
    names = {p.name for p in write_captions(folder)}
    assert "committed.srt" not in names and _srt_words(folder / "heard.srt") == ["live"]
    assert "cannot be read" in caplog.text


@pytest.mark.slow
@pytest.mark.untimed  # compares the pass with the same model's words, not with a time
def test_a_real_session_is_passed_again_whole(shadow_models, speech_dir, speech_manifest, tmp_path: Path) -> None:
    """The default session on a read sentence, then its recording recognized again with the session's own
    recognizer: the captions and transcript hold the whole pass's words, the live words stay in committed.srt."""
    item = next(e for e in speech_manifest if e["id"] == SHORT)
    folder = tmp_path / "rec"
    session = ShadowSession(ShadowConfig(), shadow_models, record_dir=folder)
    report = session.run_file(load_audio(speech_dir / item["wav"])).report()
    assert skip_reason(folder) is None
    shares: list[float] = []
    run_whole_pass(folder, shadow_models.backend, shares.append)
    assert shares[-1] == 1.0 and shares == sorted(shares)
    expected = transcribe_long(shadow_models.backend, load_audio(folder / INPUT_WAV))
    assert len(expected) >= 10
    heard = _srt_words(folder / "heard.srt")
    assert heard == " ".join(w.text for w in expected).split()
    assert _srt_words(folder / "committed.srt") == report["committed_text"].split()
    assert (folder / "transcript.txt").read_text(encoding="utf-8").split() == heard
    assert normalize_for_wer(" ".join(heard)).split()[:3] == normalize_for_wer(item["text"]).split()[:3]
