"""Speculation: pieces made ahead for the recognizer's tentative words while the voice is about to run out, and
what is delivered of them when the next words come (all of them, the first of them, or none).

A word committed just before the voice runs out cannot be synthesized in time (Stage I takes longer than what is
left to play); the recognizer's tentative words are usually the next ones it commits. ``IncrementalSynthesizer``
makes the pieces (``speculate``); this module chooses the words and cuts the pieces when only some of them came.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.tts.frontend import Unit, ends_sentence, split_words
from engine.tts.pieces import AudioPiece, PieceWord
from engine.tts.sentence_state import SentenceState

# A speculation cut at a word's end (``cut_speculation``) keeps back this many of the word's last frames for the next
# piece to decode again when other words follow at once: the cut piece decoded them with the unconfirmed next word's
# frames as right context; decoded again with the right ones, the seam is 40-53 dB from a one-shot decode (cut at
# the word's end: 10-25 dB). With nothing to follow at once they are not kept back: the voice would stop mid-word.
CUT_HOLD_FRAMES = 6
# A tentative word with more phonemes than this is not made ahead: the longest real ones, numbers, have 30-50
# ("627,000" 34, "2020-2021" 46); a decoding loop joined into one word had 216, and its piece took 2.5 s.
MAX_AHEAD_PHONEMES = 64


@dataclass
class Speculation:
    """Pieces made ahead for words not fed yet, and the sentence as it will be if those words come."""

    base: SentenceState  # the sentence it was made from, unchanged since
    base_words: int
    assumed: tuple[str, ...]
    state: SentenceState
    pieces: list[AudioPiece]


def assumed_words(sentence: SentenceState, units: Sequence[Unit], needed: int) -> tuple[str, ...]:
    """The hint words to make ahead: up to a whole chunk (``needed`` phonemes; a piece of one short word, "the",
    brings less audio than the next piece takes to make), but never the last hint word, which stays lookahead,
    unless it is the only one. Empty when no unit holds a hint word."""
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
        return ()
    return tuple(sentence.hint[: end - len(sentence.words)])


def confirmed(speculation: Speculation, came: Sequence[str]) -> list[AudioPiece]:
    """Every word made ahead came: its pieces, with the words as committed (punctuation may differ a little)."""
    texts = dict(enumerate(came, start=speculation.base_words))
    return [replace(made, words=_renamed(made.words, texts), speculated=True) for made in speculation.pieces]


def cut_speculation(
    speculation: Speculation, came: list[str], hop: int, more: bool = False
) -> tuple[SentenceState, list[AudioPiece]] | None:
    """The recognizer committed only the first of the words made ahead ("lusty" of "lusty days"): the speculation's
    audio up to the end of the last of them, and the sentence as it is then, if a unit ends there (the phonemizer
    may have joined it to the next word); None if not. ``more``: other words follow at once.

    The speculation was made in one piece to keep its compute low; the audio cut at a word's end was decoded with
    the next (unconfirmed) word's frames as right context, so the seam with the next piece is not exact, a small cost
    next to a gap."""
    state = speculation.state
    cut_word = speculation.base_words + len(came)
    ends = {u.first_word + len(u.words): u for chunk in state.done for u in chunk}
    unit = ends.get(cut_word)
    frames = state.unit_frames.get(unit.first_word) if unit is not None else None
    if frames is None or frames[1] <= speculation.pieces[0].frame_start:
        return None
    cut = frames[1]
    emit = max(cut - (CUT_HOLD_FRAMES if more else 0), speculation.pieces[0].frame_start)
    texts = dict(enumerate(came, start=speculation.base_words))
    delivered = []
    for made in speculation.pieces:
        start = made.frame_start
        if start >= emit:
            break
        keep = min(made.samples.size, (emit - start) * hop)
        kept = tuple(w for w in made.words if w.index < cut_word and w.end_sample <= keep)
        delivered.append(
            replace(
                made,
                samples=made.samples[:keep],
                words=_renamed(kept, texts),
                speculated=True,
                sentence_end=False,
                needs_word=min(made.needs_word, cut_word - 1),
            )
        )
    if not delivered:
        return None
    state.latent = [state.latent_slice(0, cut)]
    state.frames_total, state.emitted_frames = cut, emit
    done = []
    for chunk in state.done:
        kept_units = [u for u in chunk if u.first_word + len(u.words) <= cut_word]
        if kept_units:
            done.append(kept_units)
        if len(kept_units) < len(chunk):
            break
    state.done = done
    state.next_chunk = len(done)
    state.unit_frames = {w: f for w, f in state.unit_frames.items() if w < cut_word}
    state.words = [*state.words[: speculation.base_words], *came]
    state.hint = []
    state.units_for = ()
    return state, delivered


def starts_with(tokens: Sequence[str], assumed: Sequence[str]) -> bool:
    """``tokens`` begin with the ``assumed`` words, up to case and punctuation."""
    return common_prefix(tokens, assumed) == len(assumed)


def common_prefix(tokens: Sequence[str], assumed: Sequence[str]) -> int:
    """How many of the ``assumed`` words ``tokens`` begin with, up to case and punctuation."""
    count = 0
    for a, t in zip(assumed, tokens, strict=False):
        if _bare(a) != _bare(t):
            break
        count += 1
    return count


def tokens_of(words: Sequence[str] | str) -> list[str]:
    return split_words(words) if isinstance(words, str) else [t for w in words for t in split_words(w)]


def sentence_part(tokens: list[str]) -> list[str]:
    """The tokens up to and including the first that ends a sentence."""
    for i, token in enumerate(tokens):
        if ends_sentence(token):
            return tokens[: i + 1]
    return tokens


def _renamed(words: Sequence[PieceWord], texts: dict[int, str]) -> tuple[PieceWord, ...]:
    """``words`` with the texts that came in place of those assumed (by word index)."""
    return tuple(replace(w, text=texts.get(w.index, w.text)) for w in words)


def _bare(word: str) -> str:
    return "".join(c for c in word.lower() if c.isalnum() or c == "'").strip("'")
