"""After a recorded session: its whole recording recognized again, for the session's captions and transcript.

While the speaker talks, the recognizer decodes short windows and commits words within a second; the same model
decoding the whole recording afterwards hears more of them right (``bench asr``: ``windowed_offline`` against
``la2``). The voice has spoken the live words by then, but the files a user keeps need not stay with them: this pass
writes ``whole_pass.jsonl`` (its words with their times in the recording) into the session folder, and
``captions.write_captions`` then takes ``heard.srt``/``heard.vtt``/``transcript.txt`` from it and keeps the live
words as ``committed.srt``/``committed.vtt``. The pass is liveshadow's own whole pass (``asr.offline.transcribe_long``)
with the session's recognizer (for Whisper transcribing English: the stock decode, timed).

Not passed again: a session heard through the speakers (its ``input.wav`` is the microphone before the echo guard,
the voice's echo in it), an interpreted one (``INTERPRETED``) and one recognized by vosk (not measured).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from engine.asr.backend import SAMPLE_RATE, AsrBackend
from engine.asr.offline import transcribe_long
from engine.asr.words import Word
from engine.audio.io import load_audio
from engine.pipeline.captions import WHOLE_PASS, write_captions
from engine.pipeline.recorder import INPUT_WAV, REPORT

log = logging.getLogger(__name__)


# On ``../shared/speech-xx`` the whole recordings translated again scored more BLEU than la2's live English on both
# parts (24.3 against 19.1-20.2 chosen, 25.0 against 19.4-24.2 held back) but less chrF on the held-back fifth (44.4
# against 45.0-48.3): not better on every measure, so an interpreted session keeps its live English.
INTERPRETED = "an interpreted session keeps the English it committed live"


class WholePassError(RuntimeError):
    """The session's recording cannot be passed again (why, in words for the window)."""


class WholePassSkipped(WholePassError):
    """The session is not one the pass is for (``skip_reason``): nothing went wrong, nothing is written."""


class WholePassStopped(Exception):
    """Raised through the decode when the caller asked the pass to stop; nothing is written."""


def skip_reason(folder: Path) -> str | None:
    """Why the whole recording of the session in ``folder`` is not recognized again, or None when it can be."""
    wav = folder / INPUT_WAV
    if not wav.is_file() or wav.stat().st_size <= 44:
        return "nothing was recorded"
    try:
        config = json.loads((folder / REPORT).read_text(encoding="utf-8")).get("config", {})
    except (OSError, ValueError):
        config = {}  # a session cut short has no report: its recording is what it is
    if config.get("echo_guard", "off") != "off":
        return "the recording holds the voice's echo (the speakers route)"
    if config.get("translate_from"):
        return INTERPRETED
    if config.get("backend", "whisper") != "whisper":
        return "only Whisper's whole pass is measured against its live words"
    return None


def run_whole_pass(
    folder: Path,
    backend: AsrBackend,
    progress: Callable[[float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Word]:
    """Recognize ``folder``'s ``input.wav`` with ``backend``, write ``whole_pass.jsonl`` and the captions from it;
    returns the pass's words. ``progress`` hears the share done; ``should_stop`` is asked as often, and when it says
    yes the pass ends with ``WholePassStopped``, the folder as it was. Raises ``WholePassSkipped`` for a session the
    pass is not for (``skip_reason``), ``WholePassError`` when its recording cannot be read."""
    reason = skip_reason(folder)
    if reason is not None:
        raise WholePassSkipped(f"the whole recording is not recognized again: {reason}")
    try:
        audio = load_audio(folder / INPUT_WAV, SAMPLE_RATE)
    except (OSError, ValueError) as exc:
        raise WholePassError(f"cannot read the session's recording: {exc}") from exc

    def heard(share: float) -> None:
        if should_stop is not None and should_stop():
            raise WholePassStopped
        if progress is not None:
            progress(share)

    heard(0.0)
    words = transcribe_long(backend, audio, progress=heard)
    path = folder / WHOLE_PASS
    partial = path.with_name(path.name + ".part")
    header = {
        "event": "whole_pass",
        "audio_s": round(audio.size / SAMPLE_RATE, 3),
        "task": getattr(backend, "task", "transcribe"),
        "language": getattr(backend, "language", None),
    }
    lines = [header] + [{"text": w.text, "start_s": round(w.start_s, 3), "end_s": round(w.end_s, 3)} for w in words]
    with open(partial, "w", encoding="utf-8") as stream:
        stream.writelines(json.dumps(line) + "\n" for line in lines)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(partial, path)  # whole or not at all: the captions never read half a pass
    log.info("the whole recording of %s recognized again: %d words", folder, len(words))
    if progress is not None:
        progress(1.0)
    write_captions(folder)
    return words
