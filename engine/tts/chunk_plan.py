"""Chunk planning: how the incremental synthesizer cuts what is left of a sentence into chunks, and which of them
may be made now, given how pressed the voice is (``Urgency``, the worker's to say for each command)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.tts.chunker import ChunkSizes, chunk_units
from engine.tts.frontend import FrontEnd, Unit, ends_phrase
from engine.tts.sentence_state import SentenceState


@dataclass(frozen=True, slots=True)
class Urgency:
    """How pressed the voice is, for one command."""

    # the voice has gone silent mid-sentence, so it resumes as after a comma, with a whole phrase chunk of final
    # words, instead of word by word with nothing in hand
    resuming: bool = False
    overdue: bool = False  # fed words have waited too long (``worker.MAX_WAIT_S``): no phrase wait at all
    # the voice will run out before the next command could help: a hurry also makes a last chunk shorter than the
    # chunk size, after a phrase's end too (pausing at a comma whose next words are in is a gap, not a pause)
    urgent: bool = False
    # a hurried piece reads the policy's shorter left context (compute matters when the voice runs out); a learned
    # policy's early move (``learned.moves.NOW``) is made with the whole one
    short_context: bool = True


CALM = Urgency()
URGENT = Urgency(urgent=True)


def at_phrase_start(sentence: SentenceState, sizes: ChunkSizes, urgency: Urgency) -> bool:
    """The last word spoken ends a phrase inside the sentence ("brow,"), or the voice resumes after going silent
    (``resuming``); never for ``overdue`` words."""
    if not sizes.phrase or urgency.overdue:
        return False
    spoken = sentence.spoken_words
    return 0 < spoken <= len(sentence.words) and (urgency.resuming or ends_phrase(sentence.words[spoken - 1]))


def sizes_for(sentence: SentenceState, sizes: ChunkSizes, phrase_start: bool) -> ChunkSizes:
    """Chunk sizes for what is left of the sentence: its first chunk is a sentence's or, after a phrase's end
    (``phrase_start``), a phrase's first chunk; then later chunks."""
    if not sentence.done:
        return sizes
    later = sizes.later
    return ChunkSizes(sizes.phrase if phrase_start else later, later)


def sentence_units(sentence: SentenceState, frontend: FrontEnd) -> list[Unit]:
    """Units of the sentence's words and its hint; the word boundaries of units already synthesized never change."""
    hint = [] if sentence.complete else sentence.hint
    key = (len(sentence.words), tuple(hint))
    if sentence.units_for != key:
        words = [*sentence.words, *hint]
        units = frontend.units(words)
        frozen_words = sentence.spoken_words
        starts = {u.first_word: i for i, u in enumerate(units)}
        if sentence.frozen and frozen_words not in starts and frozen_words < len(words):
            # a later word merged into a unit already spoken (rare; a hint that was wrong): keep what was
            # spoken and phonemize the rest on its own
            rest = frontend.units(words[frozen_words:])
            units = [
                *sentence.frozen,
                *(Unit(u.words, u.first_word + frozen_words, u.phonemes, u.ids) for u in rest),
            ]
        sentence.units = units
        sentence.units_for = key
    return sentence.units


def plan_chunks(
    sentence: SentenceState, frontend: FrontEnd, sizes: ChunkSizes, urgency: Urgency, hurry: bool = False
) -> tuple[list[list[Unit]], int, int]:
    """The sentence's chunks: those already synthesized, then the rest cut anew (the last ones may hold hint
    words); how many of them hold only fed words; and how many are whole (lookahead counts whole chunks).

    ``hurry``: the fed words not yet spoken go into whole chunks that hold only fed words (with ``urgent`` the
    last one may be short: a piece of a word or two costs more compute than the audio it brings, so it is
    only worth it when the voice would otherwise run out), and the hint words after them are one more chunk,
    as lookahead context only. Chunks after the spoken ones are always cut anew, so a short one changes
    nothing.
    """
    units = sentence_units(sentence, frontend)
    done = sentence.done
    rest = [u for u in units if u.first_word >= sentence.spoken_words]
    left = sizes_for(sentence, sizes, at_phrase_start(sentence, sizes, urgency))
    if sentence.complete:
        chunks = [*done, *chunk_units(rest, left, True)]
        return chunks, len(chunks), len(chunks)
    n_words = len(sentence.words)
    final = [u for u in rest if u.first_word + len(u.words) <= n_words]
    context = rest
    if len(final) == len(rest) and not hurry:  # no hint: the last unit may still merge with the next word
        final = context = final[:-1]  # (a hurry speaks it anyway; a word that then merges is phonemized apart)
    if hurry:
        # after a phrase's end the first chunk is a phrase chunk: unless urgent, the voice pauses there
        spoken = chunk_units(final, left, urgency.urgent)
        lookahead = rest[sum(len(c) for c in spoken) :]
        chunks = [*done, *spoken, *([lookahead] if lookahead else [])]
        return chunks, len(done) + len(spoken), len(done) + len(spoken)
    new = chunk_units(context, left, False)
    ready = 0
    count = len(final)
    for chunk in new:
        count -= len(chunk)
        if count < 0:
            break
        ready += 1
    return [*done, *new], len(done) + ready, len(done) + len(new)


def merged_with_hint(sentence: SentenceState, frontend: FrontEnd) -> bool:
    """An unspoken fed word is in one unit with a hint word (the phonemizer joined them)."""
    n_words = len(sentence.words)
    if sentence.spoken_words >= n_words:
        return False
    return any(u.first_word < n_words < u.first_word + len(u.words) for u in sentence_units(sentence, frontend))
