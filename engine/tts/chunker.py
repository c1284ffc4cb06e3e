"""Chunks: minimal runs of whole units with at least ``l`` phonemes (the first chunk of a sentence ``l0``, the first
after a phrase's end inside a sentence ``phrase``).

Ma et al. 2020 synthesize chunk by chunk; a chunk never splits a unit, so every word's audio comes from one chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.tts.frontend import Unit

DEFAULT_FIRST_CHUNK_PHONEMES = 18
DEFAULT_CHUNK_PHONEMES = 12


@dataclass(frozen=True, slots=True)
class ChunkSizes:
    first: int = DEFAULT_FIRST_CHUNK_PHONEMES
    later: int = DEFAULT_CHUNK_PHONEMES
    phrase: int = 0  # 0: a phrase's end inside a sentence is not a place to pause

    def __post_init__(self) -> None:
        if self.first < 1 or self.later < 1 or self.phrase < 0:
            raise ValueError(
                f"chunk sizes must be at least one phoneme (got {self.first}, {self.later}, phrase {self.phrase})"
            )


def chunk_units(units: Sequence[Unit], sizes: ChunkSizes, sentence_complete: bool) -> list[list[Unit]]:
    """Cut units into chunks. Without the sentence's end, a last run that is still too short is not a chunk yet
    (it is left out, to be completed by later words); at the sentence's end it becomes the final chunk."""
    chunks: list[list[Unit]] = []
    current: list[Unit] = []
    count = 0
    for unit in units:
        current.append(unit)
        count += unit.n_phonemes
        if count >= (sizes.first if not chunks else sizes.later):
            chunks.append(current)
            current, count = [], 0
    if current and sentence_complete:
        chunks.append(current)
    return chunks
