"""The window's Practise mode: pytest-qt offscreen, the real recognizer, the virtual devices. The source plays on the
virtual speaker while a delayed copy of it (the person) plays into the virtual microphone."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests import virtual_audio as va

pytestmark = pytest.mark.gui

SOURCE_ID = "ls_61-70968-0000"  # 4.9 s
# long enough that the live marks come while it still plays on a slow machine (once the first came after 4.9 s)
MARKED_LIVE_ID = "ls_2412-153948-0000"  # 11.7 s


@pytest.fixture
def window(qtbot, data_dir: Path):
    from app.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    yield win
    win.practice.shutdown()
    win.controller.shutdown()


def _practise(win, recording: Path | None) -> None:
    from app.widgets.settings_panel import MODE_PRACTISE

    win.settings_panel.mode.setCurrentText(MODE_PRACTISE)
    if recording is not None:
        win.settings_panel.source_file.setText(str(recording))


def test_the_practise_mode_shows_its_view_asks_for_headphones_and_a_recording(window) -> None:
    from app.widgets.settings_panel import (
        MODE_PRACTISE,
        MODE_PRACTISE_INTERPRET,
        MODE_SHADOW,
        SOURCE_FILE,
        SOURCE_MIC,
        SOURCE_SYSTEM,
    )

    assert not window.practice.view.isVisibleTo(window) and window.transcript.isVisibleTo(window)
    _practise(window, None)
    panel = window.settings_panel
    assert window.practice.view.isVisibleTo(window) and not window.transcript.isVisibleTo(window)
    assert panel.source.currentText() == SOURCE_FILE and panel.language.isEnabled()
    assert "wear headphones" in window.route_label.text() and panel.practice_language() == "en"
    assert panel.language.currentText() == "Auto (English)"
    panel.source.setCurrentText(SOURCE_MIC)  # the microphone is the person's: a recording is played instead
    assert panel.source.currentText() == SOURCE_FILE
    panel.source.setCurrentText(SOURCE_SYSTEM)  # ... or this computer's sound is heard
    assert panel.source.currentText() == SOURCE_SYSTEM and "this computer's sound" in window.route_label.text()
    panel.source.setCurrentText(SOURCE_FILE)
    panel.source_file.setText("")
    window.start_session()
    assert "choose a recording" in window.message.text() and window.state == "idle"
    panel.source_file.setText("/no/such/recording.wav")
    window.start_session()
    assert "does not exist" in window.message.text()
    panel.mode.setCurrentText(MODE_PRACTISE_INTERPRET)  # the recording's language: Auto is detected
    assert window.practice.view.isVisibleTo(window) and panel.practice_language() is None
    assert panel.language.currentText().startswith("Auto (detected")
    controls = window.practice.controls  # interpreting: into English or another language; no sentences, no loop
    assert controls.into.isEnabled() and not controls.sentences.isEnabled() and not controls.loop.isEnabled()
    assert controls.interpreting_into() is None  # English
    controls.into.setCurrentIndex(controls.into.findData("es"))
    assert controls.interpreting_into() == "es"
    panel.mode.setCurrentText(MODE_PRACTISE)
    assert not controls.into.isEnabled() and controls.interpreting_into() is None and controls.sentences.isEnabled()
    panel.mode.setCurrentText(MODE_SHADOW)
    assert window.transcript.isVisibleTo(window) and panel.source.isEnabled()


@pytest.mark.audio
def test_a_practice_in_the_window_marks_words_live_then_sums_up_shows_progress_and_replays(
    qtbot,
    window,
    virtual_audio: va.VirtualAudio,
    speech_dir: Path,
    speech_manifest: list[dict],
    tmp_path: Path,
    artifacts_dir: Path,
    passage_file_session: dict,
) -> None:
    from engine.practice.pace_setter import PaceSetter, keep

    entry = next(e for e in speech_manifest if e["id"] == MARKED_LIVE_ID)
    source = speech_dir / entry["wav"]
    # the pace-setter kept from an earlier attempt: the source's default file session (tests/conftest.py); the first
    # attempt's own run of it is checked in tests/test_practice_live.py
    keep(PaceSetter.of_session(passage_file_session), source)
    audio, rate = sf.read(str(source), dtype="float32")
    person = tmp_path / "person.wav"  # the person shadows 1.2 s behind
    sf.write(str(person), np.concatenate([np.zeros(int(1.2 * rate), np.float32), audio]), rate)
    _practise(window, source)
    view = window.practice.view
    window.start_button.click()
    qtbot.waitUntil(lambda: window.state == "running", timeout=120_000)
    assert window.status_label.text() == "Practising" and window.stop_button.isEnabled()
    qtbot.waitUntil(lambda: window.practice.controller.snapshot().position_s > 0, timeout=10_000)
    speaking = virtual_audio.play_into_mic(person)
    try:
        # the live marks: words turn said (green) with an EVS shown, while the source still plays
        qtbot.waitUntil(lambda: "#2e7d32" in view.source_view.toHtml() and view.evs_label.text() != "–", timeout=15_000)
        snap = window.practice.controller.snapshot()
        assert snap.position_s < snap.duration_s and view.evs_curve.getData()[0] is not None
        assert view.pace_curve.getData()[0] is not None and "liveshadow" in view.machine_label.text()
        qtbot.waitUntil(lambda: window.state == "done", timeout=60_000)
    finally:
        speaking.wait(timeout=30)
    report = window.practice.report
    assert report is not None and report["evs_s"]["n"] >= 15 and report["accuracy"] >= 0.8
    assert 1.0 < report["evs_s"]["median"] < 2.5  # 1.2 s behind, and when the copy began after the source
    assert view.summary.isVisible() and "Ear-voice span: median" in view.summary.text()
    assert 'href="w0"' in view.source_view.toHtml()
    window.resize(1100, 760)
    assert window.grab().save(str(artifacts_dir / "practice_window.png"))  # for people to look at (README)
    xs, ys = view.progress_curve.getData()
    assert list(xs) == [1] and ys[0] == pytest.approx(report["evs_s"]["median"])
    # Export…: the attempt for Praat and ELAN, liveshadow's own rendering (the pace-setter) a tier beside the person's
    from praatio import textgrid

    assert window.export_button.isEnabled() and "TextGrid" in window.export_button.toolTip()
    written = window.practice.export_to(tmp_path / "export")
    assert sorted(p.suffix for p in written) == [".TextGrid", ".csv", ".eaf"]
    grid = textgrid.openTextgrid(str(next(p for p in written if p.suffix == ".TextGrid")), includeEmptyIntervals=False)
    assert grid.tierNames == ("source", "attempt", "mark", "evs", "liveshadow")
    spoken = [e.label for e in grid.getTier("liveshadow").entries]
    assert len(spoken) >= 0.8 * len(report["machine_words"]) and spoken[0] == report["machine_words"][0]["text"]
    # replay from a word: the source left, the person right
    from PySide6.QtCore import QUrl

    view.source_view.anchorClicked.emit(QUrl("w3"))
    assert window.replay is not None and "from" in window.statusBar().currentMessage()
    time.sleep(0.5)
    window.stop_replay()
    assert window.replay is None


@pytest.mark.audio
def test_a_practice_on_this_computers_sound_marks_words_as_heard_until_stop_then_sums_up_and_replays(
    qtbot, window, virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    """Another application plays the source; the window recognizes it and the person live, and Stop scores."""
    import subprocess

    from PySide6.QtCore import QUrl

    from app.widgets.settings_panel import SOURCE_SYSTEM

    source = speech_dir / next(e for e in speech_manifest if e["id"] == SOURCE_ID)["wav"]
    audio, rate = sf.read(str(source), dtype="float32")
    person = tmp_path / "person.wav"  # the person shadows 1 s behind
    sf.write(str(person), np.concatenate([np.zeros(rate, np.float32), audio]), rate)
    _practise(window, None)
    window.settings_panel.source.setCurrentText(SOURCE_SYSTEM)
    view = window.practice.view
    window.start_button.click()
    qtbot.waitUntil(lambda: window.state == "running", timeout=60_000)
    qtbot.waitUntil(lambda: "Listening: play something" in view.position_label.text(), timeout=2_000)
    players = [
        subprocess.Popen(["paplay", f"--device={va.SPEAKER_SINK}", str(source)], env=virtual_audio.env()),
        virtual_audio.play_into_mic(person),
    ]
    try:
        qtbot.waitUntil(lambda: "#2e7d32" in view.source_view.toHtml() and view.evs_label.text() != "–", timeout=15_000)
        assert "s heard" in view.position_label.text()
        for player in players:
            player.wait(timeout=30)
        qtbot.wait(3000)
    finally:
        for player in players:
            player.kill()
    window.stop_button.click()
    qtbot.waitUntil(lambda: window.state == "done", timeout=60_000)
    report = window.practice.report
    assert report is not None and report["evs_s"]["n"] >= 15 and report["accuracy"] >= 0.8
    assert 0.5 < report["evs_s"]["median"] < 2.0  # 1 s behind, and when the two players began
    assert view.summary.isVisible() and "Ear-voice span: median" in view.summary.text()
    assert list(view.progress_curve.getData()[0]) == [1]  # the attempt, known by the sound it heard
    view.source_view.anchorClicked.emit(QUrl("w3"))
    assert window.replay is not None
    window.stop_replay()


def test_the_progress_plot_takes_each_attempt_by_its_kind(qtbot) -> None:
    """Shadowing attempts plot their EVS median and accuracy; interpreting ones their sentence lag and chrF / 100."""
    from app.widgets.practice_view import PracticeView, summary_text

    view = PracticeView()
    qtbot.addWidget(view)
    view.show_history(
        [
            {"at": 0, "evs_median_s": 1.2, "accuracy": 0.9},
            {"at": 60, "sentence_lag_median_s": 3.5, "chrf": 72.0, "task": "interpret"},
        ]
    )
    assert list(view.progress_curve.getData()[1]) == [1.2, 3.5]
    assert list(view.accuracy_curve.getData()[1]) == pytest.approx([0.9, 0.72])
    assert "2 attempts" in view.progress_plot.plotItem.titleLabel.text
    text = summary_text(
        {
            "task": "interpret",
            "sentence_lag_s": {"n": 1, "median": 3.5, "max": 3.5},
            "sentences": 1,
            "chrf": 72.0,
            "chrf_against": "reference translation",
        }
    )
    assert "median 3.50 s" in text and "chrF 72.0 against reference translation" in text


@pytest.mark.audio
def test_the_speed_slider_and_sentence_mode_play_the_source_slowed_in_sentences_and_are_remembered(
    qtbot,
    window,
    virtual_audio: va.VirtualAudio,
    speech_dir: Path,
    speech_manifest: list[dict],
    tmp_path: Path,
    artifacts_dir: Path,
) -> None:
    """0.75x and sentence by sentence in the window: the session plays the source slowed, a sentence at a time, the
    person (each sentence said again in its pause) is scored per sentence, the progress shows the attempt's speed,
    and the choices are there in the next window."""
    from app.settings import app_settings
    from app.widgets.practice_controls import PracticeControls
    from app.widgets.settings_panel import SOURCE_FILE, SOURCE_SYSTEM
    from tests.test_practice_sentences_live import _person

    source = speech_dir / next(e for e in speech_manifest if e["id"] == SOURCE_ID)["wav"]
    _practise(window, source)
    controls = window.practice.controls
    controls.speed_slider.setValue(controls.speed_slider.value() - 3)  # 1 → 0.9 → 0.8 → 0.75
    controls.sentences.setChecked(True)
    assert controls.speed() == 0.75 and controls.speed_label.text() == "0.75×"
    window.settings_panel.source.setCurrentText(SOURCE_SYSTEM)  # this computer's sound plays at its own speed
    assert not controls.speed_slider.isEnabled() and not controls.sentences.isEnabled()
    window.settings_panel.source.setCurrentText(SOURCE_FILE)
    assert controls.speed_slider.isEnabled()
    window.start_button.click()
    qtbot.waitUntil(lambda: window.state == "running", timeout=120_000)
    session = window.practice.controller.session
    assert session.speed == 0.75 and session.sentence_by_sentence
    sf.write(str(tmp_path / "person.wav"), _person(session), 16000, subtype="FLOAT")
    qtbot.waitUntil(lambda: window.practice.controller.snapshot().position_s > 0, timeout=10_000)
    speaking = virtual_audio.play_into_mic(tmp_path / "person.wav")
    try:
        qtbot.waitUntil(lambda: window.state == "done", timeout=90_000)
    finally:
        speaking.wait(timeout=30)
    report = window.practice.report
    assert report is not None and report["speed"] == 0.75 and report["mode"] == "sentence by sentence"
    assert report["sentences_said"] == len(report["sentences"]) >= 1
    assert report["source_s"] > 4.9 / 0.75 * 2  # slowed, and each sentence's pause
    text = window.practice.view.summary.text()
    assert "Sentence by sentence: " in text and "at 0.75x" in text
    window.resize(1100, 760)
    assert window.grab().save(str(artifacts_dir / "practice_sentences.png"))  # for people to look at (README)
    ticks = window.practice.view.progress_plot.getAxis("bottom")._tickLevels
    assert ticks and "0.75×" in ticks[0][0][1]
    again = PracticeControls(app_settings())
    qtbot.addWidget(again)
    assert again.speed() == 0.75 and again.sentence_by_sentence()


@pytest.mark.audio
def test_words_selected_in_an_attempt_loop_and_each_pass_is_scored(
    qtbot, window, virtual_audio: va.VirtualAudio, speech_dir: Path, speech_manifest: list[dict], tmp_path: Path
) -> None:
    """After an attempt, words selected in its transcript become the loop's A and B; the loop plays them twice, the
    person (a copy of what plays, 0.6 s late) shadows each pass, and both passes are scored, the best and the last
    named in the summary."""
    from PySide6.QtGui import QTextCursor

    source = speech_dir / next(e for e in speech_manifest if e["id"] == SOURCE_ID)["wav"]
    audio, rate = sf.read(str(source), dtype="float32")
    first = tmp_path / "first.wav"
    sf.write(str(first), np.concatenate([np.zeros(rate, np.float32), audio]), rate)
    _practise(window, source)
    controls, view = window.practice.controls, window.practice.view
    assert not controls.loop_selection.isEnabled()  # nothing selected yet

    def attempt(person_of) -> dict:
        window.start_button.click()
        qtbot.waitUntil(lambda: window.state == "running", timeout=120_000)
        person = tmp_path / "person.wav"
        sf.write(str(person), person_of(window.practice.controller.session), rate, subtype="FLOAT")
        qtbot.waitUntil(lambda: window.practice.controller.snapshot().position_s > 0, timeout=10_000)
        speaking = virtual_audio.play_into_mic(person)
        try:
            qtbot.waitUntil(lambda: window.state == "done", timeout=90_000)
        finally:
            speaking.wait(timeout=30)
        assert window.practice.report is not None
        return window.practice.report

    attempt(lambda session: sf.read(str(first), dtype="float32")[0])
    words = window.practice.report["words"]
    said = [w for w in words if w["source"]]
    plain = view.source_view.toPlainText()
    cursor = view.source_view.textCursor()
    starts, at = [], 0
    for word in said:  # where each word lies in the text shown
        starts.append(plain.index(word["source"], at))
        at = starts[-1] + len(word["source"])
    cursor.setPosition(starts[2])  # from the third word's start to inside the sixth
    cursor.setPosition(starts[5] + 1, QTextCursor.MoveMode.KeepAnchor)
    view.source_view.setTextCursor(cursor)
    assert controls.loop_selection.isEnabled()
    controls.loop_selection.click()
    assert controls.loop.isChecked() and not controls.sentences.isChecked()
    assert controls.loop_a.value() == pytest.approx(said[2]["source_start_s"], abs=0.05)
    assert controls.loop_b.value() == pytest.approx(said[5]["source_end_s"], abs=0.05)
    controls.passes.setValue(2)
    late = int(0.6 * rate)
    report = attempt(lambda session: np.concatenate([np.zeros(late, np.float32), session._audio]))
    assert report["mode"] == "loop" and report["loop"]["passes"] == 2
    passes = report["passes"]
    assert len(passes) == 2 and all(p["accuracy"] >= 0.75 for p in passes), passes
    assert all(0.3 < p["evs_s"] < 1.2 for p in passes), passes
    assert report["last_pass"] == 2 and report["best_pass"] in (1, 2)
    text = view.summary.text()
    assert "Loop " in text and "pass 2: " in text and "best" in text and "last)" in text
    assert view.selected_span() is None  # a loop's words are on its own clock: no stretch of the source to select
