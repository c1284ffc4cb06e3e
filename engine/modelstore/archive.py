"""Unpack a model archive without letting it write outside its folder."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

MAX_UNPACKED_BYTES = 8 * 1024**3  # a zip bomb stops here; the largest Vosk models are ~2 GB unpacked


class ArchiveError(RuntimeError):
    pass


def _check_member(member: zipfile.ZipInfo) -> None:
    name = PurePosixPath(member.filename.replace("\\", "/"))
    if name.is_absolute() or ".." in name.parts or (name.parts and name.parts[0].endswith(":")):
        raise ArchiveError(f"the archive holds a path outside its folder ({member.filename}); not unpacked")
    if stat.S_ISLNK(member.external_attr >> 16):
        raise ArchiveError(f"the archive holds a symbolic link ({member.filename}); not unpacked")


def extract_zip(archive: Path, into: Path) -> Path:
    """Unpack ``archive`` into the new folder ``into``; every member is checked before anything is written."""
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = bundle.infolist()
            for member in members:
                _check_member(member)
            if sum(m.file_size for m in members) > MAX_UNPACKED_BYTES:
                raise ArchiveError(f"{archive.name} unpacks to more than {MAX_UNPACKED_BYTES // 1024**3} GB")
            into.mkdir(parents=True)
            bundle.extractall(into)
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"{archive.name} is not a valid zip archive (truncated or corrupt): {exc}") from exc
    return into
