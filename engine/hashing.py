"""SHA-256 of a file, read in blocks (model files are hundreds of MB)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
