"""The figures of one shadowing session, gathered as it runs (METRICS.md names), and its report."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import numpy as np

from engine.asr.run import StreamRun
from engine.metrics import aggregate, machine_info
from engine.metrics import names as m
from engine.metrics.shadowing import chunk_delay_s, lag_drift_s
from engine.metrics.wer import corpus_wer
from engine.tts.pieces import AudioPiece
from engine.tts.timeline import GapCounts

if TYPE_CHECKING:
    from engine.pipeline.records import WordRecord

log = logging.getLogger(__name__)

# Report keys beside METRICS.md's ``underruns``: how many of them no compute could have avoided at that moment
# (``GapCounts.short_notice``) and how many held a word the hold bound committed (``GapCounts.forced``).
UNDERRUNS_SHORT_NOTICE = "underruns_short_notice"
UNDERRUNS_FORCED = "underruns_forced"
GAP_EPSILON_S = 0.01  # device play times jitter by a few ms; a shorter silence is not a gap
MAX_WORDS = 200_000  # per-word lists stop growing past this (about 20 hours of speech)


def underrun_causes(reports: list[dict]) -> dict[str, int]:
    """The underruns' causes summed over several session reports."""
    return {key: sum(r.get(key, 0) for r in reports) for key in (UNDERRUNS_SHORT_NOTICE, UNDERRUNS_FORCED)}


def underrun_causes_text(figures: dict) -> str:
    """For a line that has just given ``underruns``: what the breakdown says, or nothing when there were none."""
    if not figures.get(m.UNDERRUNS):
        return ""
    return (
        f" (of them {figures.get(UNDERRUNS_SHORT_NOTICE, 0)} with less notice than their piece's compute, "
        f"{figures.get(UNDERRUNS_FORCED, 0)} holding a word the hold bound committed)"
    )


class SessionFigures:
    """Thread-safe accumulator; ``report()`` turns it into one JSON-able dict."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.keep_words = True  # per-word records in the report (a soak keeps only the figures)
        self.config: dict = {}
        self.lags: list[float] = []
        self.source_ends: list[float] = []
        self.commit_latencies: list[float] = []
        self.first_audio: list[float] = []
        self.gen: list[float] = []
        self.audio: list[float] = []
        self.chunk_positions: list[int] = []  # each piece's chunk index in its sentence
        self.balances: list[float] = []
        self.chunks: list[tuple[float, float]] = []
        self.words: list[dict] = []
        self.commits: list[tuple[float, float | None]] = []  # per committed word: (commit_s, heard_s)
        self.non_english_words = 0
        self.committed_text: list[str] = []
        self.spoken_text: list[str] = []
        self.gaps = GapCounts()  # sentence starts count as pauses, not gaps (METRICS.md)
        self.hurried = 0  # pieces made without their lookahead because the voice was about to run out
        self.speculated = 0  # pieces made ahead from tentative words that then were committed
        self._previous_ready = 0.0
        self._previous_end: float | None = None
        self.asr_figures: dict = {}
        self.echo: dict | None = None  # ``EchoPath.report()`` when a guard ran (speakers)
        self.pace: dict = {}  # ``MachinePace.report()``: what the session measured of the machine and set from it
        self.error: str | None = None  # why the session stopped early (a device that went away); None if it did not
        self.faster_pieces = 0  # pieces the voice spoke faster than its rate to catch up with a fast speaker
        self.max_rate = 1.0
        self.tempos: list[float] = []  # the speaker's tempo against the voice's after each piece (``SpeakerTempo``)

    def committed(self, records: list[WordRecord]) -> None:
        with self._lock:
            for record in records:
                if len(self.commit_latencies) < MAX_WORDS:
                    self.commit_latencies.append(record.commit_s - record.source_end_s)
                    if self.keep_words:
                        self.committed_text.append(record.text)
                        self.commits.append((record.commit_s, record.heard_s))

    def piece(
        self, piece: AudioPiece, ready_s: float, inputs_at_s: float, first_of_sentence: bool, computed: bool = True
    ) -> None:
        """A piece is ready; ``computed``: playback is a computed timeline (live, ``live_balance`` says more)."""
        with self._lock:
            if first_of_sentence:
                self.first_audio.append(ready_s - inputs_at_s)
            self.gen.append(max(ready_s - max(self._previous_ready, inputs_at_s), 0.0))
            self.audio.append(piece.audio_s)
            self.chunk_positions.append(piece.chunk)
            self.hurried += piece.hurried
            self.speculated += piece.speculated
            self._previous_ready = ready_s
            if computed and self._previous_end is not None and len(self.balances) < MAX_WORDS:
                self.balances.append(self._previous_end - ready_s)

    def live_balance(self, buffered_s: float) -> None:
        """Live time balance: audio queued at the device when a piece is ready (replaces the computed one)."""
        with self._lock:
            if len(self.balances) < MAX_WORDS and self.gen:
                self.balances.append(buffered_s)

    def played(
        self,
        piece: AudioPiece,
        spoken: list[WordRecord],
        start_s: float,
        end_s: float,
        words_at_s: float,
        computed: bool,
        compute_s: float | None = None,
    ) -> None:
        """The piece played from ``start_s`` to ``end_s``; ``words_at_s``: when its own words were all committed;
        ``compute_s``: what the piece took to make, on the session's clock (for the underruns' causes)."""
        with self._lock:
            if self._previous_end is not None:
                gap = start_s - self._previous_end
                if gap > GAP_EPSILON_S:
                    forced = any(record.forced for record in spoken)
                    if self.gaps.add(
                        gap, self._previous_end, words_at_s, piece.chunk == 0, piece.phrase_start, compute_s, forced
                    ):
                        log.info(  # rare, and the first thing to read when a user says the voice stuttered
                            "underrun: %.3f s of silence at %.2f s before %r, its words in %.3f s earlier, its compute "
                            "%s%s",
                            gap,
                            self._previous_end,
                            " ".join(record.text for record in spoken),
                            self._previous_end - words_at_s,
                            "unknown" if compute_s is None else f"{compute_s:.3f} s",
                            ", a word the hold bound committed" if forced else "",
                        )
            if computed:
                self._previous_end = end_s
            else:
                self._previous_end = max(end_s, self._previous_end or end_s)
            for record in spoken:
                if len(self.lags) < MAX_WORDS and record.lag_s is not None:
                    self.lags.append(record.lag_s)
                    self.source_ends.append(record.source_end_s)
                    if not self.keep_words:
                        continue
                    self.spoken_text.append(record.text)
                    self.words.append(
                        {
                            "text": record.text,
                            "sentence": record.sentence,
                            "index": record.index,
                            "source_start_s": record.source_start_s,
                            "source_end_s": record.source_end_s,
                            "commit_s": record.commit_s,
                            "heard_s": record.heard_s,
                            "ready_s": record.ready_s,
                            "speak_start_s": record.speak_start_s,
                            "speak_end_s": record.speak_end_s,
                            m.EAR_VOICE_LAG_S: record.lag_s,
                        }
                    )
            if spoken:
                self.chunks.append((end_s, spoken[-1].source_end_s))

    def close(self, run: StreamRun | None, pace: dict, echo: dict | None, error: str | None) -> None:
        """The session ended: its recognizer run, what it measured of the machine, the echo path, its error."""
        if run is not None:
            self.asr(run)
        self.pace, self.echo, self.error = pace, echo, error

    def asr(self, run: StreamRun) -> None:
        with self._lock:
            self.asr_figures = {
                m.RTF_ASR: run.compute_s / run.audio_s if run.audio_s > 0 else None,
                m.BEHIND_S: run.behind_s,
                "audio_s_heard": run.audio_s,
                "forced_words": run.forced_words,
                "unspoken_words": run.unspoken_words,
                "failed_decodes": run.failed_decodes,
                "pause_words": run.pause_words,
                "dropped_audio_s": run.dropped_audio_s,
                "unrecognized_audio_s": run.unrecognized_audio_s,
            }

    def non_english(self, words: int) -> None:
        """Interpreting: committed words the English voice did not speak (not English)."""
        with self._lock:
            self.non_english_words += words

    def rate(self, factor: float, tempo: float | None = None) -> None:
        """The voice's catch-up factor after a piece played (1: its own rate), and the speaker's tempo then."""
        with self._lock:
            self.faster_pieces += factor > 1.0
            self.max_rate = max(self.max_rate, factor)
            if tempo is not None and len(self.tempos) < MAX_WORDS:
                self.tempos.append(tempo)

    def underruns(self) -> int:
        return self.gaps.underruns

    def lag_median(self) -> float | None:
        with self._lock:
            return float(np.median(self.lags)) if self.lags else None

    def report(self) -> dict:
        with self._lock:
            ratios = [g / a for g, a in zip(self.gen, self.audio, strict=True) if a > 0]
            return {
                "command": "shadow",
                "error": self.error,
                "machine": machine_info(),
                "config": self.config,
                m.EAR_VOICE_LAG_S: aggregate(self.lags),
                m.CHUNK_DELAY_S: chunk_delay_s(self.chunks),
                m.LAG_DRIFT_S: lag_drift_s(self.source_ends, self.lags),
                m.COMMIT_LATENCY_S: aggregate(self.commit_latencies),
                m.FIRST_AUDIO_S: aggregate(self.first_audio),
                m.COMPUTE_RATIO: aggregate(ratios),
                m.TIME_BALANCE: aggregate(self.balances),
                m.UNDERRUNS: self.gaps.underruns,
                m.GAP_S: self.gaps.gap_s,
                UNDERRUNS_SHORT_NOTICE: self.gaps.short_notice,
                UNDERRUNS_FORCED: self.gaps.forced,
                m.STARVED_S: self.gaps.starved_s,
                "sentence_pause_s": self.gaps.pause_s,
                "phrase_pause_s": self.gaps.phrase_pause_s,  # included in starved_s
                "hurried_pieces": self.hurried,
                "speculated_pieces": self.speculated,
                **self.asr_figures,
                "pace": dict(self.pace),
                "echo": self.echo,
                "catch_up": {
                    "faster_pieces": self.faster_pieces,
                    "max_rate": self.max_rate,
                    "speaker_tempo": float(np.median(self.tempos)) if self.tempos else None,
                },
                "source_times": "recognizer word timestamps (source clock)",
                "committed_text": " ".join(self.committed_text),
                "spoken_text": " ".join(self.spoken_text),
                "first_audio_values_s": list(self.first_audio),
                "time_balance_values_s": list(self.balances),
                "pieces": {m.GEN_S: list(self.gen), m.AUDIO_S: list(self.audio), "chunk": list(self.chunk_positions)},
                "words": list(self.words),
                "commits": [{"commit_s": c, "heard_s": h} for c, h in self.commits],
                "non_english_words": self.non_english_words,
            }


def aggregate_reports(reports: list[dict], entries: list[dict], offline_texts: dict[str, str] | None = None) -> dict:
    """Corpus figures of one configuration from its per-recording shadow reports (``wer_offline`` when given)."""
    refs = [e["text"] for e in entries]
    pieces = [(g, a, c) for r in reports for g, a, c in zip(*r["pieces"].values(), strict=True)]
    return {
        m.FIRST_AUDIO_S: aggregate([x for r in reports for x in r["first_audio_values_s"]]),
        m.COMPUTE_RATIO: aggregate([g / a for g, a, _ in pieces if a > 0]),
        m.TIME_BALANCE: aggregate([x for r in reports for x in r["time_balance_values_s"]]),
        m.UNDERRUNS: sum(r[m.UNDERRUNS] for r in reports),
        m.GAP_S: sum(r[m.GAP_S] for r in reports),
        **underrun_causes(reports),
        m.STARVED_S: sum(r[m.STARVED_S] for r in reports),
        "phrase_pause_s": sum(r.get("phrase_pause_s", 0.0) for r in reports),
        "hurried_pieces": sum(r.get("hurried_pieces", 0) for r in reports),
        "speculated_pieces": sum(r.get("speculated_pieces", 0) for r in reports),
        m.COMMIT_LATENCY_S: aggregate([x for r in reports for x in r["commit_latency_values_s"]]),
        m.WER_COMMITTED: corpus_wer(refs, [r["committed_text"] for r in reports]),
        m.WER_OFFLINE: (corpus_wer(refs, [offline_texts[e["id"]] for e in entries]) if offline_texts else None),
        m.WER_TRANSCRIPT: (
            corpus_wer(refs, [r["transcript_text"] for r in reports])
            if reports and all("transcript_text" in r for r in reports)
            else None
        ),
        m.EAR_VOICE_LAG_S: aggregate([x for r in reports for x in r["ear_voice_lag_values_s"]]),
        m.CHUNK_DELAY_S: aggregate([r[m.CHUNK_DELAY_S] for r in reports if r[m.CHUNK_DELAY_S] is not None]),
        m.LAG_DRIFT_S: {e["id"]: r[m.LAG_DRIFT_S] for e, r in zip(entries, reports, strict=True)},
        m.WER_SPOKEN: corpus_wer(refs, [r.get("spoken_recognized_text") or "" for r in reports]),
        m.WORD_DISTANCE_DB: aggregate([x for r in reports for x in r.get("word_distance_values_db", [])]),
    }
