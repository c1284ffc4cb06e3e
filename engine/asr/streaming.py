"""The streaming recognizer: audio in as it arrives, tentative and committed words out, with bounded cost.

Each step hypothesizes the whole buffer (only if it holds speech), strips the words already committed, and lets
the commit policy decide which leading words of the rest become final. The buffer is cut at the end of a
committed sentence once it is longer than ``trim_s`` and never exceeds ``max_buffer_s``, so memory and per-step
cost stay flat on input of any length.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from engine.asr.backend import SAMPLE_RATE, AsrBackend
from engine.asr.commit import CommitPolicy
from engine.asr.vad import FRAME, SileroVad, SpeechGate
from engine.asr.words import Word, normalize_token

log = logging.getLogger(__name__)

OVERLAP_TOLERANCE_S = 0.1
MAX_OVERLAP_NGRAM = 5
SENTENCE_END = (".", "?", "!")
FORCE_COMMIT_FRACTION = 0.8  # of max_buffer_s: past this, held-back words are committed
FORCE_COMMIT_MARGIN_S = 2.0  # words ending this close to the buffer's end stay tentative
# Committed words kept: a prompt needs their last 200 characters, the trim those still in the (at most 25 s)
# buffer. Keeping every word of a session would grow without bound (a ``StreamRun`` keeps them all if asked).
KEEP_COMMITTED_WORDS = 400


@dataclass(frozen=True, slots=True)
class CommittedWord:
    text: str
    start_s: float  # source clock
    end_s: float
    commit_s: float  # when it was committed (clock of the caller)


@dataclass
class StepResult:
    committed: list[CommittedWord] = field(default_factory=list)
    tentative: list[Word] = field(default_factory=list)
    recognized: bool = False  # the recognizer ran (the buffer held speech)
    at_s: float | None = None  # when the step ended, on the driver's clock (set by the driver)


@dataclass(frozen=True)
class StreamConfig:
    trim_s: float = 12.0
    max_buffer_s: float = 25.0
    quiet_keep_s: float = 0.5  # audio kept before speech starts when a quiet buffer is dropped
    use_prompt: bool = False
    prompt_chars: int = 200


class StreamingRecognizer:
    def __init__(
        self,
        backend: AsrBackend,
        policy: CommitPolicy,
        vad: SileroVad | None = None,
        config: StreamConfig | None = None,
    ) -> None:
        self.backend = backend
        self.policy = policy
        self.vad = vad
        self.gate = SpeechGate()
        self.config = config or StreamConfig()
        self._buffer = np.zeros(0, np.float32)
        self._speech = np.zeros(0, bool)  # per VAD frame of the buffer
        self._offset_s = 0.0  # source time of the buffer's first sample
        self._committed: list[CommittedWord] = []
        self._last_committed_end = 0.0
        self._tail: list[Word] = []
        self.audio_in_s = 0.0
        # An incremental backend (vosk) is fed each block once and keeps its own hypothesis with source times;
        # the buffer then serves only the voice-activity gate and trimming.
        self._incremental = bool(getattr(backend, "incremental", False))

    # ----- audio
    def insert_audio(self, samples: np.ndarray) -> None:
        data = np.asarray(samples, np.float32).reshape(-1)
        self._buffer = np.concatenate([self._buffer, data])
        self.audio_in_s += data.size / SAMPLE_RATE
        if self._incremental:
            self.backend.accept(data)  # type: ignore[attr-defined]
        if self.vad is not None:
            flags = self.gate.decide(self.vad.probabilities(data))
            self._speech = np.concatenate([self._speech, flags])
        cap = int(self.config.max_buffer_s * SAMPLE_RATE)
        if self._buffer.size > cap:
            log.warning("recognizer buffer over %.0f s with nothing committed; dropping its oldest audio",
                        self.config.max_buffer_s)  # fmt: skip
            self._cut(self._buffer.size - cap)

    @property
    def buffer_s(self) -> float:
        return self._buffer.size / SAMPLE_RATE

    @property
    def committed(self) -> list[CommittedWord]:
        """The most recent committed words (up to ``KEEP_COMMITTED_WORDS``; a run keeps them all, ``StreamRun``)."""
        return list(self._committed)

    def _has_speech(self) -> bool:
        return self.vad is None or bool(self._speech.any())

    def _cut(self, samples: int) -> None:
        samples = min(max(samples, 0), self._buffer.size)
        self._buffer = self._buffer[samples:]
        self._speech = self._speech[samples // FRAME :] if self._speech.size else self._speech
        self._offset_s += samples / SAMPLE_RATE
        if self._incremental:
            self.backend.forget_before(self._offset_s)  # type: ignore[attr-defined]

    # ----- recognition
    def _prompt(self) -> str | None:
        if not self.config.use_prompt:
            return None
        text = " ".join(w.text for w in self._committed if w.end_s <= self._offset_s + 1e-6)
        return text[-self.config.prompt_chars :] or None

    def _new_words(self, hypothesis: list[Word]) -> list[Word]:
        """The hypothesis minus what is already committed: by time, then by word overlap at the seam."""
        words = [w for w in hypothesis if w.start_s > self._last_committed_end - OVERLAP_TOLERANCE_S]
        if words and self._committed:
            # Whisper may re-time committed words to later in the buffer (after a long pause, say): whatever
            # repeats the end of the committed text is not new, however it was timed.
            recent = [w.text for w in self._committed[-MAX_OVERLAP_NGRAM:]]
            for n in range(min(MAX_OVERLAP_NGRAM, len(recent), len(words)), 0, -1):
                if [normalize_token(t) for t in recent[-n:]] == [w.key for w in words[:n]]:
                    return words[n:]
        return words

    def _hypothesize(self) -> list[Word]:
        """The recognizer's words for the whole buffer, on the source clock."""
        if self._incremental:
            return [w for w in self.backend.hypothesis() if w.end_s > self._offset_s]  # type: ignore[attr-defined]
        return [
            Word(w.text, w.start_s + self._offset_s, w.end_s + self._offset_s)
            for w in self.backend.transcribe(self._buffer, self._prompt())
        ]

    def step(self, now_s: float) -> StepResult:
        """Recognize the buffer and commit what the policy allows; ``now_s`` stamps the commits."""
        result = StepResult()
        if not self._has_speech():
            self._drop_quiet()
            result.tentative = list(self._tail)
            return result
        result.recognized = True
        tail = self._new_words(self._hypothesize())
        n = self.policy.update(tail)
        if self.buffer_s > FORCE_COMMIT_FRACTION * self.config.max_buffer_s:
            # The policy is holding back too much audio (offline on a long passage, or hypotheses that never
            # agree): commit what ends well before the buffer's end rather than ever dropping audio.
            horizon = self._offset_s + self.buffer_s - FORCE_COMMIT_MARGIN_S
            forced = next((i for i, w in enumerate(tail) if w.end_s > horizon), len(tail))
            if forced > n:
                log.info("buffer at %.1f s: committing %d held-back word(s)", self.buffer_s, forced - n)
                n = forced
                self.policy.reset()
        result.committed = self._commit(tail[:n], now_s)
        self._tail = tail[n:]
        result.tentative = list(self._tail)
        self._trim()
        return result

    def finish(self, now_s: float) -> StepResult:
        """The input ended: recognize once more and commit everything that is left."""
        result = StepResult()
        if self._incremental:
            self.backend.flush()  # type: ignore[attr-defined]
        if self._has_speech() and self._buffer.size:
            result.recognized = True
            tail = self._new_words(self._hypothesize())
        else:
            tail = []
        n = self.policy.finish(tail)
        result.committed = self._commit(tail[:n], now_s)
        self._tail = []
        self._cut(self._buffer.size)
        return result

    def _commit(self, words: list[Word], now_s: float) -> list[CommittedWord]:
        committed = [CommittedWord(w.text, w.start_s, w.end_s, now_s) for w in words]
        self._committed.extend(committed)
        if len(self._committed) > 2 * KEEP_COMMITTED_WORDS:
            del self._committed[:-KEEP_COMMITTED_WORDS]
        if committed:
            self._last_committed_end = max(self._last_committed_end, committed[-1].end_s)
        return committed

    def _drop_quiet(self) -> None:
        """Nothing but silence or noise in the buffer: keep only its last moments (speech may be starting)."""
        keep = int(self.config.quiet_keep_s * SAMPLE_RATE)
        if self._buffer.size > 2 * keep and not self._tail:
            self._cut(self._buffer.size - keep)

    def _trim(self) -> None:
        if self.buffer_s <= self.config.trim_s:
            return
        in_buffer = [w for w in self._committed if w.end_s > self._offset_s]
        ends = [w.end_s for w in in_buffer if w.text.endswith(SENTENCE_END)]
        if not ends and self.buffer_s > self.config.trim_s * 1.5 and in_buffer:
            ends = [in_buffer[-1].end_s]  # no sentence end in sight: cut at the last committed word
        if ends:
            self._cut(int((ends[-1] - self._offset_s) * SAMPLE_RATE))
