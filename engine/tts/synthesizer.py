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
from dataclasses import dataclass, field, replace

import numpy as np

from engine.tts.chunker import ChunkSizes, chunk_units
from engine.tts.frontend import FrontEnd, Unit, ends_phrase, ends_sentence, split_words
from engine.tts.pieces import AudioPiece, PieceWord
from engine.tts.policies import LookaheadPolicy, TtsPolicy
from engine.tts.voice import LATENT_CHANNELS, TwoStageVoice

log = logging.getLogger(__name__)

DEFAULT_DELTA_FRAMES = 12
# A speculation cut at a word's end (``_use_prefix``) keeps back this many of the word's last frames for the next
# piece to decode again when other words follow at once: the cut piece decoded them with the unconfirmed next word's
# frames as right context; decoded again with the right ones, the seam is 40-53 dB from a one-shot decode (cut at
# the word's end: 10-25 dB). With nothing to follow at once they are not kept back: the voice would stop mid-word.
CUT_HOLD_FRAMES = 6
# A tentative word with more phonemes than this is not made ahead (``speculate``): the longest real ones, numbers,
# have 30-50 ("627,000" 34, "2020-2021" 46); a decoding loop joined into one word had 216, and its piece took 2.5 s.
MAX_AHEAD_PHONEMES = 64


@dataclass
class _Sentence:
    index: int
    words: list[str] = field(default_factory=list)
    complete: bool = False
    next_chunk: int = 0
    unit_frames: dict[int, tuple[int, int]] = field(default_factory=dict)  # first word → absolute frames
    unit_rates: dict[int, float] = field(default_factory=dict)  # first word → the speaking rate it was made at
    latent: list[np.ndarray] = field(default_factory=list)
    frames_total: int = 0
    emitted_frames: int = 0
    hint: list[str] = field(default_factory=list)  # words likely to come next (e.g. ASR tentative words)
    units: list[Unit] = field(default_factory=list)
    units_for: tuple = ()  # (words, hint) the units were computed for
    done: list[list[Unit]] = field(default_factory=list)  # the chunks already synthesized, as they were

    @property
    def frozen(self) -> list[Unit]:
        """Units of the chunks already synthesized."""
        return [u for chunk in self.done for u in chunk]

    @property
    def spoken_words(self) -> int:
        """How many of the sentence's words the chunks already synthesized hold."""
        return sum(len(u.words) for chunk in self.done for u in chunk)

    def latent_slice(self, start: int, stop: int) -> np.ndarray:
        return np.concatenate(self.latent, axis=1)[:, start:stop] if self.latent else np.zeros((LATENT_CHANNELS, 0))


@dataclass
class _Speculation:
    """Pieces made ahead for words not fed yet, and the sentence as it will be if those words come."""

    base: _Sentence  # the sentence it was made from, unchanged since
    base_words: int
    assumed: tuple[str, ...]
    state: _Sentence
    pieces: list[AudioPiece]


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
        self._sentence = _Sentence(0)
        self._cancelled = False
        self._hurrying = False  # inside ``feed(hurry=True)``
        self.last_sentence_latent: np.ndarray | None = None  # latent frames of the last finished sentence
        self._speculation: _Speculation | None = None
        self.speculations = 0  # speculations made (``speculate``), and those whose words came
        self.speculations_used = 0
        self.on_piece: Callable[[AudioPiece], None] | None = None  # called as soon as each piece is ready
        # Set by the worker for the command at hand. ``resuming``: the voice has gone silent mid-sentence, so it
        # resumes as after a comma, with a whole phrase chunk of final words, instead of word by word with nothing
        # in hand. ``overdue``: fed words have waited too long (``worker.MAX_WAIT_S``): no phrase wait at all.
        self.resuming = False
        self.overdue = False
        # ``urgent``: the voice will run out before the next command could help: a hurry also makes a last chunk
        # shorter than the chunk size, after a phrase's end too (pausing at a comma whose next words are in is a
        # gap, not a pause)
        self.urgent = False
        # a hurried piece reads the policy's shorter left context (compute matters when the voice runs out); a
        # learned policy's early move (``learned.moves.NOW``) is made with the whole one
        self.short_hurry_context = True

    # ----- input stream API
    def feed(
        self, words: Sequence[str] | str, hint: Sequence[str] | None = None, hurry: bool = False
    ) -> list[AudioPiece]:
        """Add words (a string is split on whitespace); a word ending in . ! or ? closes its sentence.

        ``hint``: words that will probably follow (a recognizer's tentative words). They are never spoken, but
        they may serve as lookahead context, so a chunk need not wait for its lookahead to be final. Each call
        replaces the previous hint. ``hurry``: the voice is about to run out; every piece is made as ``hurry`` makes
        them (the end of a sentence too).
        """
        tokens = _tokens(words)
        self._cancelled = False
        pieces: list[AudioPiece] = []
        tokens = self._use_speculation(tokens, hint, pieces)
        self._hurrying = hurry
        try:
            for token in tokens:
                self._sentence.words.append(token)
                if ends_sentence(token):
                    pieces.extend(self.end_sentence())
            self._sentence.hint = _sentence_part(_tokens(hint or ()))
            pieces.extend(self._advance(hurry=hurry))
        finally:
            self._hurrying = False
        return pieces

    def hurry(self, sentence_start: bool = False) -> list[AudioPiece]:
        """The voice is about to run out mid-sentence: synthesize the chunks whose words are final now, with what
        lookahead there is, instead of waiting for the policy's (a gap costs more than a little prosody); a last
        chunk shorter than the chunk size only when ``urgent``.

        ``sentence_start``: the first chunk of a sentence too (normally never hurried: the silence before it is a
        pause); for words that have waited too long for their lookahead (a speaker who stops after "and")."""
        return self._advance(hurry=True, sentence_start=sentence_start)

    @property
    def sentence_started(self) -> bool:
        """A piece of the current sentence has been made (its first chunk no longer waits for its lookahead)."""
        return self._sentence.next_chunk > 0

    @property
    def unspoken_words(self) -> int:
        """Fed words of the current sentence that no piece holds yet."""
        return len(self._sentence.words) - self._sentence.spoken_words

    def speculate(self) -> bool:
        """The voice is about to run out: make the pieces of the fed words no piece holds yet and of the first hint
        words now, as if those had been fed, and keep them. If the next ``feed`` brings those words, they are
        delivered at once; if it brings only the first of them, or none, the audio of the words that did come (and
        of the fed words) is delivered (``_use_prefix``); otherwise they are dropped. Returns whether pieces were
        made.

        A word committed just before the voice runs out cannot be synthesized in time (Stage I takes longer than
        what is left to play); the recognizer's tentative words are usually the next ones it commits. Their
        punctuation is not reliable ("relief," may come as "relief."), so the pieces are made as if the sentence
        went on, and match the words whatever their punctuation. They are made up to a whole chunk (a piece of one
        short word, "the", brings less audio than the next piece takes to make), but never the last hint word,
        which stays lookahead, unless it is the only one. Fed words waiting for a chunk's worth (or, after a comma,
        a phrase chunk's) go with them: the voice is low, so the pause such a wait allows would be a gap if those
        words come.
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
        units = self._units(sentence)
        needed = self._sizes(sentence, phrase_start=False).first
        count, end = 0, 0
        if len(sentence.hint) >= 2:  # without lookahead the chunk is spoken as if its sentence ended there
            last = len(sentence.words) + len(sentence.hint) - 1
            units = [u for u in units if u.first_word + len(u.words) <= last]
        for unit in (u for u in units if u.first_word >= sentence.spoken_words):
            unit_end = unit.first_word + len(unit.words)
            tentative = unit_end > len(sentence.words)
            if tentative and unit.n_phonemes > MAX_AHEAD_PHONEMES:
                break  # a tentative "word" this long is a decoding loop (or read out for seconds): not made ahead
            count += unit.n_phonemes
            end = unit_end
            if tentative and count >= needed:
                break
        if end <= len(sentence.words):
            return False  # no unit with a hint word
        assumed = tuple(sentence.hint[: end - len(sentence.words)])
        state = copy.deepcopy(sentence)
        state.words.extend(assumed)
        state.hint = sentence.hint[len(assumed) :]
        finished, urgent = self.last_sentence_latent, self.urgent
        self.urgent = True  # the pieces are for a voice about to run out: short ones too
        try:
            pieces = self._advance(hurry=True, sentence=state, ahead=True)
        finally:
            self.last_sentence_latent, self.urgent = finished, urgent
        if self._cancelled or not pieces:
            return False
        self._speculation = _Speculation(sentence, len(sentence.words), assumed, state, pieces)
        self.speculations += 1
        return True

    def _use_speculation(self, tokens: list[str], hint: Sequence[str] | None, pieces: list[AudioPiece]) -> list[str]:
        """Deliver the speculation's pieces if ``tokens`` start with its words, or as much of them as the tokens
        confirm (``_use_prefix``); returns the tokens left to feed."""
        speculation, self._speculation = self._speculation, None
        if speculation is None:
            return tokens
        n = len(speculation.assumed)
        if speculation.base is not self._sentence or len(self._sentence.words) != speculation.base_words:
            return tokens
        if not tokens and _starts_with(_sentence_part(_tokens(hint or ())), speculation.assumed):
            self._speculation = speculation  # only the hint changed, and it still says those words come next
            return tokens
        # Only the words up to a sentence end can match: the speculation was made as if the sentence went on, and a
        # sentence end among its words ("long. Day" for "long day") must close the sentence there, as the session's
        # word keys (``tts.keys``) do.
        sentence_part = _sentence_part(tokens)
        if not tokens or not _starts_with(sentence_part, speculation.assumed):
            # some of the words came, or none: the fed words it holds are final either way
            matched = _common_prefix(sentence_part, speculation.assumed)
            fed_words = self._sentence.spoken_words < speculation.base_words
            more = len(sentence_part) > matched  # words of this sentence came after them: its next piece is made now
            if (matched or fed_words) and self._use_prefix(speculation, tokens[:matched], pieces, more):
                return tokens[matched:]
            log.debug("speculation on %s dropped: %s came", speculation.assumed, tokens)
            return tokens
        self.speculations_used += 1
        self._sentence = speculation.state
        self._sentence.words[-n:] = tokens[:n]  # as committed (punctuation may differ a little)
        came = dict(enumerate(tokens[:n], start=speculation.base_words))
        for made in speculation.pieces:
            words = tuple(replace(w, text=came.get(w.index, w.text)) for w in made.words)
            self._deliver(replace(made, words=words, speculated=True), pieces)
        if ends_sentence(tokens[n - 1]):
            pieces.extend(self.end_sentence())
        return tokens[n:]

    def _use_prefix(
        self, speculation: _Speculation, came: list[str], pieces: list[AudioPiece], more: bool = False
    ) -> bool:
        """The recognizer committed only the first of the words made ahead ("lusty" of "lusty days"): deliver the
        speculation's audio up to the end of the last of them and go on from there, if a unit ends there (the
        phonemizer may have joined it to the next word). The speculation was made in one piece to keep its compute
        low; the audio cut at a word's end was decoded with the next (unconfirmed) word's frames as right context,
        so the seam with the next piece is not exact, a small cost next to a gap."""
        state = speculation.state
        cut_word = speculation.base_words + len(came)
        ends = {u.first_word + len(u.words): u for chunk in state.done for u in chunk}
        unit = ends.get(cut_word)
        frames = state.unit_frames.get(unit.first_word) if unit is not None else None
        if frames is None or frames[1] <= speculation.pieces[0].frame_start:
            return False
        cut = frames[1]
        hop = self.voice.hop
        emit = max(cut - (CUT_HOLD_FRAMES if more else 0), speculation.pieces[0].frame_start)
        texts = dict(enumerate(came, start=speculation.base_words))
        delivered = []
        for made in speculation.pieces:
            start = made.frame_start
            if start >= emit:
                break
            keep = min(made.samples.size, (emit - start) * hop)
            words = tuple(replace(w, text=texts.get(w.index, w.text)) for w in made.words
                          if w.index < cut_word and w.end_sample <= keep)  # fmt: skip
            samples = made.samples[:keep]
            delivered.append(replace(made, samples=samples, words=words, speculated=True, sentence_end=False,
                                     needs_word=min(made.needs_word, cut_word - 1)))  # fmt: skip
        if not delivered:
            return False
        state.latent = [state.latent_slice(0, cut)]
        state.frames_total, state.emitted_frames = cut, emit
        done = []
        for chunk in state.done:
            kept = [u for u in chunk if u.first_word + len(u.words) <= cut_word]
            if kept:
                done.append(kept)
            if len(kept) < len(chunk):
                break
        state.done = done
        state.next_chunk = len(done)
        state.unit_frames = {w: f for w, f in state.unit_frames.items() if w < cut_word}
        state.words = [*state.words[: speculation.base_words], *came]
        state.hint = []
        state.units_for = ()
        self._sentence = state
        self.speculations_used += 1
        for piece in delivered:
            self._deliver(piece, pieces)
        if came and ends_sentence(came[-1]):
            pieces.extend(self.end_sentence())
        return True

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
        self._sentence = _Sentence(sentence.index + (1 if sentence.words else 0))
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
        self._sentence = _Sentence(self._sentence.index + 1)

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
    def _at_phrase_start(self, sentence: _Sentence) -> bool:
        """The last word spoken ends a phrase inside the sentence ("brow,"), or the voice resumes after going silent
        (``resuming``); never for ``overdue`` words."""
        if not self.sizes.phrase or self.overdue:
            return False
        spoken = sentence.spoken_words
        return 0 < spoken <= len(sentence.words) and (self.resuming or ends_phrase(sentence.words[spoken - 1]))

    def _sizes(self, sentence: _Sentence, phrase_start: bool) -> ChunkSizes:
        """Chunk sizes for what is left of the sentence: its first chunk is a sentence's or, after a phrase's end
        (``phrase_start``), a phrase's first chunk; then later chunks."""
        if not sentence.done:
            return self.sizes
        later = self.sizes.later
        return ChunkSizes(self.sizes.phrase if phrase_start else later, later)

    def _units(self, sentence: _Sentence) -> list[Unit]:
        """Units of the sentence's words and its hint; the word boundaries of units already synthesized never change."""
        hint = [] if sentence.complete else sentence.hint
        key = (len(sentence.words), tuple(hint))
        if sentence.units_for != key:
            words = [*sentence.words, *hint]
            units = self.frontend.units(words)
            frozen_words = sentence.spoken_words
            starts = {u.first_word: i for i, u in enumerate(units)}
            if sentence.frozen and frozen_words not in starts and frozen_words < len(words):
                # a later word merged into a unit already spoken (rare; a hint that was wrong): keep what was
                # spoken and phonemize the rest on its own
                rest = self.frontend.units(words[frozen_words:])
                units = [
                    *sentence.frozen,
                    *(Unit(u.words, u.first_word + frozen_words, u.phonemes, u.ids) for u in rest),
                ]
            sentence.units = units
            sentence.units_for = key
        return sentence.units

    def _chunks(self, sentence: _Sentence, hurry: bool = False) -> tuple[list[list[Unit]], int, int]:
        """The sentence's chunks: those already synthesized, then the rest cut anew (the last ones may hold hint
        words); how many of them hold only fed words; and how many are whole (lookahead counts whole chunks).

        ``hurry``: the fed words not yet spoken go into whole chunks that hold only fed words (with ``urgent`` the
        last one may be short: a piece of a word or two costs more compute than the audio it brings, so it is
        only worth it when the voice would otherwise run out), and the hint words after them are one more chunk,
        as lookahead context only. Chunks after the spoken ones are always cut anew, so a short one changes
        nothing.
        """
        units = self._units(sentence)
        done = sentence.done
        rest = [u for u in units if u.first_word >= sentence.spoken_words]
        phrase_start = self._at_phrase_start(sentence)
        sizes = self._sizes(sentence, phrase_start)
        if sentence.complete:
            chunks = [*done, *chunk_units(rest, sizes, True)]
            return chunks, len(chunks), len(chunks)
        n_words = len(sentence.words)
        final = [u for u in rest if u.first_word + len(u.words) <= n_words]
        context = rest
        if len(final) == len(rest) and not hurry:  # no hint: the last unit may still merge with the next word
            final = context = final[:-1]  # (a hurry speaks it anyway; a word that then merges is phonemized apart)
        if hurry:
            # after a phrase's end the first chunk is a phrase chunk: unless urgent, the voice pauses there
            spoken = chunk_units(final, sizes, self.urgent)
            lookahead = rest[sum(len(c) for c in spoken) :]
            chunks = [*done, *spoken, *([lookahead] if lookahead else [])]
            return chunks, len(done) + len(spoken), len(done) + len(spoken)
        new = chunk_units(context, sizes, False)
        ready = 0
        count = len(final)
        for chunk in new:
            count -= len(chunk)
            if count < 0:
                break
            ready += 1
        return [*done, *new], len(done) + ready, len(done) + len(new)

    def _advance(
        self, hurry: bool = False, sentence: _Sentence | None = None, ahead: bool = False, sentence_start: bool = False
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
        self, hurry: bool, sentence: _Sentence | None, ahead: bool, sentence_start: bool
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
            if self.urgent and sentence.next_chunk >= final and self._merged_with_hint(sentence):
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

    def _merged_with_hint(self, sentence: _Sentence) -> bool:
        """An unspoken fed word is in one unit with a hint word (the phonemizer joined them)."""
        n_words = len(sentence.words)
        if sentence.spoken_words >= n_words:
            return False
        return any(u.first_word < n_words < u.first_word + len(u.words) for u in self._units(sentence))

    def _tail_piece(self, sentence: _Sentence, chunks: list[list[Unit]], pieces: list[AudioPiece]) -> None:
        start = sentence.emitted_frames
        t0 = self._timer()
        samples = self._decode(sentence, last_chunk=True)
        self.last_sentence_latent = sentence.latent_slice(0, sentence.frames_total)
        piece = AudioPiece(
            samples=samples,
            sample_rate=self.voice.sample_rate,
            sentence=sentence.index,
            chunk=sentence.next_chunk,
            words=self._piece_words(sentence, chunks, start, sentence.emitted_frames),
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
        sentence: _Sentence,
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
        self, sentence: _Sentence, chunks: list[list[Unit]], hurried: bool = False, flush: bool = False
    ) -> AudioPiece | None:
        """Stage I on the policy's window, then Stage II. ``flush``: decode the chunk's last δ frames too, with
        the lookahead's latent frames (if any) as right context, instead of holding them for the next piece."""
        index = sentence.next_chunk
        phrase_start = index > 0 and self._at_phrase_start(sentence)
        short = hurried and self.short_hurry_context and hasattr(self.policy, "hurried")
        policy = self.policy.hurried() if short else self.policy
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
        words = self._piece_words(sentence, chunks, piece_start, sentence.emitted_frames)
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

    def _decode(self, sentence: _Sentence, last_chunk: bool, flush_right: np.ndarray | None = None) -> np.ndarray:
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

    def _piece_words(
        self, sentence: _Sentence, chunks: list[list[Unit]], frame_start: int, frame_stop: int
    ) -> tuple[PieceWord, ...]:
        hop = self.voice.hop
        words = []
        for unit in (u for c in chunks for u in c):
            frames = sentence.unit_frames.get(unit.first_word)
            if frames is None:
                continue
            # Words merged into one unit ("in the") share its frames, split evenly; each belongs to the piece its own
            # end falls in. A speculation delivered up to the end of the first of them leaves the second's frames to
            # the next piece, which must not list the first again.
            span = (frames[1] - frames[0]) / len(unit.words)
            for j, text in enumerate(unit.words):
                start = round(frames[0] + j * span)
                stop = round(frames[0] + (j + 1) * span)
                if frame_start < stop <= frame_stop:
                    rate = sentence.unit_rates.get(unit.first_word, 1.0)
                    words.append(PieceWord(sentence.index, unit.first_word + j, text, (start - frame_start) * hop,
                                           (stop - frame_start) * hop, rate))  # fmt: skip
        return tuple(words)


def synthesize_text(synthesizer: IncrementalSynthesizer, text: str) -> tuple[np.ndarray, list[AudioPiece]]:
    """All input available: feed the whole text, flush, and join the pieces (for tests, benchmarks, quality)."""
    pieces = synthesizer.feed(text) + synthesizer.flush()
    audio = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
    return audio, pieces


def _starts_with(tokens: Sequence[str], assumed: Sequence[str]) -> bool:
    """``tokens`` begin with the ``assumed`` words, up to case and punctuation."""
    return _common_prefix(tokens, assumed) == len(assumed)


def _common_prefix(tokens: Sequence[str], assumed: Sequence[str]) -> int:
    """How many of the ``assumed`` words ``tokens`` begin with, up to case and punctuation."""
    count = 0
    for a, t in zip(assumed, tokens, strict=False):
        if _bare(a) != _bare(t):
            break
        count += 1
    return count


def _bare(word: str) -> str:
    return "".join(c for c in word.lower() if c.isalnum() or c == "'").strip("'")


def _tokens(words: Sequence[str] | str) -> list[str]:
    return split_words(words) if isinstance(words, str) else [t for w in words for t in split_words(w)]


def _sentence_part(tokens: list[str]) -> list[str]:
    """The tokens up to and including the first that ends a sentence."""
    for i, token in enumerate(tokens):
        if ends_sentence(token):
            return tokens[: i + 1]
    return tokens
