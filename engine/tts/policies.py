"""When a chunk may be synthesized and with what context: the TTS policy interface and its baselines.

A policy sees the sentence's chunks so far and says (1) whether chunk ``i`` can be synthesized now and (2) which
units Stage I reads for it. ``lookahead`` is Ma et al.'s prefix-to-prefix policy; ``full`` and ``naive`` are the
two baselines. The READ/SPEAK driver's ``AgentPolicy`` implements the same interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from engine.tts.frontend import Unit

# Stage I reads this much of the sentence before a chunk. The more it reads, the closer the chunk sounds to the
# whole sentence synthesized at once (bench tts, word_distance_db for k=1: 24 phonemes 5.9 dB, 96 4.5 dB, 160 4.1 dB,
# the whole prefix 3.8 dB); the cap keeps each chunk's cost bounded on run-on sentences.
DEFAULT_LEFT_CONTEXT_PHONEMES = 160
# A hurried chunk (the voice is about to run out) reads less: Stage I costs ~0.75 ms per phoneme it reads, and a
# one-word chunk read with 160 phonemes before it takes longer to make than it lasts.
HURRY_LEFT_CONTEXT_PHONEMES = 48


@dataclass(frozen=True, slots=True)
class Window:
    """What Stage I reads for one chunk: left context, the chunk, lookahead; and whether BOS/EOS frame it."""

    left: tuple[Unit, ...]
    chunk: tuple[Unit, ...]
    right: tuple[Unit, ...]
    at_start: bool  # the window starts the sentence (BOS)
    at_end: bool  # the window ends the sentence (EOS)


class TtsPolicy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def overlap_decode(self) -> bool:
        """Stage II in hold mode with δ overlap (else each chunk is decoded alone)."""
        ...

    @property
    def one_piece_per_sentence(self) -> bool: ...

    def ready(self, index: int, available: int, complete: bool) -> bool:
        """May chunk ``index`` be synthesized, with ``available`` chunks known (and the sentence complete?)"""
        ...

    def window(self, chunks: Sequence[Sequence[Unit]], index: int, complete: bool) -> Window: ...


def _left_context(chunks: Sequence[Sequence[Unit]], index: int, phonemes: int) -> tuple[Unit, ...]:
    """The fewest whole units before chunk ``index`` with at least ``phonemes`` phonemes (or all there are)."""
    before = [u for chunk in chunks[:index] for u in chunk]
    taken: list[Unit] = []
    count = 0
    for unit in reversed(before):
        if count >= phonemes:
            break
        taken.append(unit)
        count += unit.n_phonemes
    return tuple(reversed(taken))


@dataclass(frozen=True)
class LookaheadPolicy:
    """Stage I reads the chunk, ``k`` lookahead chunks and ≥ ``left_context`` phonemes before it."""

    k: int = 1
    left_context: int = DEFAULT_LEFT_CONTEXT_PHONEMES
    overlap_decode: bool = True
    one_piece_per_sentence: bool = False
    hurry_left_context: int = HURRY_LEFT_CONTEXT_PHONEMES

    def __post_init__(self) -> None:
        if self.k < 0 or self.left_context < 0 or self.hurry_left_context < 0:
            raise ValueError(
                f"k and left contexts must be non-negative (got {self.k}, {self.left_context}, "
                f"{self.hurry_left_context})"
            )

    def hurried(self) -> LookaheadPolicy:
        """The policy for a chunk made in a hurry: the shorter left context."""
        return replace(self, left_context=min(self.left_context, self.hurry_left_context))

    @property
    def name(self) -> str:
        return f"lookahead-{self.k}"

    def ready(self, index: int, available: int, complete: bool) -> bool:
        return index < available and (complete or index + self.k < available)

    def window(self, chunks: Sequence[Sequence[Unit]], index: int, complete: bool) -> Window:
        left = _left_context(chunks, index, self.left_context)
        right = tuple(u for chunk in chunks[index + 1 : index + 1 + self.k] for u in chunk)
        before = sum(len(c) for c in chunks[:index])
        return Window(
            left=left,
            chunk=tuple(chunks[index]),
            right=right,
            at_start=len(left) == before,
            at_end=complete and index + self.k >= len(chunks) - 1,
        )


@dataclass(frozen=True)
class NaivePolicy:
    """Each chunk synthesized alone, as if it were a sentence: the lower baseline."""

    name: str = "naive"
    overlap_decode: bool = False
    one_piece_per_sentence: bool = False

    def ready(self, index: int, available: int, complete: bool) -> bool:
        return index < available

    def window(self, chunks: Sequence[Sequence[Unit]], index: int, complete: bool) -> Window:
        return Window((), tuple(chunks[index]), (), at_start=True, at_end=True)


@dataclass(frozen=True)
class FullSentencePolicy:
    """Wait for the whole sentence and synthesize it at once: the quality reference and the latency baseline."""

    name: str = "full"
    overlap_decode: bool = True
    one_piece_per_sentence: bool = True

    def ready(self, index: int, available: int, complete: bool) -> bool:
        return complete and index < available

    def window(self, chunks: Sequence[Sequence[Unit]], index: int, complete: bool) -> Window:
        units = tuple(u for chunk in chunks[index:] for u in chunk)
        return Window((), units, (), at_start=index == 0, at_end=True)


def make_policy(name: str, k: int = 1, left_context: int = DEFAULT_LEFT_CONTEXT_PHONEMES) -> TtsPolicy:
    """``lookahead`` (with k), ``lookahead-K``, ``full`` or ``naive``."""
    if name == "lookahead":
        return LookaheadPolicy(k=k, left_context=left_context)
    if name.startswith("lookahead-") and name.split("-", 1)[1].isdigit():
        return LookaheadPolicy(k=int(name.split("-", 1)[1]), left_context=left_context)
    if name == "full":
        return FullSentencePolicy()
    if name == "naive":
        return NaivePolicy()
    raise ValueError(f"unknown TTS policy {name!r}: use lookahead, lookahead-K, full or naive")
