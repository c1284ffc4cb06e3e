"""The committed words on their way to the voice: each word's record, keyed (sentence, index) the way the voice
keys the words it speaks (``tts.keys``), until its piece plays and the record gets its play times."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from engine.asr.stream_values import CommittedWord
from engine.pipeline.pace import SpeakerTempo
from engine.pipeline.records import WordRecord
from engine.tts.keys import SentenceKeys, fed_tokens
from engine.tts.pieces import AudioPiece

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Committed:
    """One step's committed words: their records, and the tokens the voice is fed for them."""

    records: list[WordRecord]
    tokens: list[str]


class WordLedger:
    """Thread-safe: words are committed from the recognizer's thread and matched from the voice's (or playback's).

    ``tempo``: the speaker's pace against the voice's, from the words matched (``pipeline.pace``)."""

    def __init__(self, voice_rate: float = 1.0) -> None:
        self.voice_rate = voice_rate  # the configured rate: a word's length had the voice not been catching up
        self.tempo = SpeakerTempo()
        self._keys = SentenceKeys()
        self._records: dict[tuple[int, int], WordRecord] = {}  # committed, not yet spoken
        self._lock = threading.Lock()
        self._unmatched_warned = False

    def commit(self, words: Sequence[CommittedWord], origin_s: float) -> Committed:
        """Records for ``words`` (their source times moved by ``origin_s`` onto the session clock), kept until
        spoken, and the tokens to feed the voice."""
        records: list[WordRecord] = []
        tokens: list[str] = []
        for word in words:
            keyed = self._keys.tokens(word.text)
            for token, (sentence, index) in keyed:
                records.append(
                    WordRecord(
                        sentence,
                        index,
                        token,
                        word.start_s + origin_s,
                        word.end_s + origin_s,
                        word.commit_s,
                        heard_s=word.heard_s + origin_s,
                        forced=word.forced,
                    )
                )
            tokens.extend(fed_tokens(keyed, word.pause_after))
        with self._lock:
            for record in records:
                self._records[record.key] = record
        return Committed(records, tokens)

    def spoken(self, piece: AudioPiece, ready_s: float, start_s: float) -> list[WordRecord]:
        """The records of the words ``piece`` spoke, with their play times (``start_s``: the piece's first sample);
        a word never committed under its key is left out (logged once: its figures would be another word's)."""
        sample_rate = piece.sample_rate
        spoken: list[WordRecord] = []
        with self._lock:
            for word in piece.words:
                record = self._records.pop((word.sentence, word.index), None)
                if record is None:
                    if not self._unmatched_warned:
                        log.warning(
                            "spoken word %r (sentence %d, word %d) was never committed under that key",
                            word.text,
                            word.sentence,
                            word.index,
                        )
                        self._unmatched_warned = True
                    continue
                record.ready_s = ready_s
                record.speak_start_s = start_s + word.start_sample / sample_rate
                record.speak_end_s = start_s + word.end_sample / sample_rate
                spoken.append(record)
                # its length had the voice spoken at the configured rate, against the speaker's
                voice_s = (word.end_sample - word.start_sample) / sample_rate * word.rate / self.voice_rate
                self.tempo.add(word.text, record.source_end_s - record.source_start_s, voice_s)
        return spoken
