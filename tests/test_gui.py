"""Qt offscreen: a window renders, the main window lists real devices and remembers its settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel, QMainWindow

from tests import virtual_audio as va

pytestmark = pytest.mark.gui


def test_minimal_main_window_renders_offscreen(qtbot, tmp_path: Path) -> None:
    window = QMainWindow()
    window.setCentralWidget(QLabel("liveshadow"))
    window.resize(320, 200)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    png = tmp_path / "window.png"
    assert window.grab().save(str(png), "PNG")
    assert png.stat().st_size > 0
    image = QImage(str(png))
    assert (image.width(), image.height()) == (320, 200)
    colours = {image.pixel(x, y) for x in range(0, 320, 8) for y in range(0, 200, 8)}
    assert len(colours) > 1, "the grabbed image is blank"


def test_main_window_lists_virtual_devices(qtbot, virtual_audio: va.VirtualAudio, artifacts_dir: Path) -> None:
    from app.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    assert window.input_combo.count() >= 1 and window.output_combo.count() >= 1
    # the sound server's own devices, by their descriptions, remembered by their server names
    assert window.input_combo.currentText() == "VirtualMicrophone (default)"
    assert window.input_combo.currentData() == f"pulse:{va.MIC_SOURCE}"
    outputs = {window.output_combo.itemText(i) for i in range(window.output_combo.count())}
    assert outputs == {"VirtualSpeaker (default)", "VirtualMicFeed"}
    assert window.message.text() == ""
    assert window.grab().save(str(artifacts_dir / "main_window.png"), "PNG")


def test_main_window_shows_missing_devices_in_the_window(qtbot, monkeypatch) -> None:
    from app import main_window
    from app.widgets import device_box
    from engine.audio.devices import AudioDeviceError

    def no_audio(direction=None):
        raise AudioDeviceError("the PortAudio library was not found")

    monkeypatch.setattr(device_box, "menu_devices", no_audio)
    window = main_window.MainWindow()
    qtbot.addWidget(window)
    assert "PortAudio" in window.message.text()
    assert window.input_combo.count() == 0


def test_a_hot_plug_keeps_the_error_that_ended_a_session_and_clears_only_its_own(qtbot, monkeypatch) -> None:
    from app import main_window
    from app.widgets import device_box
    from engine.audio.device_menu import MenuDevice

    plugged: dict[str, list] = {"input": [], "output": []}
    monkeypatch.setattr(device_box, "menu_devices", lambda direction: plugged[direction])
    monkeypatch.setattr(device_box, "rescan", lambda: None)
    window = main_window.MainWindow()
    qtbot.addWidget(window)
    assert window.message.text() == "No audio input device found. No audio output device found."

    plugged["input"] = [MenuDevice(label="Headset", value="pulse:headset", is_default=True)]
    window._check_hotplug()
    assert window.message.text() == "No audio output device found."  # the pickers' own message follows them
    plugged["output"] = [MenuDevice(label="Headset", value="pulse:headset_out", is_default=True)]
    window._check_hotplug()
    assert window.message.text() == ""

    window.show_error("playback stopped: the headset stopped playing (unplugged?)")  # as a session's end shows it
    window.devices.show_level(-20.0)  # the session's last level; idle with no microphone open, the bar falls
    window._update_meters()  # (a level left high would read as someone speaking, and hold off the re-scan)
    assert window.idle_level.value() == device_box.SILENT_LEVEL
    plugged["input"], plugged["output"] = [], []
    window._check_hotplug()
    assert window.message.text().startswith("playback stopped")  # unplugged: the session's error stays
    plugged["input"] = [MenuDevice(label="Headset", value="pulse:headset", is_default=True)]
    window._check_hotplug()
    assert window.message.text().startswith("playback stopped")  # nor does a device coming back clear it
    window.refresh_button.click()
    assert window.message.text() == "No audio output device found."  # asked for, the pickers say what is wrong


def test_settings_persist_between_windows(qtbot, virtual_audio: va.VirtualAudio) -> None:
    from app.main_window import MainWindow
    from app.settings import app_settings, settings_path
    from app.widgets.device_box import KEY_OUTPUT_DEVICE

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(701, 433)
    assert first.output_combo.count() >= 2  # the test server's two outputs
    other = (first.output_combo.currentIndex() + 1) % first.output_combo.count()
    chosen = first.output_combo.itemData(other)
    first.output_combo.setCurrentIndex(other)
    first.settings_panel.phrase_chunk.setValue(17)
    first.close()
    assert settings_path().exists()
    assert app_settings().value(KEY_OUTPUT_DEVICE) == chosen

    second = MainWindow()
    qtbot.addWidget(second)
    assert second.output_combo.currentData() == chosen
    assert second.settings_panel.phrase_chunk.value() == 17
    assert second.settings_panel.config(None, None).phrase_chunk == 17
    assert (second.width(), second.height()) == (701, 433)


def test_gui_command_writes_a_screenshot(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    result = subprocess.run(
        [sys.executable, "-m", "engine", "gui", "--screenshot", str(png)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert QImage(str(png)).width() > 100


def test_a_tiny_remembered_geometry_is_ignored(qtbot) -> None:
    from app.main_window import DEFAULT_SIZE, MainWindow

    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(120, 90)
    first.close()
    second = MainWindow()
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == DEFAULT_SIZE


def test_the_models_page_downloads_uses_and_removes_a_voice(
    qtbot, tmp_path: Path, monkeypatch, artifacts_dir: Path
) -> None:
    """The real bundled voice served from 127.0.0.1 under another name: progress shown, added, used, removed."""
    from app.main_window import MainWindow
    from engine import paths
    from engine.tts.voice import bundled_voice_paths
    from tests.local_http import serving

    monkeypatch.setenv(paths.ENV_DATA_DIR, str(tmp_path / "data"))
    onnx, config = bundled_voice_paths()
    window = MainWindow()
    qtbot.addWidget(window)
    dialog = window.show_models()
    assert dialog.table.rowCount() == 3  # the bundled voice and recognizers (tiny.en, base)
    assert [dialog.table.item(r, 0).text() for r in range(3)] == ["●", "●", ""]  # the voice and tiny.en in use
    dialog.table.selectRow(2)
    assert "base" in dialog.selected().name
    dialog.use_button.click()  # Whisper base for English shadowing
    assert window.settings_panel.model.text() == "base" and window.settings_panel.config(None, None).model == "base"
    assert [dialog.table.item(r, 0).text() for r in range(3)] == ["●", "", "●"]
    progress = []
    dialog._relay.progress.connect(lambda p: progress.append(dialog.progress_label.text()))
    with serving() as server:
        server.files["/en_US-test-medium.onnx"] = onnx
        server.files["/en_US-test-medium.onnx.json"] = config
        with qtbot.waitSignal(dialog._relay.finished, timeout=120_000):
            dialog.add_url(f"{server.url}/en_US-test-medium.onnx")
            assert dialog.busy() and not dialog.add_url_button.isEnabled()
    assert progress and " of " in progress[-1] and "MB/s" in progress[-1]
    assert dialog.table.rowCount() == 4 and "Added the voice en_US-test-medium" in dialog.message.text()
    added = dialog.selected()
    assert added is not None and added.name == "en_US-test-medium"
    dialog.use_button.click()
    assert window.settings_panel.voice.text() == str(added.path)
    assert window.settings_panel.config(None, None).voice == str(added.path)
    assert dialog.table.item(3, 0).text() == "●" and dialog.table.item(0, 0).text() == ""
    assert dialog.grab().save(str(artifacts_dir / "models_page.png"), "PNG")
    dialog.remove_button.click()
    assert "bundled voice is used now" in dialog.message.text()
    assert window.settings_panel.voice.text() == "" and not added.path.exists()
    assert dialog.table.rowCount() == 3


def test_the_models_page_cancels_a_download_and_says_it_can_resume(qtbot, tmp_path: Path, monkeypatch) -> None:
    from app.main_window import MainWindow
    from engine import paths
    from tests.local_http import serving

    monkeypatch.setenv(paths.ENV_DATA_DIR, str(tmp_path / "data"))
    window = MainWindow()
    qtbot.addWidget(window)
    dialog = window.show_models()
    with serving() as server:
        server.files["/big.zip"] = bytes(8 * 1024 * 1024)
        server.mode = "slow"
        dialog._relay.progress.connect(lambda p: dialog.cancel_button.click())
        with qtbot.waitSignal(dialog._relay.failed, timeout=60_000):
            dialog.add_url(f"{server.url}/big.zip")
    assert dialog.message.text().startswith("Cancelled") and "resumes" in dialog.message.text()
    assert not dialog.busy() and dialog.add_url_button.isEnabled() and dialog.table.rowCount() == 3
    assert (tmp_path / "data" / "models" / ".downloads" / "big.zip.part").exists()


def test_while_a_window_is_open_the_garbage_is_collected_in_the_gui_thread(qtbot) -> None:
    """``app.gui_gc``: the automatic collector is off while a window is open, the GUI thread's timer collects a
    cycle, and closing the last window turns the automatic collector on again."""
    import gc
    import weakref

    from app.gui_gc import MainThreadCollector

    class Node:
        pass

    first, second = MainThreadCollector(), MainThreadCollector()
    first.start()
    second.start()
    assert not gc.isenabled()
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle only the collector frees
    gone = weakref.ref(a)
    del a, b
    kept = [Node() for _ in range(gc.get_threshold()[0] + 10)]  # past the threshold: the automatic collector
    assert gone() is not None and kept  # would have run here, in this thread

    def collected() -> bool:
        """Allocating on, as a live program does: objects freed meanwhile (after earlier tests, many) bring the count
        back under the threshold, and a collection that is never due would be none of the timer's doing."""
        kept.extend(Node() for _ in range(100))
        return gone() is None

    qtbot.waitUntil(collected, timeout=5000)  # the timer collected it
    first.stop()
    assert not gc.isenabled()  # another window is still open
    second.stop()
    assert gc.isenabled()
