"""A local HTTP server on 127.0.0.1 for the model manager's tests: it serves files and misbehaves on request."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class LocalServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files: dict[str, bytes | Path] = {}
        self.mode = "normal"  # "stall", "truncate", "ignore-range", "slow"
        self.ranges: list[str | None] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: LocalServer

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        source = self.server.files.get(self.path)
        if source is None:
            self.send_error(404)
            return
        body = source.read_bytes() if isinstance(source, Path) else source
        asked = self.headers.get("Range")
        self.server.ranges.append(asked)
        start = int(asked.split("=")[1].split("-")[0]) if asked and self.server.mode != "ignore-range" else 0
        if start >= len(body) and start:
            self.send_error(416)
            return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        rest = body[start:]
        if self.server.mode in ("stall", "truncate"):
            self.wfile.write(rest[: len(rest) // 2])
            self.wfile.flush()
            if self.server.mode == "stall":
                time.sleep(3)  # longer than the client's timeout
            return  # "truncate": the connection closes with half the body sent
        if self.server.mode == "slow":  # 64 kB every 50 ms: long enough to watch and to cancel
            for offset in range(0, len(rest), 65536):
                self.wfile.write(rest[offset : offset + 65536])
                time.sleep(0.05)
            return
        self.wfile.write(rest)


@contextmanager
def serving() -> Iterator[LocalServer]:
    """A server answering on a free port until the block ends."""
    httpd = LocalServer()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
