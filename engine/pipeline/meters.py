"""What the live meters show of the words, kept as the stages report them (from their own threads)."""

from __future__ import annotations

import threading
from dataclasses import asdict

from engine.pipeline.records import MeterSnapshot, WordRecord


class LiveMeters:
    """Thread-safe; ``snapshot()`` is a copy (the session adds the state, the clock, the pace and the balance)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot = MeterSnapshot()

    def committed(self, records: list[WordRecord]) -> None:
        last = records[-1]
        with self._lock:
            self._snapshot.commit_latency_s = last.commit_s - last.source_end_s
            self._snapshot.words_committed += len(records)

    def language(self, language: str | None) -> None:
        """Interpreting: the language the recognizer hears."""
        with self._lock:
            self._snapshot.spoken_language = language

    def non_english(self, count: int) -> None:
        with self._lock:
            self._snapshot.non_english_words += count

    def first_audio(self, seconds: float) -> None:
        """A sentence's first piece was ready this long after its words arrived."""
        with self._lock:
            self._snapshot.first_audio_s = seconds

    def spoken(self, records: list[WordRecord], lag_median_s: float | None) -> None:
        with self._lock:
            self._snapshot.lag_s = records[-1].lag_s
            self._snapshot.lag_median_s = lag_median_s
            self._snapshot.words_spoken += len(records)

    def snapshot(self) -> MeterSnapshot:
        with self._lock:
            return MeterSnapshot(**asdict(self._snapshot))
