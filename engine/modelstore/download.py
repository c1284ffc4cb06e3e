"""Download a model file the user asked for: progress, cancel, resume, checksum; a broken download replaces nothing.

The file grows as ``<target>.part`` beside its target. A download that stops (cancelled, the server stalls, the
connection drops, a truncated body) keeps the part file, and the next attempt asks the server for the rest (HTTP
Range); a server that ignores the range sends the whole file again, which then starts over. Only a complete file,
whose SHA-256 matches when a checksum is known, is renamed to the target, so a working model is never overwritten by
a partial one.
"""

from __future__ import annotations

import http.client
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.hashing import file_sha256

log = logging.getLogger(__name__)

CHUNK_BYTES = 256 * 1024
TIMEOUT_S = 30.0  # no byte for this long: the server has stalled
PROGRESS_EVERY_S = 0.2
USER_AGENT = "liveshadow-model-manager"
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


class DownloadError(RuntimeError):
    """The download did not complete; the message says what happened (and whether it can be resumed)."""


class DownloadCancelled(DownloadError):
    pass


@dataclass(frozen=True, slots=True)
class Progress:
    done_bytes: int
    total_bytes: int | None  # None when the server does not say
    bytes_per_s: float

    @property
    def remaining_s(self) -> float | None:
        if self.total_bytes is None or self.bytes_per_s <= 0:
            return None
        return max(0.0, (self.total_bytes - self.done_bytes) / self.bytes_per_s)

    @property
    def fraction(self) -> float | None:
        return None if not self.total_bytes else min(1.0, self.done_bytes / self.total_bytes)


def part_path(target: Path) -> Path:
    return target.with_name(target.name + ".part")


def download(
    url: str,
    target: Path,
    sha256: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    timeout_s: float = TIMEOUT_S,
) -> Path:
    """Fetch ``url`` into ``target`` (http, https or file URLs); returns ``target``. Raises DownloadError."""
    if not re.match(r"^(https?|file)://", url):
        raise DownloadError(f"not a download address: {url!r} (http://, https:// or file://)")
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(target)
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout_s)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the part file already holds everything (or more): start again
            part.unlink()
            return download(url, target, sha256, on_progress, cancel, timeout_s)
        raise DownloadError(f"the server answered {exc.code} {exc.reason} for {url}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from exc
    with response:
        status = getattr(response, "status", 200)
        total = _total_size(response, have if status == 206 else 0)
        if status == 206:
            log.info("resuming %s at %d bytes", url, have)
        elif have:
            log.info("the server sent all of %s again (no resume); starting over", url)
            have = 0
        _receive(response, part, have, total, on_progress, cancel, url)
    done = part.stat().st_size
    if total is not None and done != total:
        raise DownloadError(
            f"the download of {url} was cut short: {done} of {total} bytes; try again to fetch the rest"
        )
    if sha256 is not None:
        actual = file_sha256(part)
        if actual.lower() != sha256.lower():
            part.unlink()
            raise DownloadError(f"{url} is not the expected file: SHA-256 {actual}, expected {sha256.lower()}")
    os.replace(part, target)
    return target


def _total_size(response, offset: int) -> int | None:
    content_range = response.headers.get("Content-Range")
    if content_range:
        match = _CONTENT_RANGE.match(content_range)
        if match and match.group(3) != "*":
            return int(match.group(3))
    length = response.headers.get("Content-Length")
    return offset + int(length) if length and length.isdigit() else None


def _receive(response, part: Path, have: int, total: int | None, on_progress, cancel, url: str) -> None:
    started = last = time.monotonic()
    received = 0
    mode = "ab" if have else "wb"
    with part.open(mode) as out:
        while True:
            if cancel is not None and cancel.is_set():
                raise DownloadCancelled(f"cancelled; {have + received} bytes kept for a later resume")
            try:
                block = response.read(CHUNK_BYTES)
            except TimeoutError as exc:
                raise DownloadError(
                    f"the server stopped sending {url} after {have + received} bytes; try again to resume"
                ) from exc
            except (OSError, http.client.HTTPException) as exc:
                raise DownloadError(f"the connection broke after {have + received} bytes: {exc!r}") from exc
            if not block:
                break
            out.write(block)
            received += len(block)
            now = time.monotonic()
            if on_progress is not None and (now - last >= PROGRESS_EVERY_S or (total and have + received >= total)):
                last = now
                on_progress(Progress(have + received, total, received / max(now - started, 1e-6)))
    if on_progress is not None:
        elapsed = max(time.monotonic() - started, 1e-6)
        on_progress(Progress(have + received, total, received / elapsed))
