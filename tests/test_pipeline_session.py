"""The shadowing session on real models: a file on the simulated clock, stop (drain), cancel, a lost device."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import threading
import time
import wave

import numpy as np
import pytest
import srt
import webvtt

from engine.audio.block import AudioBlock
from engine.audio.devices import AudioDeviceError
from engine.audio.io import load_audio
from engine.clock import SimulatedClock
from engine.metrics import names as m
from engine.metrics.wer import normalize_for_wer, wer
from engine.pipeline import session as session_module
from engine.pipeline.config import ShadowConfig
from engine.pipeline.recorder import INPUT_WAV, METRICS, OUTPUT_WAV, REPORT, TRANSCRIPT
from engine.pipeline.records import SessionListener, State
from engine.pipeline.session import ShadowSession
from engine.pipeline.shadow import shadow_file
from engine.pipeline.whole_pass import skip_reason
from engine.tts.worker import MAX_WAIT_S

SHORT = "ls_61-70968-0000"


def _entry(manifest: list[dict], name: str) -> dict:
    return next(e for e in manifest if e["id"] == name)


def _vtt_seconds(stamp: str) -> float:
    hours, minutes, seconds = stamp.split(":")
    return 3600 * int(hours) + 60 * int(minutes) + float(seconds)


@pytest.mark.slow
def test_underruns_of_a_voice_too_slow_to_keep_up_are_late_compute(shadow_models, speech_manifest, speech_dir) -> None:
    """A voice charged twenty times its compute falls behind: its gaps came with time enough to make the piece (not
    short notice), and none can hold a forced word the recognizer did not commit."""
    item = _entry(speech_manifest, SHORT)
    session = ShadowSession(ShadowConfig(voice_slowdown=20.0), shadow_models)
    report = session.run_file(load_audio(speech_dir / item["wav"])).report()
    assert report[m.UNDERRUNS] >= 1  # 5 on the 2-core AMD EPYC VM
    assert report["underruns_short_notice"] < report[m.UNDERRUNS] / 2
    assert report["underruns_forced"] <= report["forced_words"]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "words_before"), [("librivox_ss_0880", 3), ("librivox_ss_0890", 3)])
def test_a_sentence_start_followed_by_a_pause_is_spoken_before_the_speaker_goes_on(
    shadow_models, speech_manifest, speech_dir, monkeypatch, name: str, words_before: int
) -> None:
    """A sentence's first words ("He was not", "Unless to be"), 3 s of silence, then the rest. The recognizer writes no
    sentence end there, and the first chunk of a sentence waits for its lookahead: those words waited up to
    ``MAX_WAIT_S`` (2.4-2.7 s after their commit, into the next phrase). Once the recognizer hears the pause they
    are spoken. Compute is free on this clock, so every run takes the same steps."""
    monkeypatch.setattr(session_module, "SimulatedClock", functools.partial(SimulatedClock, timer=lambda: 0.0))
    item = _entry(speech_manifest, name)
    times = item["word_times"]
    audio = load_audio(speech_dir / item["wav"])
    cut = int((times[words_before - 1][2] + times[words_before][1]) / 2 * 16000)
    audio = np.concatenate([audio[:cut], np.zeros(3 * 16000, np.float32), audio[cut:]])
    report = ShadowSession(ShadowConfig(), shadow_models).run_file(audio).report()
    # the words heard before the pause are those committed before the speaker goes on: Whisper may time a word heard
    # after it into the pause (on an AMD EPYC, "an ill" as "Anil", timed to end at 1.21 s and committed at 4.5 s)
    before = [w for w in report["words"] if w["commit_s"] < cut / 16000 + 3.0]
    assert [normalize_for_wer(w["text"]) for w in before] == [t[0] for t in times[:words_before]]
    for word in before:
        assert word["ready_s"] - word["commit_s"] < MAX_WAIT_S / 2, word  # 0.0-0.9 s
        assert word["speak_end_s"] < cut / 16000 + 3.0  # before the speaker goes on
    if any(w["text"].endswith((".", "?", "!")) for w in before):
        # Whisper's decode differs a little from one CPU to another: on an Intel Xeon it wrote "not..." here, and
        # a sentence end is spoken at once, so nothing waited and the rule under test was not exercised
        pytest.skip(f"the recognizer ended the sentence before the pause: {' '.join(w['text'] for w in before)}")


@pytest.mark.slow
def test_file_session_speaks_every_committed_word(shadow_models, speech_manifest, speech_dir, tmp_path) -> None:
    item = _entry(speech_manifest, SHORT)
    session = ShadowSession(ShadowConfig(), shadow_models, record_dir=tmp_path / "rec")
    session.flow.trimmer.every_s = 0.0  # give freed memory back at every recognizer step (every 10 s by default)
    report = session.run_file(load_audio(speech_dir / item["wav"])).report()
    assert session.state == State.DONE and session.error is None
    assert session.flow.trimmer.trims > 0 or not session.flow.trimmer.available
    assert session.asr_run is not None and session.asr_run.committed == []  # the session keeps its own records
    assert wer(item["text"], report["committed_text"]) < 0.3
    assert report["spoken_text"] == report["committed_text"]  # nothing lost between ASR and the voice
    words = report["words"]
    assert len(words) >= 15
    for w in words:  # causality on one clock: said → committed → synthesized → played
        # (a word may start playing in an earlier piece than the one that finishes it, never before its commit)
        assert w["source_end_s"] < w["commit_s"] <= w["ready_s"] <= w["speak_end_s"]
        assert w["commit_s"] <= w["speak_start_s"] < w["speak_end_s"]
        assert w[m.EAR_VOICE_LAG_S] == pytest.approx(w["speak_end_s"] - w["source_end_s"])
    ends = [w["speak_end_s"] for w in words]
    assert ends == sorted(ends)
    assert 0.5 < report[m.EAR_VOICE_LAG_S]["median"] < 8.0
    assert report[m.UNDERRUNS] == 0 and report[m.CHUNK_DELAY_S] > 0
    folder = tmp_path / "rec"
    for name in (INPUT_WAV, OUTPUT_WAV, TRANSCRIPT, METRICS, REPORT):
        assert (folder / name).stat().st_size > 0, name
    with wave.open(str(folder / INPUT_WAV)) as w:
        assert w.getnframes() == load_audio(speech_dir / item["wav"]).size
    events = [json.loads(x)["event"] for x in (folder / TRANSCRIPT).read_text().splitlines()]
    assert events.count("committed") == events.count("spoken") == len(words)
    with wave.open(str(folder / OUTPUT_WAV)) as w:  # the voice placed at its play times
        assert w.getnframes() / w.getframerate() == pytest.approx(words[-1]["speak_end_s"], abs=0.5)
    # captions: strict parsers read them, and their times are the words' (heard: source times; spoken: play times)
    heard = list(srt.parse((folder / "heard.srt").read_text(encoding="utf-8")))
    spoken = webvtt.from_string((folder / "spoken.vtt").read_text(encoding="utf-8"))
    assert " ".join(c.content.replace("\n", " ") for c in heard) == report["committed_text"]
    assert " ".join(c.text.replace("\n", " ") for c in spoken) == report["spoken_text"]
    assert heard[0].start.total_seconds() == pytest.approx(words[0]["source_start_s"], abs=0.001)
    assert heard[-1].end.total_seconds() == pytest.approx(words[-1]["source_end_s"], abs=0.001)
    assert _vtt_seconds(spoken.captions[0].start) == pytest.approx(words[0]["speak_start_s"], abs=0.001)
    assert _vtt_seconds(spoken.captions[-1].end) == pytest.approx(words[-1]["speak_end_s"], abs=0.001)
    assert (folder / "transcript.txt").read_text(encoding="utf-8").split() == report["committed_text"].split()


class _StopAfterFirstWords(SessionListener):
    def __init__(self) -> None:
        self.session: ShadowSession | None = None
        self.committed = 0
        self.states: list[State] = []

    def on_committed(self, words) -> None:
        self.committed += len(words)
        if self.session is not None:
            self.session.stop()

    def on_state(self, state: State) -> None:
        self.states.append(state)


@pytest.mark.slow
def test_stop_drains_what_was_heard(shadow_models, speech_manifest, speech_dir) -> None:
    item = _entry(speech_manifest, "librivox_sonnet002")
    listener = _StopAfterFirstWords()
    session = ShadowSession(ShadowConfig(), shadow_models, listener)
    listener.session = session
    report = session.run_file(load_audio(speech_dir / item["wav"])).report()
    heard = report["audio_s_heard"]
    assert heard < 10  # stopped early in a 51 s passage
    assert report["spoken_text"] == report["committed_text"] and report["committed_text"]
    assert listener.states[-2:] == [State.STOPPING, State.DONE]


@pytest.mark.slow
def test_cancel_stops_at_once_and_keeps_the_recording(shadow_models, speech_manifest, speech_dir, tmp_path) -> None:
    item = _entry(speech_manifest, "librivox_sonnet002")
    session = ShadowSession(ShadowConfig(), shadow_models, record_dir=tmp_path / "rec")
    audio = load_audio(speech_dir / item["wav"])
    done = threading.Event()

    class Cancel(SessionListener):
        def on_spoken(self, words) -> None:
            if not done.is_set():
                done.set()
                session.cancel()

    session.listener = Cancel()
    report = session.run_file(audio, realtime=False).report()
    assert session.state == State.CANCELLED
    assert len(report["words"]) < len(item["text"].split()) / 2
    assert (tmp_path / "rec" / REPORT).is_file() and (tmp_path / "rec" / INPUT_WAV).stat().st_size > 44


class _LostMicrophone:
    """A capture whose device goes away after two blocks (what PortAudio reports as an inactive stream)."""

    def __init__(self, audio: np.ndarray) -> None:
        self.blocks = [audio[i : i + 1600] for i in range(0, audio.size, 1600)][:20]
        self.position = 0
        self.started = self.stopped = False

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        if self.position >= len(self.blocks):
            return None
        block = AudioBlock(self.blocks[self.position], 16000, self.position * 0.1)
        self.position += 1
        return block

    def read_available(self) -> list[AudioBlock]:
        return []

    def check(self) -> None:
        raise AudioDeviceError("the input device 'usb-mic' stopped delivering audio (unplugged?)")


@pytest.mark.slow
def test_a_lost_microphone_is_reported_and_the_session_kept(
    shadow_models, speech_dir, speech_manifest, tmp_path, virtual_audio
) -> None:
    item = _entry(speech_manifest, SHORT)
    errors: list[str] = []

    class Errors(SessionListener):
        def on_error(self, message: str) -> None:
            errors.append(message)

    session = ShadowSession(ShadowConfig(), shadow_models, Errors(), record_dir=tmp_path / "rec")
    capture = _LostMicrophone(load_audio(speech_dir / item["wav"]))
    session.start_live(capture)
    assert session.wait(60)
    assert session.state == State.FAILED and capture.stopped
    assert errors and "unplugged" in errors[0] and "usb-mic" in session.error
    with wave.open(str(tmp_path / "rec" / INPUT_WAV)) as w:
        assert w.getnframes() == 20 * 1600  # every block heard before the loss is kept
    report = json.loads((tmp_path / "rec" / REPORT).read_text())
    assert report["command"] == "shadow" and report["error"] == session.error
    # The speaker is still there: the 2 s heard before the loss are recognized to the end and spoken
    words = report["words"]
    assert len(words) >= 3 and all(w["speak_end_s"] is not None for w in words), words
    assert normalize_for_wer(report["committed_text"]).split()[:3] == ["he", "began", "a"], report["committed_text"]


@pytest.mark.slow
def test_shadow_file_scores_the_speech_chain(shadow_models, speech_manifest, speech_dir, tmp_path) -> None:
    item = _entry(speech_manifest, "librivox_ss_0870")  # has forced-alignment word times
    out = tmp_path / "voice.wav"
    report = shadow_file(speech_dir / item["wav"], ShadowConfig(), shadow_models, out=out, entry=item)
    assert report["source_times"].startswith("manifest word_times")
    assert report[m.WER_COMMITTED] < 0.35
    assert report[m.WER_SPOKEN] is not None and report[m.WER_SPOKEN] < 0.5  # the voice is intelligible
    assert out.stat().st_size > 10_000
    assert report[m.EAR_VOICE_LAG_S]["n"] >= 0.6 * len(item["text"].split())


@pytest.mark.slow  # the models load in the command's process
def test_shadow_command_writes_the_voice_and_the_report(speech_dir, speech_manifest, tmp_path) -> None:
    item = _entry(speech_manifest, SHORT)
    out, report_path = tmp_path / "out.wav", tmp_path / "report.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine.cli",
            "shadow",
            str(speech_dir / item["wav"]),
            "--out",
            str(out),
            "--report",
            str(report_path),
            "--simulate",
            "--preset",
            "best-voice",
            "--k",
            "3",
            "--record",
            str(tmp_path / "rec"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(report_path.read_text())
    assert report["config"]["mode"] == "simulate" and report[m.EAR_VOICE_LAG_S]["n"] > 10
    # the preset's knobs, and the one given on its own over it
    assert report["config"]["k"] == 3 and report["config"]["tentative_lookahead"] is False
    assert "ear-voice lag median" in result.stderr and out.stat().st_size > 10_000
    for name in ("heard.srt", "heard.vtt", "spoken.srt", "spoken.vtt", "transcript.txt", "committed.srt"):
        assert (tmp_path / "rec" / name).stat().st_size > 0, name
    # the recording recognized again after the session: the captions hold those words, the report has them
    assert "recognizing the whole recording again: 100%" in result.stderr
    heard = list(srt.parse((tmp_path / "rec" / "heard.srt").read_text(encoding="utf-8")))
    assert " ".join(c.content.replace("\n", " ") for c in heard) == report["transcript_text"]
    assert report[m.WER_TRANSCRIPT] is not None and report[m.WER_TRANSCRIPT] < 0.3


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["shadow"], 2, "give a recording"),
        (["shadow", "missing.wav"], 1, "not found"),
        (["shadow", "x.wav", "--live"], 2, "give a recording"),
        (["shadow", "x.wav", "--echo-guard", "loud"], 2, "invalid choice"),
        (["shadow", "x.wav", "--k", "-1"], 2, "k, delta"),
        (["shadow", "x.wav", "--phrase-chunk", "-1"], 2, "phrase chunk"),
        (["shadow", "x.wav", "--preset", "fastest"], 2, "invalid choice"),
    ],
)
def test_shadow_command_bad_input(args: list[str], code: int, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    from engine import cli

    try:
        exit_code = cli.main(args)
    except SystemExit as exit_:  # argparse's own usage errors exit
        exit_code = exit_.code
    assert exit_code == code
    assert text in capsys.readouterr().err


class _PacedMicrophone:
    """A capture that delivers a recording in 0.1 s blocks at the pace a microphone would, then nothing."""

    def __init__(self, audio: np.ndarray) -> None:
        self.blocks = [audio[i : i + 1600] for i in range(0, audio.size, 1600)]
        self.position = 0
        self.began: float | None = None

    def start(self) -> None:
        self.began = time.monotonic()

    def stop(self) -> None:
        pass

    def read(self, timeout: float | None = None) -> AudioBlock | None:
        assert self.began is not None
        due = self.began + (self.position + 1) * 0.1
        if self.position >= len(self.blocks) or due - time.monotonic() > (timeout or 0):
            time.sleep(timeout or 0)
            return None
        time.sleep(max(due - time.monotonic(), 0))
        block = AudioBlock(self.blocks[self.position], 16000, self.position * 0.1)
        self.position += 1
        return block

    def read_available(self) -> list[AudioBlock]:
        blocks = []
        while (block := self.read(0)) is not None:
            blocks.append(block)
        return blocks

    def check(self) -> None:
        pass


@pytest.mark.audio
def test_a_live_session_with_the_echo_canceller_hears_the_speaker_and_plays_on_a_device(
    shadow_models, speech_dir, speech_manifest, tmp_path, virtual_audio
) -> None:
    """Live with ``--echo-guard cancel`` (the voice on the virtual speaker): each piece is written into the voice's
    track as it begins playing, every microphone block goes through the canceller, and the speaker is kept."""
    item = _entry(speech_manifest, SHORT)
    capture = _PacedMicrophone(load_audio(speech_dir / item["wav"]))
    session = ShadowSession(ShadowConfig(echo_guard="cancel"), shadow_models, record_dir=tmp_path / "rec")
    session.start_live(capture)
    deadline = time.monotonic() + 60
    while capture.position < len(capture.blocks) and time.monotonic() < deadline:
        time.sleep(0.1)
    session.stop()
    assert session.wait(60) and session.state == State.DONE
    report = json.loads((tmp_path / "rec" / REPORT).read_text())
    assert report["echo"]["guard"] == "cancel" and report["echo"]["aec_audio_s"] > 4.5
    assert wer(item["text"], report["committed_text"]) < 0.35, report["committed_text"]
    assert session.voice_track is not None and session.voice_track.end_s > 5.0  # written at its play times
    assert "echo" in (skip_reason(tmp_path / "rec") or "")  # its recording holds the voice: not passed again
