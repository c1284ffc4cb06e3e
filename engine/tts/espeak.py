"""espeak-ng as bundled with piper-tts, with its voice selected only when it changes.

piper's ``EspeakPhonemizer.phonemize`` selects the voice on every call, and espeak-ng keeps ~1.4 kB each time a
voice is selected (measured: +27 MB of resident memory over 20 000 selections). The front end phonemizes every
prefix of a sentence as its words arrive, so over a long session that was a steady leak. espeak-ng's state is
global to the process: one lock and one selected voice for every caller.
"""

from __future__ import annotations

import re
import threading
import unicodedata

_lock = threading.Lock()
_initialized = False
_selected_voice: str | None = None
_LANGUAGE_SWITCH = re.compile(r"\([^)]+\)")  # "(fr)" … "(en)" around words espeak reads in another language
_CLAUSE_PAUSES = (",", ":", ";")  # a clause ending in one of these is followed by a space within its sentence


def phonemize(voice: str, text: str) -> list[list[str]]:
    """``text`` as phoneme symbols grouped by sentence.

    Each clause's phonemes (language-switch marks removed) are followed by its punctuation, and by a space when that
    punctuation does not end the sentence; symbols are Unicode code points after NFD decomposition, so an accent is
    a symbol of its own, as the voices expect.
    """
    from piper import espeakbridge
    from piper.phonemize_espeak import ESPEAK_DATA_DIR

    global _initialized, _selected_voice
    with _lock:
        if not _initialized:
            espeakbridge.initialize(str(ESPEAK_DATA_DIR))
            _initialized = True
        if voice != _selected_voice:
            espeakbridge.set_voice(voice)
            _selected_voice = voice
        clauses = espeakbridge.get_phonemes(text)
    sentences: list[list[str]] = []
    current: list[str] = []
    for phonemes, terminator, ends_sentence in clauses:
        clause = _LANGUAGE_SWITCH.sub("", phonemes) + terminator
        if terminator in _CLAUSE_PAUSES:
            clause += " "
        current.extend(unicodedata.normalize("NFD", clause))
        if ends_sentence:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences
