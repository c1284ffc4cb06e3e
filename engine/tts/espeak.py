"""espeak-ng as bundled with piper-tts, called so that a long session does not leak.

piper's phonemizer leaks on every call, in two ways (measured in loops of 20 000 calls): it selects the voice each
time, and espeak-ng keeps ~1.4 kB per selection (+27 MB); and its bridge's ``get_phonemes`` keeps one reference too
many to each clause it returns, so every result stays in memory (~0.4 kB a call, +7 MB). The front end phonemizes
every prefix of a sentence as its words arrive (~240 calls a minute in a session). Here the voice is selected only
when it changes, and clauses come from espeak-ng's own C function ``espeak_TextToPhonemesWithTerminator``, which the
bridge's library exports, through ctypes (flat over 60 000 calls). espeak-ng's state is global to the process: one
lock and one selected voice for every caller.
"""

from __future__ import annotations

import ctypes
import re
import threading
import unicodedata
from pathlib import Path

_lock = threading.Lock()
_library: ctypes.CDLL | None = None
_selected_voice: str | None = None
# espeak-ng's phoneme tables and the English dictionary (the other languages' files are optional)
REQUIRED_DATA = ("phontab", "phonindex", "phondata", "intonations", "en_dict")
_LANGUAGE_SWITCH = re.compile(r"\([^)]+\)")  # "(fr)" … "(en)" around words espeak reads in another language

_TEXT_AUTO = 0  # espeakCHARS_AUTO: UTF-8 text
_PHONEMES_IPA = 0x02
_CLAUSE_BITS = 0x000FFFFF  # the terminator's clause description (pause, intonation, type)
_SENTENCE = 0x00080000  # the clause ends a sentence
_CLAUSE = 0x00040000  # the clause ends within its sentence
_FULL_STOP, _COMMA, _QUESTION, _EXCLAMATION = 0x0000, 0x1000, 0x2000, 0x3000  # intonation
# clause descriptions espeak-ng gives for punctuation the voices know (pause in 10 ms units | intonation | type)
_PUNCTUATION = {
    40 | _FULL_STOP | _SENTENCE: ".",
    40 | _QUESTION | _SENTENCE: "?",
    45 | _EXCLAMATION | _SENTENCE: "!",
    20 | _COMMA | _CLAUSE: ",",
    30 | _FULL_STOP | _CLAUSE: ":",
    30 | _COMMA | _CLAUSE: ";",
}
_CLAUSE_PAUSES = (",", ":", ";")  # a clause ending in one of these is followed by a space within its sentence


class PhonemizerError(RuntimeError):
    """espeak-ng or its data is missing or broken."""


def data_dir() -> Path:
    """espeak-ng's data folder (inside the piper package), checked: without ``phontab`` espeak-ng ends the process
    with exit code 1 and no message."""
    from piper.phonemize_espeak import ESPEAK_DATA_DIR

    path = Path(ESPEAK_DATA_DIR)
    for name in REQUIRED_DATA:
        if not (path / name).is_file():
            raise PhonemizerError(f"espeak-ng data file missing: {path / name}; reinstall liveshadow")
    return path


def _load() -> ctypes.CDLL:
    from piper import espeakbridge

    espeakbridge.initialize(str(data_dir()))
    library = ctypes.CDLL(espeakbridge.__file__)  # the same loaded library, so the same espeak-ng state
    function = library.espeak_TextToPhonemesWithTerminator
    function.restype = ctypes.c_char_p
    function.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    return library


def _clauses(library: ctypes.CDLL, text: str) -> list[tuple[str, int]]:
    """espeak-ng's clauses of ``text``: phonemes and terminator. Call with the lock held."""
    buffer = ctypes.create_string_buffer(text.encode("utf-8"))
    position = ctypes.c_void_p(ctypes.addressof(buffer))  # espeak-ng moves it clause by clause, NULL at the end
    terminator = ctypes.c_int(0)
    clauses = []
    while position.value:
        phonemes = library.espeak_TextToPhonemesWithTerminator(
            ctypes.byref(position), _TEXT_AUTO, _PHONEMES_IPA, ctypes.byref(terminator)
        )
        clauses.append(((phonemes or b"").decode("utf-8"), terminator.value & _CLAUSE_BITS))
    return clauses


def phonemize(voice: str, text: str) -> list[list[str]]:
    """``text`` as phoneme symbols grouped by sentence.

    Each clause's phonemes (language-switch marks removed) are followed by its punctuation, and by a space when that
    punctuation does not end the sentence; symbols are Unicode code points after NFD decomposition, so an accent is
    a symbol of its own, as the voices expect.
    """
    global _library, _selected_voice
    with _lock:
        if _library is None:
            _library = _load()
        if voice != _selected_voice:
            from piper import espeakbridge

            espeakbridge.set_voice(voice)
            _selected_voice = voice
        clauses = _clauses(_library, text)
    sentences: list[list[str]] = []
    current: list[str] = []
    for phonemes, terminator in clauses:
        punctuation = _PUNCTUATION.get(terminator, "")
        clause = _LANGUAGE_SWITCH.sub("", phonemes) + punctuation
        if punctuation in _CLAUSE_PAUSES:
            clause += " "
        current.extend(unicodedata.normalize("NFD", clause))
        if terminator & _SENTENCE:
            sentences.append(current)
            current = []
    if current:
        sentences.append(current)
    return sentences
