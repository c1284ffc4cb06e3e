"""The spoken languages offered for interpreting (Whisper knows ~100; these are the ones listed first)."""

from __future__ import annotations

# code → English name; Whisper's codes. Any other code Whisper knows is accepted on the command line.
COMMON_LANGUAGES = {
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "pt": "Portuguese",
    "it": "Italian",
    "nl": "Dutch",
    "pl": "Polish",
    "ru": "Russian",
    "uk": "Ukrainian",
    "tr": "Turkish",
    "ar": "Arabic",
    "hi": "Hindi",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "vi": "Vietnamese",
    "id": "Indonesian",
    "sv": "Swedish",
    "cs": "Czech",
    "el": "Greek",
}


def language_name(code: str | None) -> str:
    if code is None:
        return "not detected yet"
    return COMMON_LANGUAGES.get(code, code)


def whisper_knows(code: str) -> bool:
    """Whether Whisper transcribes ``code`` (its tokenizer's list; any code when that list cannot be read)."""
    try:
        from faster_whisper.tokenizer import _LANGUAGE_CODES  # the list has no public name
    except ImportError:
        return True
    return code in _LANGUAGE_CODES
