"""Hashes: SHA-256 of a file, read in blocks (model files are hundreds of MB); which fifth a recording id falls in."""

from __future__ import annotations

import hashlib
from pathlib import Path

FIFTHS = 5


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def id_fifth(key: str) -> int:
    """0-4, fixed by ``key`` alone (a recording's id): recordings are held back by it, not by anyone's choice."""
    digest = hashlib.blake2b(key.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % FIFTHS
