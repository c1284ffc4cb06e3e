"""The incremental synthesizer: words in, audio pieces out, chunk by chunk (Ma et al. 2020).

Per sentence: words → units (front end) → chunks (chunker) → for each chunk the policy's window through Stage I
(latent frames + durations; the chunk's frames are kept) → Stage II. With ``overlap_decode`` Stage II runs in
hold mode: it emits audio up to the last latent frame − δ and keeps δ frames as left context for the next slice,
so seams equal a one-shot decode (δ = 12 covers the decoder's receptive field).

This class is synchronous and single-threaded; ``worker.SynthesisWorker`` runs it in a background thread.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from engine.tts.chunk_plan import (
    CALM,
    Urgency,
    at_phrase_start,
    merged_with_hint,
    plan_chunks,
    sentence_units,
    sizes_for,
)
from engine.tts.chunker import ChunkSizes
from engine.tts.frontend import FrontEnd, Unit, ends_sentence
from engine.tts.pieces import AudioPiece
from engine.tts.policies import LookaheadPolicy, TtsPolicy
from engine.tts.sentence_state import SentenceState
from engine.tts.speculation import (
    Speculation,
    assumed_words,
    common_prefix,
    confirmed,
    cut_speculation,
    sentence_part,
    starts_with,
    tokens_of,
)
from engine.tts.voice import TwoStageVoice

log = logging.getLogger(__name__)

DEFAULT_DELTA_FRAMES = 12


class IncrementalSynthesizer:
    """``feed(words)``, ``end_sentence()``, ``flush()``, ``cancel()``; each returns the pieces it made."""

    def __init__(
        self,
        voice: TwoStageVoice,
        policy: TtsPolicy | None = None,
        sizes: ChunkSizes | None = None,
        delta: int = DEFAULT_DELTA_FRAMES,
        frontend: FrontEnd | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        if delta < 0:
            raise ValueError(f"delta must be non-negative, not {delta}")
        self.voice = voice
        self.policy: TtsPolicy = policy or LookaheadPolicy(k=1)
        self.sizes = sizes or ChunkSizes()
        self.delta = delta
        self.frontend = frontend or FrontEnd(voice.config)
        self._timer = timer
        self._sentence = SentenceState(0)
        self._cancelled = False
        self._hurrying = False  # inside ``feed(hurry=True)``
        self.last_sentence_latent: np.ndarray | None = None  # latent frames of the last finished sentence
        self._speculation: Speculation | None = None
        self.speculations = 0  # speculations made (``speculate``), and those whose words came
        self.speculations_used = 0
        self.on_piece: Callable[[AudioPiece], None] | None = None  # called as soon as each piece is ready
        self._urgency = CALM  # the call's, while ``feed``, ``hurry`` or ``speculate`` runs

    # ----- input stream API
    def feed(
        self,
        words: Sequence[str] | str,
        hint: Sequence[str] | None = None,
        hurry: bool = False,
        urgency: Urgency = CALM,
    ) -> list[AudioPiece]:
        """Add words (a string is split on whitespace); a word ending in . ! or ? closes its sentence.

        ``hint``: words that will probably follow (a recognizer's tentative words). They are never spoken, but
        they may serve as lookahead context, so a chunk need not wait for its lookahead to be final. Each call
        replaces the previous hint. ``hurry``: the voice is about to run out; every piece is made as ``hurry`` makes
        them (the end of a sentence too). ``urgency``: how pressed the voice is (``chunk_plan.Urgency``).
        """
        tokens = tokens_of(words)
        self._cancelled = False
        pieces: list[AudioPiece] = []
        self._urgency = urgency
        try:
            tokens = self._use_speculation(tokens, hint, pieces)
            self._hurrying = hurry
            for token in tokens:
                self._sentence.words.append(token)
                if ends_sentence(token):
                    pieces.extend(self.end_sentence())
            self._sentence.hint = sentence_part(tokens_of(hint or ()))
            pieces.extend(self._advance(hurry=hurry))
        finally:
            self._hurrying, self._urgency = False, CALM
        return pieces

    def hurry(self, sentence_start: bool = False, urgency: Urgency = CALM) -> list[AudioPiece]:
        """The voice is about to run out mid-sentence: synthesize the chunks whose words are final now, with what
        lookahead there is, instead of waiting for the policy's (a gap costs more than a little prosody); a last
        chunk shorter than the chunk size only when ``urgent``.

        ``sentence_start``: the first chunk of a sentence too (normally never hurried: the silence before it is a
        pause); for words that have waited too long for their lookahead (a speaker who stops after "and")."""
        self._urgency = urgency
        try:
            return self._advance(hurry=True, sentence_start=sentence_start)
        finally:
            self._urgency = CALM

    @property
    def sentence_started(self) -> bool:
        """A piece of the current sentence has been made (its first chunk no longer waits for its lookahead)."""
        return self._sentence.next_chunk > 0

    @property
    def unspoken_words(self) -> int:
        """Fed words of the current sentence that no piece holds yet."""
        return len(self._sentence.words) - self._sentence.spoken_words

    def speculate(self, urgency: Urgency = CALM) -> bool:
        """The voice is about to run out: make the pieces of the fed words no piece holds yet and of the first hint
        words now, as if those had been fed, and keep them. If the next ``feed`` brings those words, they are
        delivered at once; if it brings only the first of them, or none, the audio of the words that did come (and
        of the fed words) is delivered (``speculation.cut_speculation``); otherwise they are dropped. Returns whether
        pieces were made.

        The hint's punctuation is not reliable ("relief," may come as "relief."), so the pieces are made as if the
        sentence went on, and match the words whatever their punctuation (``speculation.assumed_words`` chooses
        them). Fed words waiting for a chunk's worth (or, after a comma, a phrase chunk's) go with them: the voice
        is low, so the pause such a wait allows would be a gap if those words come.
        """
        sentence = self._sentence
        if (
            self._speculation is not None
            or not sentence.hint
            or sentence.complete
            or sentence.next_chunk == 0
            or self.policy.one_piece_per_sentence
            or not self.policy.overlap_decode
        ):
            return False
        units = sentence_units(sentence, self.frontend)
        assumed = assumed_words(sentence, units, sizes_for(sentence, self.sizes, phrase_start=False).first)
        if not assumed:
            return False
        state = copy.deepcopy(sentence)
        state.words.extend(assumed)
        state.hint = sentence.hint[len(assumed) :]
        finished = self.last_sentence_latent
        self._urgency = replace(urgency, urgent=True)  # the pieces are for a voice about to run out: short ones too
        try:
            pieces = self._advance(hurry=True, sentence=state, ahead=True)
        finally:
            self.last_sentence_latent, self._urgency = finished, CALM
        if self._cancelled or not pieces:
            return False
        self._speculation = Speculation(sentence, len(sentence.words), assumed, state, pieces)
        self.speculations += 1
        return True

    def _use_speculation(self, tokens: list[str], hint: Sequence[str] | None, pieces: list[AudioPiece]) -> list[str]:
        """Deliver the speculation's pieces if ``tokens`` start with its words, or as much of them as the tokens
        confirm (``speculation.cut_speculation``); returns the tokens left to feed."""
        speculation, self._speculation = self._speculation, None
        if speculation is None:
            return tokens
        n = len(speculation.assumed)
        if speculation.base is not self._sentence or len(self._sentence.words) != speculation.base_words:
            return tokens
        if not tokens and starts_with(sentence_part(tokens_of(hint or ())), speculation.assumed):
            self._speculation = speculation  # only the hint changed, and it still says those words come next
            return tokens
        # Only the words up to a sentence end can match: the speculation was made as if the sentence went on, and a
        # sentence end among its words ("long. Day" for "long day") must close the sentence there, as the session's
        # word keys (``tts.keys``) do.
        part = sentence_part(tokens)
        if not tokens or not starts_with(part, speculation.assumed):
            # some of the words came, or none: the fed words it holds are final either way
            matched = common_prefix(part, speculation.assumed)
            fed_words = self._sentence.spoken_words < speculation.base_words
            more = len(part) > matched  # words of this sentence came after them: its next piece is made now
            cut = cut_speculation(speculation, tokens[:matched], self.voice.hop, more) if matched or fed_words else None
            if cut is None:
                log.debug("speculation on %s dropped: %s came", speculation.assumed, tokens)
                return tokens
            self._sentence, delivered = cut
            self.speculations_used += 1
            for piece in delivered:
                self._deliver(piece, pieces)
            if matched and ends_sentence(tokens[matched - 1]):
                pieces.extend(self.end_sentence())
            return tokens[matched:]
        self.speculations_used += 1
        self._sentence = speculation.state
        self._sentence.words[-n:] = tokens[:n]  # as committed (punctuation may differ a little)
        for piece in confirmed(speculation, tokens[:n]):
            self._deliver(piece, pieces)
        if ends_sentence(tokens[n - 1]):
            pieces.extend(self.end_sentence())
        return tokens[n:]

    def _deliver(self, piece: AudioPiece, pieces: list[AudioPiece]) -> None:
        pieces.append(piece)
        if self.on_piece is not None:
            self.on_piece(piece)

    def end_sentence(self) -> list[AudioPiece]:
        """The current sentence is complete: synthesize what is left of it and start a new one."""
        self._speculation = None
        sentence = self._sentence
        sentence.complete = True
        pieces = self._advance()
        if sentence.frames_total and not any(p.sentence_end for p in pieces):
            # every frame was spoken before the sentence turned out to end (pieces made ahead, or cut from them)
            self.last_sentence_latent = sentence.latent_slice(0, sentence.frames_total)
        self._sentence = SentenceState(sentence.index + (1 if sentence.words else 0))
        return pieces

    def flush(self) -> list[AudioPiece]:
        """Speak everything fed so far (the end of input ends the sentence)."""
        return self.end_sentence()

    def request_stop(self) -> None:
        """Make a synthesis under way (in another thread) stop before its next chunk."""
        self._cancelled = True

    def cancel(self) -> None:
        """Drop what is pending; the next ``feed`` starts a new sentence."""
        self._cancelled = True
        self._speculation = None
        self._sentence = SentenceState(self._sentence.index + 1)

    @property
    def pending_words(self) -> int:
        return len(self._sentence.words)

    def pending_phonemes(self) -> tuple[int, int, bool]:
        """(phonemes of fed words no piece holds yet, phonemes of the hint words after them, whether the current
        sentence has a piece yet): what a learned policy sees of the text (``engine/tts/learned``)."""
        sentence = self._sentence
        if not sentence.words:
            return 0, 0, False
        fed = len(sentence.words)
        spoken = sentence.spoken_words
        units = self._units(sentence)
        pending = sum(u.n_phonemes for u in units if spoken <= u.first_word < fed)
        hint = sum(u.n_phonemes for u in units if u.first_word >= fed)
        return pending, hint, sentence.next_chunk > 0

    # ----- internals
    def _units(self, sentence: SentenceState) -> list[Unit]:
        return sentence_units(sentence, self.frontend)

    def _chunks(self, sentence: SentenceState, hurry: bool = False) -> tuple[list[list[Unit]], int, int]:
        return plan_chunks(sentence, self.frontend, self.sizes, self._urgency, hurry)

    def _advance(
        self,
        hurry: bool = False,
        sentence: SentenceState | None = None,
        ahead: bool = False,
        sentence_start: bool = False,
    ) -> list[AudioPiece]:
        """Make the pieces of ``sentence`` (the current one) that may be made now. ``ahead``: for a speculation, so
        every piece is made in a hurry and none is delivered; ``sentence_start``: a hurry may make the first chunk."""
        pieces = self._advance_sentence(hurry, sentence, ahead, sentence_start)
        if pieces and not ahead and self._speculation is not None:
            # The pieces made ahead continue the sentence as it was when they were made. It has moved on since (a
            # hurry while the voice waited), so delivering them would speak its words a second time.
            log.debug("speculation on %s dropped: the sentence went on without it", self._speculation.assumed)
            self._speculation = None
        return pieces

    def _advance_sentence(
        self, hurry: bool, sentence: SentenceState | None, ahead: bool, sentence_start: bool
    ) -> list[AudioPiece]:
        sentence = self._sentence if sentence is None else sentence
        pieces: list[AudioPiece] = []
        if not sentence.words:
            return pieces
        chunks, final, whole = self._chunks(sentence)
        while (
            not self._cancelled
            and sentence.next_chunk < final
            and self.policy.ready(sentence.next_chunk, whole, sentence.complete)
        ):
            # in a hurry, the last piece gives all its audio (see below), also when its lookahead was there
            flush = hurry and not sentence.complete and sentence.next_chunk == final - 1
            if not self._make_piece(sentence, chunks, pieces, hurried=ahead, flush=flush, deliver=not ahead):
                return pieces
        # the first chunk of a sentence is never hurried: the silence before it is a pause, not a gap
        started = sentence.next_chunk > 0 or sentence_start
        if hurry and started and not sentence.complete and not self.policy.one_piece_per_sentence:
            hint = sentence.hint
            chunks, final, _ = self._chunks(sentence, hurry=True)
            if self._urgency.urgent and sentence.next_chunk >= final and merged_with_hint(sentence, self.frontend):
                # the last fed words share a unit with a hint word ("of" + "the"): speak them on their own rather
                # than let the voice run dry waiting for a word the recognizer has not committed
                sentence.hint = []
                chunks, final, _ = self._chunks(sentence, hurry=True)
            try:
                while not self._cancelled and sentence.next_chunk < final:
                    # the last hurried piece gives all its audio: nothing may follow it for a while, and a word
                    # whose end waited for the next piece would be split by that wait
                    flush = sentence.next_chunk == final - 1
                    if not self._make_piece(sentence, chunks, pieces, hurried=True, flush=flush, deliver=not ahead):
                        return pieces
            finally:
                sentence.hint = hint
        if sentence.complete and sentence.next_chunk >= len(chunks) and sentence.emitted_frames < sentence.frames_total:
            # every chunk was made before the sentence turned out to end there (hint words that never came, or a
            # speculation): the frames held for the next chunk's seam are all that is left to speak
            self._tail_piece(sentence, chunks, pieces)
        return pieces

    def _tail_piece(self, sentence: SentenceState, chunks: list[list[Unit]], pieces: list[AudioPiece]) -> None:
        start = sentence.emitted_frames
        t0 = self._timer()
        samples = self._decode(sentence, last_chunk=True)
        self.last_sentence_latent = sentence.latent_slice(0, sentence.frames_total)
        piece = AudioPiece(
            samples=samples,
            sample_rate=self.voice.sample_rate,
            sentence=sentence.index,
            chunk=sentence.next_chunk,
            words=sentence.piece_words(chunks, self.voice.hop, start, sentence.emitted_frames),
            stage1_s=0.0,
            stage2_s=self._timer() - t0,
            sentence_end=True,
            frame_start=start,
            needs_word=len(sentence.words) - 1,
            needs_sentence_end=True,
        )
        pieces.append(piece)
        if self.on_piece is not None:
            self.on_piece(piece)

    def _make_piece(
        self,
        sentence: SentenceState,
        chunks: list[list[Unit]],
        pieces: list[AudioPiece],
        hurried: bool = False,
        flush: bool = False,
        deliver: bool = True,
    ) -> bool:
        """Synthesize the next chunk into ``pieces``; False when a cancel came while it was being made."""
        hurried = hurried or (self._hurrying and sentence.next_chunk > 0)
        piece = self._synthesize(sentence, chunks, hurried, flush)
        if deliver and sentence is not self._sentence and not sentence.complete:
            return False  # cancelled while synthesizing
        if piece is not None:
            pieces.append(piece)
            if deliver and self.on_piece is not None:
                self.on_piece(piece)
        return True

    def _id_offsets(self, units: Sequence[Unit]) -> dict[int, int]:
        """Absolute id index (within the sentence's id sequence) of every unit, keyed by its first word."""
        offsets = {}
        position = len(self.frontend.prefix_ids)
        for unit in units:
            offsets[unit.first_word] = position
            position += len(unit.ids)
        return offsets

    def _synthesize(
        self, sentence: SentenceState, chunks: list[list[Unit]], hurried: bool = False, flush: bool = False
    ) -> AudioPiece | None:
        """Stage I on the policy's window, then Stage II. ``flush``: decode the chunk's last δ frames too, with
        the lookahead's latent frames (if any) as right context, instead of holding them for the next piece."""
        index = sentence.next_chunk
        phrase_start = index > 0 and at_phrase_start(sentence, self.sizes, self._urgency)
        policy = self.policy
        if hurried and self._urgency.short_context and isinstance(policy, LookaheadPolicy):
            policy = policy.hurried()
        window = policy.window(chunks, index, sentence.complete)
        covered = len(chunks) - index if self.policy.one_piece_per_sentence else 1
        last_chunk = sentence.complete and index + covered >= len(chunks)
        prefix = self.frontend.prefix_ids if window.at_start else ()
        suffix = self.frontend.suffix_ids if window.at_end else ()
        window_units = (*window.left, *window.chunk, *window.right)
        ids = [*prefix, *(i for u in window_units for i in u.ids), *suffix]
        first = window_units[0]
        id_offsets = self._id_offsets([u for c in chunks for u in c])
        phoneme_offset = id_offsets[first.first_word] - len(prefix)
        frame_offset = sentence.unit_frames.get(first.first_word, (sentence.frames_total, 0))[0]
        if window.at_start and first.first_word == 0:
            frame_offset = 0

        rate = float(getattr(self.voice, "rate", 1.0))  # read before Stage I: the session may change it meanwhile
        t0 = self._timer()
        prior, durations = self.voice.stage1_prior(np.asarray(ids, np.int64), max(phoneme_offset, 0), frame_offset)

        # the chunk's ids inside the window, including BOS/PAD when it opens the sentence and EOS when it ends it
        left_ids = sum(len(u.ids) for u in window.left)
        chunk_start = len(prefix) + left_ids
        chunk_stop = chunk_start + sum(len(u.ids) for u in window.chunk)
        if index == 0 or not self.policy.overlap_decode:
            chunk_start -= len(prefix)
        if last_chunk or not self.policy.overlap_decode:
            chunk_stop += len(suffix)
        bounds = np.concatenate([[0], np.cumsum(durations)])
        f0, f1 = int(bounds[chunk_start]), int(bounds[chunk_stop])
        position = len(prefix) + left_ids
        for unit in window.chunk:  # absolute frames of each unit, for word times and later windows' noise
            start = int(bounds[position]) - f0 + sentence.frames_total
            position += len(unit.ids)
            sentence.unit_frames[unit.first_word] = (start, int(bounds[position]) - f0 + sentence.frames_total)
            sentence.unit_rates[unit.first_word] = rate
        # the flow only on the frames kept (and those given to Stage II as right context), not the left context's
        latent = self.voice.latent_frames(prior, f0, f1 + self.delta if flush else f1)
        stage1_s = self._timer() - t0
        chunk_latent = latent[:, : f1 - f0]
        piece_start = sentence.emitted_frames
        sentence.latent.append(chunk_latent)
        sentence.frames_total += chunk_latent.shape[1]
        sentence.next_chunk += covered
        sentence.done.extend(list(c) for c in chunks[index : index + covered])

        t0 = self._timer()
        right = latent[:, f1 - f0 :] if flush else None
        samples = self._decode(sentence, last_chunk, right)
        stage2_s = self._timer() - t0
        if last_chunk:  # before the piece is delivered, so a consumer of the last piece can check its seams
            self.last_sentence_latent = np.concatenate(sentence.latent, axis=1)
        if sentence.latent and len(sentence.latent) > 1:  # keep one array: cheap slicing next time
            sentence.latent = [np.concatenate(sentence.latent, axis=1)]
        words = sentence.piece_words(chunks, self.voice.hop, piece_start, sentence.emitted_frames)
        return AudioPiece(
            samples=samples,
            sample_rate=self.voice.sample_rate,
            sentence=sentence.index,
            chunk=index,
            words=words,
            stage1_s=stage1_s,
            stage2_s=stage2_s,
            sentence_end=last_chunk,
            frame_start=piece_start,
            needs_word=window_units[-1].first_word + len(window_units[-1].words) - 1,
            needs_sentence_end=window.at_end,
            hurried=hurried,
            phrase_start=phrase_start,
        )

    def _decode(self, sentence: SentenceState, last_chunk: bool, flush_right: np.ndarray | None = None) -> np.ndarray:
        """Stage II for the frames that may be emitted now; advances ``emitted_frames``. With ``flush_right`` (latent
        frames that will probably follow) every frame is emitted, those frames serving as right context."""
        start = sentence.emitted_frames
        total = sentence.frames_total
        if not self.policy.overlap_decode:
            stop = total
            audio = self.voice.stage2(sentence.latent_slice(start, stop))
        else:
            stop = total if last_chunk or flush_right is not None else max(total - self.delta, start)
            if stop <= start:
                return np.zeros(0, np.float32)
            left = min(self.delta, start)
            right = min(self.delta, total - stop)
            latent = sentence.latent_slice(start - left, stop + right)
            if flush_right is not None and flush_right.shape[1]:
                latent = np.concatenate([latent, flush_right], axis=1)
            wave = self.voice.stage2(latent)
            hop = self.voice.hop
            audio = wave[left * hop : (left + stop - start) * hop]
        sentence.emitted_frames = stop
        return np.ascontiguousarray(audio, dtype=np.float32)


def synthesize_text(synthesizer: IncrementalSynthesizer, text: str) -> tuple[np.ndarray, list[AudioPiece]]:
    """All input available: feed the whole text, flush, and join the pieces (for tests, benchmarks, quality)."""
    pieces = synthesizer.feed(text) + synthesizer.flush()
    audio = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
    return audio, pieces
