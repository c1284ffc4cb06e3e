"""The voices and recognizer models liveshadow can use: the bundled ones and those the user added.

Added models live in ``<data dir>/models/voices/<name>/`` (a Piper ``.onnx`` and its ``.onnx.json``) and
``<data dir>/models/recognizers/<name>/`` (a Vosk model folder), each with an ``info.json`` saying where it came
from. A model is added into a temporary folder beside its place, checked (a voice is loaded by onnxruntime, a Vosk
folder must hold ``am/final.mdl``), and only then moved into place: an addition that fails leaves every installed
model as it was.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from engine import paths
from engine.modelstore.archive import ArchiveError, extract_zip
from engine.modelstore.download import DownloadError, Progress, download

log = logging.getLogger(__name__)

VOICE, RECOGNIZER = "voice", "recognizer"
INFO_FILE = "info.json"
UNKNOWN_LICENCE = "not stated (see the model's source)"


class ModelError(RuntimeError):
    """A model cannot be added or removed; the message says why."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    kind: str  # VOICE or RECOGNIZER
    name: str
    engine: str  # "piper", "whisper" or "vosk"
    path: Path  # a voice's .onnx, a recognizer's folder
    size_bytes: int
    licence: str
    bundled: bool
    source: str = ""  # where an added model came from (a path or an address)
    use_as: str | None = None  # a bundled model that is not the default: what the settings name it by ("base")

    @property
    def setting(self) -> str | None:
        """What the session settings hold to use this model (None: the bundled default)."""
        if self.use_as is not None:
            return self.use_as
        return None if self.bundled else str(self.path)


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _safe_name(text: str) -> str:
    name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text).strip("-.")
    if not name:
        raise ModelError(f"cannot make a folder name of {text!r}")
    return name[:80]


def bundled_models() -> list[ModelInfo]:
    """The models in the installation itself (from their own packages); one that cannot be found is left out."""
    found = []
    try:
        from engine.tts.voice import bundled_voice_paths

        onnx, _ = bundled_voice_paths()
        found.append(
            ModelInfo(
                VOICE,
                "en_US-joe-medium (bundled)",
                "piper",
                onnx,
                _size(onnx.parent),
                "MIT (voice); CC0 (its dataset)",
                True,
            )
        )
    except Exception as exc:
        log.warning("the bundled voice is missing: %s", exc)
    try:
        from engine.asr.whisper_backend import bundled_model_path

        folder = bundled_model_path()
        found.append(ModelInfo(RECOGNIZER, "Whisper tiny.en (bundled)", "whisper", folder, _size(folder), "MIT", True))
    except Exception as exc:
        log.warning("the bundled recognizer is missing: %s", exc)
    try:
        from engine.asr import whisper_base_model
        from engine.pipeline.config import BASE_MODEL

        folder = whisper_base_model.available_folder()  # joined into the user cache when first used, not here
        if whisper_base_model.installed_dir() is None:
            size = sum(_size(p.parent) for p in whisper_base_model.part_files())
        else:
            size = _size(folder)
        found.append(
            ModelInfo(
                RECOGNIZER,
                "Whisper base (bundled; more accurate, slower; interprets)",
                "whisper",
                folder,
                size,
                "MIT",
                True,
                use_as=BASE_MODEL,
            )
        )
    except Exception as exc:
        log.info("Whisper base is not installed: %s", exc)
    return found


def check_voice(onnx: Path, config: Path) -> None:
    """Raise ModelError unless ``onnx`` and ``config`` are a Piper voice onnxruntime can load."""
    from engine.tts.voice import VoiceConfig
    from engine.tts.voice_split import VoiceSplitError

    try:
        VoiceConfig.load(config)
    except VoiceSplitError as exc:
        raise ModelError(str(exc)) from exc
    import onnxruntime as ort

    try:
        ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types for a truncated or foreign file
        raise ModelError(f"{onnx.name} is not a voice onnxruntime can load: {exc}") from exc


def find_vosk_folder(root: Path) -> Path:
    """The Vosk model folder at or just under ``root`` (archives usually hold one top folder)."""
    from engine.asr.vosk_backend import looks_like_vosk_model

    candidates = [root, *(p for p in sorted(root.iterdir()) if p.is_dir())] if root.is_dir() else []
    for candidate in candidates:
        if looks_like_vosk_model(candidate):
            return candidate
    raise ModelError(f"no Vosk model in {root.name} (a Vosk model folder holds am/final.mdl)")


class ModelStore:
    """Lists, adds and removes models; the ``add_*`` methods block (the app runs them in a worker thread)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.data_dir() / "models"
        self._lock = threading.Lock()

    def _folder(self, kind: str) -> Path:
        return self.root / ("voices" if kind == VOICE else "recognizers")

    # ----- listing
    def installed(self) -> list[ModelInfo]:
        """Bundled models first, then the added ones by name."""
        added = []
        for kind in (VOICE, RECOGNIZER):
            folder = self._folder(kind)
            if not folder.is_dir():
                continue
            for entry in sorted(folder.iterdir()):
                if entry.is_dir() and not entry.name.startswith("."):
                    info = self._read(kind, entry)
                    if info is not None:
                        added.append(info)
        return bundled_models() + added

    def _read(self, kind: str, folder: Path) -> ModelInfo | None:
        try:
            meta = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = {}
        if kind == VOICE:
            onnx = next(iter(sorted(folder.glob("*.onnx"))), None)
            if onnx is None:
                log.warning("%s holds no voice; left out", folder)
                return None
            path, engine = onnx, "piper"
        else:
            path, engine = folder, "vosk"
        return ModelInfo(
            kind,
            folder.name,
            engine,
            path,
            _size(folder),
            str(meta.get("licence") or UNKNOWN_LICENCE),
            False,
            str(meta.get("source", "")),
        )

    # ----- adding
    def add_voice(
        self, onnx: Path | str, config: Path | str | None = None, source: str | None = None, licence: str | None = None
    ) -> ModelInfo:
        """Add a Piper voice from a local ``.onnx`` (its ``.onnx.json`` beside it unless given)."""
        onnx = Path(onnx)
        config = Path(config) if config is not None else onnx.with_name(onnx.name + ".json")
        for path in (onnx, config):
            if not path.is_file():
                raise ModelError(f"file not found: {path}")
        if onnx.suffix != ".onnx":
            raise ModelError(f"{onnx.name} is not a Piper voice (.onnx with its .onnx.json)")
        check_voice(onnx, config)
        name = _safe_name(onnx.stem)

        def fill(staging: Path) -> None:
            shutil.copy2(onnx, staging / onnx.name)
            shutil.copy2(config, staging / (onnx.name + ".json"))

        return self._install(VOICE, name, fill, source or str(onnx), licence)

    def add_vosk(self, path: Path | str, source: str | None = None, licence: str | None = None) -> ModelInfo:
        """Add a Vosk model from a local folder or zip archive."""
        path = Path(path)
        if not path.exists():
            raise ModelError(f"not found: {path}")
        if path.is_file():
            if path.suffix.lower() != ".zip":
                raise ModelError(f"{path.name}: a Vosk model comes as a folder or a .zip archive")
            name = _safe_name(path.stem)

            def fill(staging: Path) -> None:
                unpacked = staging / ".unpacked"
                try:
                    extract_zip(path, unpacked)
                except ArchiveError as exc:
                    raise ModelError(str(exc)) from exc
                for item in find_vosk_folder(unpacked).iterdir():
                    shutil.move(str(item), staging / item.name)
                shutil.rmtree(unpacked)
        else:
            model = find_vosk_folder(path)
            name = _safe_name(model.name)

            def fill(staging: Path) -> None:
                shutil.copytree(model, staging, dirs_exist_ok=True)

        return self._install(RECOGNIZER, name, fill, source or str(path), licence)

    def add_from_url(
        self,
        url: str,
        sha256: str | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
        licence: str | None = None,
    ) -> ModelInfo:
        """Download a Piper voice (an ``.onnx`` address; its ``.onnx.json`` is fetched from the same address + .json)
        or a Vosk model (a ``.zip`` address) and add it. ``sha256`` checks the main file."""
        filename = unquote(Path(urlparse(url).path).name)
        downloads = self.root / ".downloads"
        if filename.endswith(".onnx"):
            onnx = download(url, downloads / filename, sha256, on_progress, cancel)
            config = download(url + ".json", downloads / (filename + ".json"), None, None, cancel)
            info = self.add_voice(onnx, config, source=url, licence=licence)
            for done in (onnx, config):
                done.unlink(missing_ok=True)
            return info
        if filename.lower().endswith(".zip"):
            archive = download(url, downloads / filename, sha256, on_progress, cancel)
            info = self.add_vosk(archive, source=url, licence=licence)
            archive.unlink(missing_ok=True)
            return info
        raise ModelError(f"{url}: give the address of a Piper voice (.onnx) or of a Vosk model archive (.zip)")

    def _install(
        self, kind: str, name: str, fill: Callable[[Path], None], source: str, licence: str | None
    ) -> ModelInfo:
        folder = self._folder(kind)
        folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            target = folder / name
            if target.exists():
                raise ModelError(f"a {kind} named {name} is already installed; remove it first")
            staging = Path(tempfile.mkdtemp(prefix=f".adding-{name}-", dir=folder))
            try:
                fill(staging)
                if kind == RECOGNIZER:
                    find_vosk_folder(staging)  # what was copied is a model
                meta = {"source": source, "licence": licence or UNKNOWN_LICENCE, "added": time.strftime("%Y-%m-%d")}
                (staging / INFO_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")
                staging.rename(target)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        info = self._read(kind, target)
        assert info is not None
        log.info("added the %s %s from %s", kind, name, source)
        return info

    # ----- removing
    def remove(self, info: ModelInfo) -> None:
        """Delete an added model (bundled ones cannot be removed)."""
        if info.bundled:
            raise ModelError(f"{info.name} comes with liveshadow and cannot be removed")
        folder = info.path if info.kind == RECOGNIZER else info.path.parent
        if folder.parent != self._folder(info.kind):
            raise ModelError(f"{folder} is not in the model folder {self._folder(info.kind)}")
        with self._lock:
            trash = folder.with_name(f".removing-{folder.name}")
            folder.rename(trash)  # gone from the list at once, even if deleting takes a while
            shutil.rmtree(trash, ignore_errors=True)
        log.info("removed the %s %s", info.kind, info.name)


__all__ = ["DownloadError", "ModelError", "ModelInfo", "ModelStore", "Progress", "bundled_models"]
