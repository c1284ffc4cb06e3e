"""The streaming recognizer: audio in as it arrives, tentative and committed words out, with bounded cost.

Each step hypothesizes the whole buffer (only if it holds speech), strips the words already committed, and lets
the commit policy decide which leading words of the rest become final. Whatever the punctuation:

- a word is never held longer than ``max_hold_s`` after it was said: hypotheses that keep changing earlier in a
  long buffer (fast speech the recognizer does not punctuate) would otherwise let local agreement hold every word
  until the buffer cap forced them out. With ``force_previous`` (interpreting) such words are committed as the
  hypothesis before this one had them, where it had any: those are the tentative words a voice has made ahead;
- once the buffer is longer than ``trim_s`` it is cut at the last committed sentence end, else at a pause in the
  speech after a committed word, else after the last committed word; ``max_buffer_s`` is a backstop (audio past it
  is dropped, logged and counted in ``dropped_audio_s``);
- with ``endpoint_s`` (interpreting), a pause in the speech ends an utterance: the words still held are committed
  as the hypothesis has them and the buffer is cut at the pause, so the silence after it is never decoded;
- words that nobody said are not committed: words aligned where the voice-activity detector heard no speech, and
  the phrases Whisper writes over silence ("Thank you.") unless they were clearly spoken (``speech_filter``).

Each committed word says whether the speaker paused after it (``pause_after``), so the voice can treat the pause as a
phrase boundary where the recognizer wrote no comma.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from engine.asr.backend import SAMPLE_RATE, AsrBackend, StepDecode
from engine.asr.commit import CommitPolicy, common_prefix_length
from engine.asr.overlap import OVERLAP_TOLERANCE_S, new_words, repeated
from engine.asr.speech_filter import (
    SpeechFrames,
    SpeechLevel,
    drop_unspoken,
    without_quiet_tail,
    without_unaligned_runs,
)
from engine.asr.stream_values import CommittedWord, StepResult, StreamConfig
from engine.asr.vad import FRAME, SileroVad, SpeechGate
from engine.asr.words import Word, normalize_token

log = logging.getLogger(__name__)

SENTENCE_END = (".", "?", "!")
ELLIPSIS = ("...", "…")  # Whisper's mark of a sentence it heard cut off at the buffer's end: not a sentence end
# The offline policy commits at the end of an utterance; it is still never allowed to fill the buffer: past this
# fraction of ``max_buffer_s`` it commits what ends ``OFFLINE_MARGIN_S`` before the buffer's end.
OFFLINE_FORCE_FRACTION = 0.8
OFFLINE_MARGIN_S = 2.0
PAUSE_S = 0.3  # a silence this long between two words is a pause (a phrase boundary for the voice)
# Quiet this long at the end of the audio, with nothing tentative, ends the phrase of the last committed word
# (``StepResult.paused``). Longer than ``PAUSE_S``: a sentence's first words spoken at a hesitation would restart a
# voice that runs dry again as soon as the speaker goes on.
PHRASE_END_QUIET_S = 2 * PAUSE_S
TRIM_MARGIN_S = 0.05  # a cut after a committed word leaves this much of the silence after it in the buffer
MIN_CUT_S = 0.5  # a trim that would cut less than this looks for a later place
# At a pause the hypothesis must reach this close to the end of the speech before the buffer is cut there: a decoder
# that stopped early on the buffer (it does, after a repetition) would otherwise lose the speech it did not reach.
ENDPOINT_REACH_S = 1.0
# At the end of the input the last decode hears the speech and this much after it, not a long trailing silence:
# Whisper fills silence with words nobody said ("Thank you.", a stray "So."), and translating it does so more.
FINISH_TAIL_S = 0.3
# Committed words kept: a prompt needs their last 200 characters, the trim those still in the (at most 25 s)
# buffer. Keeping every word of a session would grow without bound (a ``StreamRun`` keeps them all if asked).
KEEP_COMMITTED_WORDS = 400


def _may_grow(text: str) -> bool:
    """A last word that the next decode may make longer: a number ("20" of "2021", "627" of "627,000"), a word
    Whisper marked as cut off ("pleasant...", "well-")."""
    return _is_number(text) or text.endswith(ELLIPSIS) or text.endswith("-")


def _is_number(text: str) -> bool:
    return normalize_token(text).isdigit()


def _ends_sentence(text: str) -> bool:
    """A word that ends a sentence: a full stop, question or exclamation mark, not an ellipsis."""
    return text.endswith(SENTENCE_END) and not text.endswith(ELLIPSIS)


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
        self._level = SpeechLevel()  # the speech's level over the last seconds heard (``without_quiet_tail``)
        self._speech = np.zeros(0, bool)  # per VAD frame, the first starting at sample ``_speech_start``
        self._speech_start = 0  # source sample of the first frame's start (frames never straddle a cut)
        self._start = 0  # source sample of the buffer's first sample
        self._offset_s = 0.0  # the same in seconds
        self._committed: list[CommittedWord] = []
        self._last_committed_end = 0.0
        self._tail: list[Word] = []
        self.trim_s = self.config.trim_s  # a session may shorten it on a slow machine (``pipeline.pace``)
        self.start_beam_size = self.config.start_beam_size  # ... and decode with one beam (``pipeline.pace``)
        self.audio_in_s = 0.0
        self.dropped_audio_s = 0.0  # audio cut by the ``max_buffer_s`` backstop (never in a healthy session)
        self.unrecognized_audio_s = 0.0  # audio cut past ``trim_s`` because no word came from it
        self.forced_words = 0
        self.unspoken_words = 0
        self.failed_decodes = 0  # steps whose decode (or part of it) was too unsure to use
        self._failed = False  # the last decode was too unsure to use
        self.pause_words = 0  # words committed at a pause before the policy agreed on them
        # An incremental backend (vosk) is fed each block once and keeps its own hypothesis with source times;
        # the buffer then serves only the voice-activity gate and trimming.
        self._incremental = bool(getattr(backend, "incremental", False))
        # the audio the last decode heard and where it starts on the source clock (a second pass decodes it again)
        self.last_heard: tuple[np.ndarray, float] | None = None

    # ----- audio
    def set_pace(self, trim_s: float | None, start_beam: bool) -> None:
        """What the machine's pace allows (``pipeline.pace``): the buffer cut at ``trim_s`` (None: as configured),
        and a buffer's first seconds decoded with the configured beams or with one."""
        self.trim_s = trim_s or self.config.trim_s
        self.start_beam_size = self.config.start_beam_size if start_beam else 0

    def insert_audio(self, samples: np.ndarray) -> None:
        data = np.asarray(samples, np.float32).reshape(-1)
        self._buffer = np.concatenate([self._buffer, data])
        self._level.add(data)
        self.audio_in_s += data.size / SAMPLE_RATE
        if self._incremental:
            self.backend.accept(data)  # type: ignore[attr-defined]
        if self.vad is not None:
            flags = self.gate.decide(self.vad.probabilities(data))
            self._speech = np.concatenate([self._speech, flags])
        cap = int(self.config.max_buffer_s * SAMPLE_RATE)
        if self._buffer.size > cap:
            dropped = (self._buffer.size - cap) / SAMPLE_RATE
            self.dropped_audio_s += dropped
            log.warning(
                "recognizer buffer over %.0f s with nothing committed; dropping its oldest %.2f s of audio "
                "(%.1f s in this session)",
                self.config.max_buffer_s,
                dropped,
                self.dropped_audio_s,
            )
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
        self._start += samples
        self._offset_s = self._start / SAMPLE_RATE
        frames = min((self._start - self._speech_start) // FRAME, self._speech.size)  # whole frames now before it
        self._speech = self._speech[frames:]
        self._speech_start += frames * FRAME
        if self._incremental:
            self.backend.forget_before(self._offset_s)  # type: ignore[attr-defined]

    # ----- recognition
    def _prompt(self) -> str | None:
        if not self.config.use_prompt:
            return None
        text = " ".join(w.text for w in self._committed if w.end_s <= self._offset_s + 1e-6)
        return text[-self.config.prompt_chars :] or None

    def _new_words(self, hypothesis: list[Word]) -> list[Word]:
        """The hypothesis minus what is already committed (``overlap.new_words``)."""
        return new_words(self._committed, hypothesis, self._offset_s, self._last_committed_end)

    def _frames(self) -> SpeechFrames | None:
        """The voice-activity flags of the buffer on the source clock (None without a detector)."""
        return SpeechFrames(self._speech, self._speech_start / SAMPLE_RATE) if self.vad is not None else None

    def _decode(self, end: int | None, window_s: float = 0.0) -> StepDecode:
        """How this step's buffer (up to sample ``end``) is decoded: ``StreamConfig.min_window_s``, and
        ``start_beam_size`` beams and ``start_window_s`` while it is no longer than ``start_s``."""
        heard_s = (self._buffer.size if end is None else end) / SAMPLE_RATE
        if heard_s > self.config.start_s:
            return StepDecode(None, max(self.config.min_window_s, window_s))
        window_s = max(self.config.min_window_s, self.config.start_window_s, window_s)
        return StepDecode(self.start_beam_size or None, window_s)

    def _hypothesize(self, end: int | None = None, window_s: float = 0.0) -> tuple[list[Word], int]:
        """The recognizer's words for the buffer (up to sample ``end`` of it), on the source clock, less those
        nobody said (and how many)."""
        self._failed = False
        if self._incremental:
            words = [w for w in self.backend.hypothesis() if w.end_s > self._offset_s]  # type: ignore[attr-defined]
        else:
            self.last_heard = (self._buffer[:end], self._offset_s)
            words = [
                Word(w.text, w.start_s + self._offset_s, w.end_s + self._offset_s)
                for w in self.backend.transcribe(self._buffer[:end], self._prompt(), self._decode(end, window_s))
            ]
            # Whisper left out a decode too unsure to use (``FAILED_DECODE_LOGPROB``): a later step hears its words
            self._failed = bool(getattr(self.backend, "failed", False))
            self.failed_decodes += self._failed
        frames = self._frames()
        if frames is None:
            return words, 0
        if getattr(self.backend, "task", "transcribe") == "translate":
            kept = drop_unspoken(without_unaligned_runs(words), frames)
        else:
            kept = drop_unspoken(words, frames, self._offset_s)
            kept = without_quiet_tail(kept, self._buffer[:end], self._offset_s, self._level.db())
        if len(kept) < len(words) and log.isEnabledFor(logging.DEBUG):
            log.debug(
                "dropped %d word(s) nobody said: %s",
                len(words) - len(kept),
                " ".join(w.text for w in words if w not in kept),
            )
        return kept, len(words) - len(kept)

    def step(self, now_s: float) -> StepResult:
        """Recognize the buffer and commit what the policy allows; ``now_s`` stamps the commits."""
        result = self._step(now_s)
        result.buffer_start_s = self._offset_s
        return result

    def _step(self, now_s: float) -> StepResult:
        result = StepResult()
        self.last_heard = None
        if not self._has_speech():
            self._drop_quiet()
            result.tentative = list(self._tail)
            result.paused = self._paused()
            return result
        result.recognized = True
        endpoint = self._endpoint()
        hypothesis, result.unspoken = self._hypothesize(endpoint)
        self.unspoken_words += result.unspoken
        result.failed_decode = self._failed
        if self._failed and not hypothesis:
            # Nothing usable was heard: the step is as if it had not run. The policy keeps comparing with the last
            # usable hypothesis, whose words stay tentative (an empty one would reset local agreement, and the trim
            # would take it for a decoder that gave up).
            result.tentative = list(self._tail)
            result.paused = self._paused()
            self._trim()
            return result
        tail = self._new_words(hypothesis)
        n = self.policy.update(tail, heard_s=self.audio_in_s, limit=self._commit_limit(tail))
        if endpoint is not None and not self._reaches(tail, endpoint):
            log.debug("the speaker paused, but the hypothesis stops before the speech does: no endpoint")
            endpoint = None
        if endpoint is not None and n < len(tail):
            # The speaker paused: nothing said later can change these words, so waiting for the policy to agree
            # on them only delays them (a translation's hypotheses reorder the last words from step to step).
            log.debug("the speaker paused: committing the %d word(s) still held", len(tail) - n)
            self.policy.advance(len(tail) - n)
            result.at_pause = len(tail) - n
            self.pause_words += result.at_pause
            n = len(tail)
        # Hypotheses that keep changing hold words back: whatever ended more than ``max_hold_s`` before the audio's
        # end is committed as this hypothesis has it, or with ``force_previous`` as the one before had it.
        hold = self._hold_s()
        horizon = self._offset_s + self.buffer_s - (hold if hold is not None else float("inf"))
        held = next((i for i, w in enumerate(tail) if w.end_s > horizon), len(tail))
        words, rest = list(tail[:n]), list(tail[n:])
        force_previous = self.config.force_previous and self.policy.streaming
        before = self._held_before(tail, n, horizon) if held > n and force_previous else []
        if before:
            log.debug("committing %d word(s) held over %.1f s as the hypothesis before had them", len(before), hold)
            covered = self._covered(rest, before)
            self.policy.advance(covered)
            words, rest, result.forced = words + before, rest[covered:], len(before)
        elif held > n:
            log.debug("committing %d word(s) held over %.1f s", held - n, hold)
            self.policy.advance(held - n)
            words, rest, result.forced = list(tail[:held]), list(tail[held:]), held - n
        self.forced_words += result.forced
        result.committed = self._commit(words, now_s, rest, forced=result.forced, paused=endpoint is not None)
        self._tail = rest
        result.tentative = list(self._tail)
        result.paused = self._paused()
        if endpoint is not None:
            # What is left is the pause. Decoded again and again, Whisper would fill it with words nobody said
            # ("Thank you.", "Yes!"); cut, the buffer holds no speech, so nothing is decoded until the speaker goes on.
            self.policy.reset()
            self._cut(endpoint)
        else:
            self._trim()
        return result

    def _commit_limit(self, tail: Sequence[Word]) -> int | None:
        """How many words of ``tail`` the policy may commit: all but the last while it may still grow."""
        if not tail:
            return None
        last = tail[-1]
        if self.config.hold_unfinished and _may_grow(last.text):
            # a run of numbers at the end is one number being written: "in 20 20" becomes "in 2021"
            numbers = next((i for i, w in enumerate(reversed(tail)) if not _is_number(w.text)), len(tail))
            return len(tail) - max(numbers, 1)
        return None

    def _held_before(self, tail: Sequence[Word], agreed: int, horizon: float) -> list[Word]:
        """The previous hypothesis's words after the ``agreed`` ones that ended before ``horizon``; none when its
        first ``agreed`` words are not this one's (a policy that commits other than a common prefix: hold-n)."""
        previous = self._tail
        if len(previous) <= agreed or common_prefix_length(previous, tail) < agreed:
            return []
        end = next((i for i in range(agreed, len(previous)) if previous[i].end_s > horizon), len(previous))
        return list(previous[agreed:end])

    @staticmethod
    def _covered(rest: Sequence[Word], before: Sequence[Word]) -> int:
        """How many leading words of ``rest`` (this hypothesis after its agreed words) ``before`` stands for: those
        that start before its last word ends, and then any that repeat its last words."""
        count = next((i for i, w in enumerate(rest) if w.start_s > before[-1].end_s - OVERLAP_TOLERANCE_S), len(rest))
        return count + repeated(before, rest[count:])

    def _endpoint(self) -> int | None:
        """Where this step's decode ends when the speaker has been quiet for ``endpoint_s`` at the buffer's end
        (``FINISH_TAIL_S`` after the speech, a sample index of the buffer); None when not at a pause."""
        endpoint_s = self.config.endpoint_s
        if endpoint_s is None or self.vad is None or self._incremental or not self.policy.streaming:
            return None
        speech_end = self._speech_end()
        if speech_end is None:
            return None
        if (self._buffer.size - speech_end) / SAMPLE_RATE < endpoint_s:
            return None
        return min(speech_end + int(FINISH_TAIL_S * SAMPLE_RATE), self._buffer.size)

    def _reaches(self, tail: Sequence[Word], endpoint: int) -> bool:
        """The words heard reach the end of the speech (within ``ENDPOINT_REACH_S``): the decoder did not stop
        early on this buffer, so cutting it at ``endpoint`` loses no speech."""
        last = tail[-1].end_s if tail else (self._committed[-1].end_s if self._committed else None)
        speech_end_s = self._offset_s + endpoint / SAMPLE_RATE - FINISH_TAIL_S
        return last is not None and last >= speech_end_s - ENDPOINT_REACH_S

    def _hold_s(self) -> float | None:
        """How long a word may stay uncommitted after it was said (None: as long as the policy likes)."""
        if self.policy.streaming:
            return self.config.max_hold_s
        if self.buffer_s > OFFLINE_FORCE_FRACTION * self.config.max_buffer_s:
            return OFFLINE_MARGIN_S
        return None

    def finish(self, now_s: float) -> StepResult:
        """The input ended: recognize once more and commit everything that is left."""
        result = StepResult()
        self.last_heard = None
        if self._incremental:
            self.backend.flush()  # type: ignore[attr-defined]
        if self._has_speech() and self._buffer.size:
            result.recognized = True
            self._drop_trailing_quiet()
            hypothesis, result.unspoken = self._hypothesize(window_s=self.config.finish_window_s)
            self.unspoken_words += result.unspoken
            result.failed_decode = self._failed
            # a last decode too unsure to use: the last usable hypothesis's words are what was heard
            tail = list(self._tail) if self._failed and not hypothesis else self._new_words(hypothesis)
        else:
            tail = []
        n = self.policy.finish(tail)
        result.committed = self._commit(tail[:n], now_s, [])
        self._tail = []
        self._cut(self._buffer.size)
        result.buffer_start_s = self._offset_s
        return result

    def _drop_trailing_quiet(self) -> None:
        """Before the last decode: end the buffer ``FINISH_TAIL_S`` after the last speech the detector heard."""
        speech_end = self._speech_end()
        if self._incremental or speech_end is None:
            return
        end = speech_end + int(FINISH_TAIL_S * SAMPLE_RATE)
        if 0 < end < self._buffer.size:
            log.debug(
                "last decode ends %.2f s after the speech (%.2f s of quiet left out)",
                FINISH_TAIL_S,
                (self._buffer.size - end) / SAMPLE_RATE,
            )
            self._buffer = self._buffer[:end]

    def _commit(
        self, words: list[Word], now_s: float, following: Sequence[Word] = (), forced: int = 0, paused: bool = False
    ) -> list[CommittedWord]:
        """``following``: the tentative words after them (the pause after the last committed word is read from
        the next tentative word, else from the voice-activity flags); ``forced``: how many of the last ones the
        hold bound commits; ``paused``: the speaker is known to have paused after the last one (an endpoint)."""
        frames = self._frames()
        audio_end = self._offset_s + self.buffer_s
        committed = []
        for i, w in enumerate(words):
            after = words[i + 1] if i + 1 < len(words) else (following[0] if following else None)
            if after is not None:
                pause = after.start_s - w.end_s >= PAUSE_S
            else:
                pause = paused or (frames is not None and frames.quiet_from(w.end_s, audio_end) >= PAUSE_S)
            committed.append(
                CommittedWord(w.text, w.start_s, w.end_s, now_s, pause, audio_end, forced=i >= len(words) - forced)
            )
        self._committed.extend(committed)
        if len(self._committed) > 2 * KEEP_COMMITTED_WORDS:
            del self._committed[:-KEEP_COMMITTED_WORDS]
        if committed:
            self._last_committed_end = max(self._last_committed_end, committed[-1].end_s)
        return committed

    def _speech_end(self) -> int | None:
        """The buffer's sample index just after the last frame the voice-activity detector heard speech in (None
        without a detector or without speech)."""
        if self.vad is None:
            return None
        speech = np.flatnonzero(self._speech)
        if not speech.size:
            return None
        return self._speech_start + (int(speech[-1]) + 1) * FRAME - self._start

    def _paused(self) -> bool:
        """``StepResult.paused``. The quiet is read at the end of the audio, not from the last word's end: Whisper's
        word ends may fall well before the end of the speech, and a tentative word heard seconds later may be timed
        right after it."""
        if not self._committed or self._tail or self.vad is None:
            return False
        speech_end = self._speech_end()
        quiet = self._buffer.size - (speech_end if speech_end is not None else 0)
        return quiet >= PHRASE_END_QUIET_S * SAMPLE_RATE

    def _drop_quiet(self) -> None:
        """Nothing but silence or noise in the buffer: keep only its last moments (speech may be starting)."""
        keep = int(self.config.quiet_keep_s * SAMPLE_RATE)
        if self._buffer.size > 2 * keep and not self._tail:
            self._cut(self._buffer.size - keep)

    def _stalled(self) -> bool:
        """The hypothesis stops more than ``max_hold_s`` before the audio's end although speech goes on after it:
        the decoder gave up on the buffer (it does, on a long buffer, after a repetition it cut)."""
        frames = self._frames()
        if frames is None or not self._committed or self._failed:
            return False
        heard_to = self._tail[-1].end_s if self._tail else self._last_committed_end
        audio_end = self._offset_s + self.buffer_s
        return heard_to < audio_end - self.config.max_hold_s and frames.any_speech(heard_to + PAUSE_S, audio_end)

    def _cut_unrecognized(self) -> None:
        """Past the trim length, nothing in the buffer was committed although the hold bound commits every word
        ``max_hold_s`` after it ends: its start held no words (babble, music, a language the model does not
        know, a hypothesis the filter emptied). Cut it up to the first tentative word, keeping at least the last
        ``max_hold_s``, instead of decoding it again at every step until the cap drops it (not for ``offline``,
        which holds its words that long by design)."""
        if not self.policy.streaming:
            return
        keep_from = self._offset_s + self.buffer_s - self.config.max_hold_s
        if self._tail:
            keep_from = min(keep_from, self._tail[0].start_s)
        cut_s = keep_from - self._offset_s
        if cut_s <= 0:
            return
        self.unrecognized_audio_s += cut_s
        log.info("no words in the recognizer's first %.1f s of audio; cutting it", cut_s)
        self._cut(int(cut_s * SAMPLE_RATE))

    def _trim(self) -> None:
        """Past ``self.trim_s``, cut the buffer at the last committed sentence end, else at the last pause after a
        committed word, else after the last committed word (the next word's start, if it is tentative). A stalled
        hypothesis (``_stalled``) is cut after the last committed word whatever the buffer's length, so the next
        step decodes the speech after it afresh."""
        stalled = self._stalled()
        if self.buffer_s <= self.trim_s and not stalled:
            return
        in_buffer = [w for w in self._committed if w.end_s > self._offset_s]
        if not in_buffer:
            self._cut_unrecognized()
            return
        if stalled:
            log.debug("hypothesis stalled at %.1f s: cutting the buffer there", in_buffer[-1].end_s)
            self._cut(int((in_buffer[-1].end_s + TRIM_MARGIN_S - self._offset_s) * SAMPLE_RATE))
            return
        # a candidate must cut something: the word the last cut was made after is still in the buffer (its end is
        # a few samples past the cut), and a sentence end there would otherwise be chosen again and again while the
        # buffer grows to the cap (fast speech Whisper punctuates rarely)
        useful = self._offset_s + MIN_CUT_S
        ends = [w.end_s for w in in_buffer if _ends_sentence(w.text) and w.end_s > useful]
        if not ends:
            ends = [w.end_s + TRIM_MARGIN_S for w in in_buffer if w.pause_after and w.end_s > useful]
        if not ends:
            last = in_buffer[-1].end_s
            nxt = self._tail[0].start_s if self._tail else last + TRIM_MARGIN_S
            ends = [min(max(last, nxt), last + TRIM_MARGIN_S)]
        self._cut(int((ends[-1] - self._offset_s) * SAMPLE_RATE))
