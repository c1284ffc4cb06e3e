"""The window built around the transcript: layout, presets, shortcuts, accessible names, the device check and
the session summary. pytest-qt offscreen, with real models and PulseAudio virtual devices where a test needs them."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit, QProgressBar, QWidget

from engine.audio.resample import resample
from engine.pipeline.presets import CUSTOM, PRESETS, preset
from engine.pipeline.records import WordRecord
from tests import virtual_audio as va

pytestmark = pytest.mark.gui

SHORT = "ls_61-70968-0000"


@pytest.fixture
def window(qtbot, virtual_audio: va.VirtualAudio, data_dir: Path):
    from app.main_window import MainWindow

    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.controller.shutdown()


def _records(words: list[str], sentence: int = 0) -> list[WordRecord]:
    return [WordRecord(sentence, i, w, i * 0.3, i * 0.3 + 0.25, i * 0.3 + 1.0) for i, w in enumerate(words)]


def test_the_transcript_is_the_largest_widget(window) -> None:
    area = window.transcript.width() * window.transcript.height()
    for widget in window.centralWidget().findChildren(QWidget):
        if widget.isVisible() and widget is not window.transcript and not window.transcript.isAncestorOf(widget):
            if widget.isAncestorOf(window.transcript):
                continue
            assert widget.width() * widget.height() < area, widget
    assert window.transcript.height() > window.height() / 3


def test_the_transcript_follows_new_words_unless_scrolled_back(qtbot, window) -> None:
    view = window.transcript
    view.add_committed(_records([f"word{i}" for i in range(400)]))
    qtbot.waitUntil(lambda: view.verticalScrollBar().maximum() > 0, timeout=2000)
    qtbot.waitUntil(lambda: view.following, timeout=2000)
    view.verticalScrollBar().setValue(0)  # the user scrolls back to read
    view.add_committed(_records([f"more{i}" for i in range(200)], sentence=1))
    qtbot.wait(300)  # a few renders
    assert view.verticalScrollBar().value() == 0 and not view.following
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    view.set_tentative(["still", "changing"])
    qtbot.wait(300)
    assert view.following


def test_ctrl_plus_and_minus_change_the_transcript_size_and_it_is_remembered(qtbot, window) -> None:
    from app.main_window import MainWindow

    size = window.transcript.point_size
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Plus, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window, Qt.Key.Key_Plus, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert window.transcript.point_size == size + 1
    window.close()
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.transcript.point_size == size + 1


def test_presets_set_their_knobs_and_a_changed_knob_makes_it_custom(qtbot, window) -> None:
    panel = window.settings_panel
    for item in PRESETS:
        panel.preset.setCurrentIndex(panel.preset.findData(item.key))
        panel.preset.activated.emit(panel.preset.currentIndex())
        config = panel.config(None, None)
        assert item.matches(config), item.key
        assert panel.preset.currentText() == item.name
        assert window.preset_label.text() == f"Preset: {item.name}"
    assert preset("best-voice").knobs["k"] == 2 and panel.k.value() == 2
    panel.k.setValue(3)  # no preset has k = 3
    assert panel.preset.currentText() == CUSTOM
    assert "not measured" in panel.preset_figures.text()
    panel.k.setValue(2)  # back to Best voice's knobs
    assert panel.preset.currentText() == "Best voice"


def test_every_control_has_an_accessible_name(window) -> None:
    kinds = (QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit, QProgressBar)
    window.settings_dock.show()
    controls = [
        w
        for w in window.findChildren(QWidget)
        if isinstance(w, kinds)
        and w.isVisibleTo(window)
        and not isinstance(w.parentWidget(), kinds)  # a spin box's own line edit is part of the spin box
    ]
    assert len(controls) > 25
    unnamed = [f"{type(w).__name__} {getattr(w, 'text', lambda: '')()}" for w in controls if not w.accessibleName()]
    assert not unnamed, unnamed


def test_the_settings_panel_folds_away_and_is_remembered(qtbot, window) -> None:
    from app.main_window import MainWindow

    assert not window.settings_dock.isVisible()
    window.settings_button.trigger()
    assert window.settings_dock.isVisible()
    window.close()
    again = MainWindow()
    qtbot.addWidget(again)
    again.show()
    assert again.settings_dock.isVisible()


def test_the_microphone_level_moves_while_idle(qtbot, window, virtual_audio, speech_dir, speech_manifest) -> None:
    item = next(e for e in speech_manifest if e["id"] == SHORT)
    qtbot.waitUntil(lambda: window.level_monitor is not None, timeout=5000)
    qtbot.wait(1500)  # an input stream delivers nothing for its first moments
    quiet = window.idle_level.value()
    player = virtual_audio.play_into_mic(speech_dir / item["wav"])
    levels: list[int] = []
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and player.poll() is None:
        qtbot.wait(100)
        levels.append(window.idle_level.value())
    player.wait(10)
    assert max(levels) >= quiet + 20, (quiet, levels)  # speech lifts the bar well above the virtual mic's silence


def test_test_speaker_plays_the_sentence_on_the_chosen_speaker(qtbot, window, virtual_audio, tmp_path) -> None:
    from engine.tts.policies import make_policy
    from engine.tts.speaker_check import TEST_SENTENCE
    from engine.tts.synthesizer import IncrementalSynthesizer
    from engine.tts.voice import TwoStageVoice

    heard = tmp_path / "speaker.wav"
    results: list[object] = []
    window.controller.speaker_tested.connect(results.append)
    with virtual_audio.record_speaker(heard, tail_s=0.8):
        window.test_speaker_button.click()
        assert not window.test_speaker_button.isEnabled()
        qtbot.waitUntil(lambda: bool(results), timeout=60_000)
    assert results == [None], results
    assert window.test_speaker_button.isEnabled() and "Did you hear it" in window.statusBar().currentMessage()
    voice = TwoStageVoice()
    synthesizer = IncrementalSynthesizer(voice, make_policy("full"))
    expected = np.concatenate([p.samples for p in synthesizer.feed(TEST_SENTENCE) + synthesizer.flush()])
    recording, rate = va.read_mono(heard)
    score, _ = va.aligned_correlation(recording, resample(expected, voice.sample_rate, rate))
    assert score > 0.8, score


def test_a_speaker_that_cannot_play_says_so_in_the_window(qtbot, window) -> None:
    window.output_combo.addItem("gone", "no-such-speaker")
    window.output_combo.setCurrentIndex(window.output_combo.count() - 1)
    window.test_speaker_button.click()
    qtbot.waitUntil(lambda: "speaker test failed" in window.message.text(), timeout=60_000)
    assert "no-such-speaker" in window.message.text() and "Choose another speaker" in window.message.text()
    assert window.test_speaker_button.isEnabled()


def test_keyboard_starts_stops_cancels_and_exports_a_session(
    qtbot, window, shadow_models, speech_dir, speech_manifest, tmp_path, monkeypatch
) -> None:
    from app.widgets.settings_panel import SOURCE_FILE

    window.controller.models = shadow_models
    item = next(e for e in speech_manifest if e["id"] == "librivox_sonnet002")
    window.settings_panel.source.setCurrentText(SOURCE_FILE)
    window.settings_panel.source_file.setText(str(speech_dir / item["wav"]))
    window.start_button.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.state == "running", timeout=10_000)
    qtbot.waitUntil(lambda: window.transcript.counts[2] > 0, timeout=30_000)
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: window.state == "cancelled", timeout=5000)
    assert "Last session:" in window.meters.summary.text()
    window.start_button.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: window.state == "running", timeout=10_000)
    qtbot.waitUntil(lambda: window.transcript.counts[1] + window.transcript.counts[2] > 0, timeout=30_000)
    qtbot.keyClick(window, Qt.Key.Key_Space)  # stop: what was heard is still spoken
    qtbot.waitUntil(lambda: window.state == "done", timeout=60_000)
    assert window.transcript.counts[1] == 0  # every committed word was spoken
    from app import main_window

    target = tmp_path / "exported"
    target.mkdir()
    monkeypatch.setattr(main_window.QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(target))
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    exported = target / window.controller.session_folder.name
    assert (exported / "spoken.vtt").is_file() and (exported / "report.json").is_file()


def test_a_past_session_opens_again_and_replays_side_by_side_from_a_clicked_word(
    qtbot, window, virtual_audio, shadow_models, speech_dir, speech_manifest, tmp_path
) -> None:
    from PySide6.QtCore import QUrl

    from app.widgets.settings_panel import SOURCE_FILE
    from engine.audio.io import load_audio

    window.controller.models = shadow_models
    item = next(e for e in speech_manifest if e["id"] == SHORT)
    window.settings_panel.source.setCurrentText(SOURCE_FILE)
    window.settings_panel.source_file.setText(str(speech_dir / item["wav"]))
    window.start_button.click()
    qtbot.waitUntil(lambda: window.state == "done", timeout=90_000)
    folder = window.controller.session_folder
    window.transcript.clear_words()

    dialog = window.show_sessions()
    assert dialog.list.count() == 1 and dialog.selected() == folder
    dialog.open_button.click()
    qtbot.waitUntil(lambda: window.transcript.counts[2] >= 12, timeout=2000)
    assert window.transcript.clickable and window.shown_folder == folder
    assert "Last session:" in window.meters.summary.text()

    # recognized again from the list: the whole pass after the session ran already; its files removed, it runs anew
    qtbot.waitUntil(lambda: not window.controller.passing, timeout=60_000)
    qtbot.wait(200)  # its last message is delivered
    for name in ("whole_pass.jsonl", "committed.srt", "committed.vtt"):
        (folder / name).unlink()
    window.statusBar().clearMessage()
    dialog.again_button.click()
    qtbot.waitUntil(lambda: "now hold the whole" in window.statusBar().currentMessage(), timeout=60_000)
    assert (folder / "whole_pass.jsonl").is_file() and (folder / "committed.srt").is_file()

    heard = tmp_path / "replay.wav"
    with virtual_audio.record_speaker(heard, rate=16000, channels=2, tail_s=0.8):
        dialog.side_button.click()
        assert window.replay is not None
        qtbot.waitUntil(lambda: window.replay is None, timeout=60_000)
    recording, _ = sf.read(str(heard), dtype="float32", always_2d=True)
    source = load_audio(folder / "input.wav")
    voice = load_audio(folder / "output.wav")
    left, _ = va.aligned_correlation(recording[:, 0], source)
    right, _ = va.aligned_correlation(recording[:, 1], voice)
    assert left > 0.8 and right > 0.8, (left, right)
    cross, _ = va.aligned_correlation(recording[:, 0], voice)
    assert cross < 0.5, cross  # the voice is not on the speaker's channel

    dialog.close()  # back to the window, whose transcript the user clicks
    window.activateWindow()
    qtbot.wait(300)  # the transcript renders its words as links
    window.transcript.anchorClicked.emit(QUrl("w5"))  # the sixth word, clicked
    assert window.replay is not None
    message = window.statusBar().currentMessage()
    assert "side by side from" in message, message
    qtbot.keyClick(window, Qt.Key.Key_Escape)  # stops the replay
    assert window.replay is None


def test_the_summary_scores_the_voice_against_a_transcript_beside_the_recording(tmp_path: Path) -> None:
    from app.session_controller import reference_text
    from app.widgets.meters_panel import summary_text

    (tmp_path / "talk.txt").write_text("Hello there.\n", encoding="utf-8")
    assert reference_text(tmp_path / "talk.wav") == "Hello there."
    assert reference_text(tmp_path / "other.wav") is None
    report = {
        "audio_s_heard": 12.0,
        "words": [{"speak_end_s": 13.2}, {"speak_end_s": None}],
        "underruns": 1,
        "ear_voice_lag_s": {"median": 2.0, "p90": 3.1},
        "commit_latency_s": {"median": 0.5},
    }
    text = summary_text(report, wer_committed=0.25)
    assert text == (
        "Last session: 13 s · 2 words committed, 1 spoken · ear-voice lag median 2.00 s, p90 3.10 s · "
        "1 underrun · commit latency median 0.50 s · wer_committed 0.250"
    )


def test_the_transcript_takes_its_colours_from_a_dark_palette(qtbot, window) -> None:
    from PySide6.QtGui import QColor, QPalette

    dark = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Base, "#1e1e1e"),
        (QPalette.ColorRole.Text, "#e0e0e0"),
        (QPalette.ColorRole.Highlight, "#3d6fb4"),
        (QPalette.ColorRole.HighlightedText, "#ffffff"),
        (QPalette.ColorRole.PlaceholderText, "#8a8a8a"),
    ):
        dark.setColor(role, QColor(colour))
    window.transcript.setPalette(dark)
    records = _records(["night", "mode"])
    window.transcript.add_committed(records)
    window.transcript.mark_spoken(records[:1])
    window.transcript.set_tentative(["maybe"])
    qtbot.wait(300)
    html = window.transcript.toHtml().lower()
    assert "#3d6fb4" in html and "#8a8a8a" in html  # spoken words and tentative ones in the palette's colours
    assert "#ffe08a" not in html  # no fixed light-theme colour


def test_the_learned_policy_is_picked_in_the_window_and_a_broken_one_is_shown_falling_back(
    qtbot, window, shadow_models, speech_dir, speech_manifest, tmp_path, monkeypatch
) -> None:
    from app.widgets.settings_panel import SOURCE_FILE
    from engine.tts.learned import agent as agent_module

    panel = window.settings_panel
    panel.policy.setCurrentIndex(panel.policy.findData("learned"))
    assert panel.config(None, None).tts_policy == "learned" and panel.preset.currentData() == CUSTOM
    broken = tmp_path / "learned_policy.onnx"
    broken.write_bytes(b"truncated")
    monkeypatch.setattr(agent_module, "default_policy_path", lambda: broken)
    window.controller.models = shadow_models
    item = next(e for e in speech_manifest if e["id"] == "vctk_p225_002")
    panel.source.setCurrentText(SOURCE_FILE)
    panel.source_file.setText(str(speech_dir / item["wav"]))
    window.start_button.click()
    qtbot.waitUntil(lambda: "lookahead-1 instead" in window.message.text(), timeout=10_000)
    assert str(broken) in window.message.text()
    qtbot.waitUntil(lambda: window.state == "done", timeout=60_000)
    assert window.transcript.counts[1] == 0  # the fallback spoke every committed word
    panel.apply_preset(preset("balanced"))
    assert panel.policy.currentData() == "lookahead"  # a preset sets the voice policy back to its own


def test_the_source_picker_shows_the_route_and_warns_of_a_loop(qtbot, window) -> None:
    """This computer's sound heard from the output the voice plays on loops (shown in orange, the voice cancelled);
    with the voice on another output nothing is cancelled. The microphone with no guard suggests cancel."""
    from app.widgets.route_banner import LOOP_COLOUR, ROUTE_COLOUR
    from app.widgets.settings_panel import SOURCE_MIC, SOURCE_SYSTEM

    panel = window.settings_panel
    labels = [panel.source.itemText(i) for i in range(panel.source.count())]
    assert labels == ["Microphone", "This computer's sound", "Recording (file)"]
    panel.source.setCurrentText(SOURCE_SYSTEM)
    window.output_combo.setCurrentIndex(window.output_combo.findData(f"pulse:{va.SPEAKER_SINK}"))
    route = window.route_label.text()
    assert "Monitor of VirtualSpeaker" in route and "cancelled" in route
    assert LOOP_COLOUR in window.route_label.styleSheet()
    window.output_combo.setCurrentIndex(window.output_combo.findData(f"pulse:{va.MIC_SINK}"))
    assert "nothing to cancel" in window.route_label.text() and ROUTE_COLOUR in window.route_label.styleSheet()
    assert window.headphones.isHidden()
    panel.source.setCurrentText(SOURCE_MIC)
    panel.echo_guard.setCurrentText("off")
    assert "headphones" in window.route_label.text() and not window.headphones.isHidden()
    window.use_cancel_button.click()
    assert panel.echo_guard.currentText() == "cancel" and window.headphones.isHidden()
    assert "cancelled" in window.route_label.text()
    assert panel.config(None, None).echo_guard == "cancel"  # remembered with the settings
