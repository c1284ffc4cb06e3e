"""Captions and plain text of a recorded session: what was heard and what the voice said.

Written from the session folder's ``transcript.jsonl`` after the session ends (and for any past session), so a
session's files are never held in memory while it runs:

- ``heard.srt`` / ``heard.vtt``: the committed words at the times they were said in the source;
- ``spoken.srt`` / ``spoken.vtt``: the words the voice said, at the times it said them (session clock);
- ``transcript.txt``: the committed words as plain text, a sentence a line.

When the session's whole recording has been recognized again (``whole_pass.py``: ``whole_pass.jsonl`` in the folder),
``heard.*`` and ``transcript.txt`` take that pass's words, and the live words are kept as ``committed.srt`` /
``committed.vtt``.

A cue ends at a sentence end, at a pause between words, or when its lines are full (``LINE_CHARS`` characters a
line, ``CUE_LINES`` lines), as subtitling guides ask.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import srt
import webvtt

from engine.tts.frontend import ends_sentence

log = logging.getLogger(__name__)

LINE_CHARS = 42
CUE_LINES = 2
PAUSE_S = 1.2  # a silence this long between two words starts a new cue
MIN_CUE_S = 0.5  # a cue shorter than this is shown until this long (a player may skip shorter ones)
HEARD = "heard"
SPOKEN = "spoken"
COMMITTED = "committed"
TRANSCRIPT_TXT = "transcript.txt"
WHOLE_PASS = "whole_pass.jsonl"


@dataclass(frozen=True)
class TimedWord:
    text: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Cue:
    start_s: float
    end_s: float
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _lines(words: Sequence[str], width: int) -> list[str]:
    """Words wrapped into lines of at most ``width`` characters (a longer word stands alone)."""
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def cues(words: Sequence[TimedWord], line_chars: int = LINE_CHARS, cue_lines: int = CUE_LINES) -> list[Cue]:
    """Cues over ``words`` (in time order): cut at sentence ends, pauses and full lines; never overlapping."""
    result: list[Cue] = []
    group: list[TimedWord] = []

    def close() -> None:
        if group:
            start = max(group[0].start_s, result[-1].end_s) if result else group[0].start_s
            result.append(Cue(start, max(group[-1].end_s, start), tuple(_lines([w.text for w in group], line_chars))))
            group.clear()

    for word in words:
        if group:
            paused = word.start_s - group[-1].end_s >= PAUSE_S
            full = len(_lines([w.text for w in group] + [word.text], line_chars)) > cue_lines
            if paused or full:
                close()
        group.append(word)
        if ends_sentence(word.text):
            close()
    close()
    # a short cue is held to MIN_CUE_S, but never into the next one
    starts = [c.start_s for c in result[1:]] + [math.inf] if result else []
    return [
        replace(c, end_s=min(max(c.end_s, c.start_s + MIN_CUE_S), after))
        for c, after in zip(result, starts, strict=True)
    ]


def _delta(seconds: float) -> dt.timedelta:
    return dt.timedelta(seconds=max(seconds, 0.0))


def _vtt_time(seconds: float) -> str:
    ms = int(round(max(seconds, 0.0) * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def srt_text(items: Iterable[Cue]) -> str:
    subtitles = [srt.Subtitle(i + 1, _delta(c.start_s), _delta(c.end_s), c.text) for i, c in enumerate(items)]
    return srt.compose(subtitles, reindex=False)


def vtt_text(items: Iterable[Cue]) -> str:
    captions = [webvtt.Caption(start=_vtt_time(c.start_s), end=_vtt_time(c.end_s), text=c.text) for c in items]
    return webvtt.WebVTT(captions=captions).content


def read_transcript(path: Path) -> tuple[list[dict], list[dict]]:
    """(committed, spoken) word events of a session's ``transcript.jsonl``; a line cut short by a crash is skipped."""
    committed: dict[tuple[int, int], dict] = {}
    spoken: dict[tuple[int, int], dict] = {}
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            try:
                event = json.loads(line)
                key = (int(event["sentence"]), int(event["index"]))
            except (ValueError, KeyError, TypeError):
                log.warning("%s line %d is not a word event; skipped", path, number)
                continue
            if event.get("event") == "committed":
                committed[key] = event
            elif event.get("event") == "spoken":
                spoken[key] = event
    order = sorted(committed, key=lambda k: (committed[k]["source_start_s"], k))
    return [committed[k] for k in order], sorted(spoken.values(), key=lambda e: e["speak_start_s"])


def heard_words(committed: Iterable[dict]) -> list[TimedWord]:
    return [TimedWord(e["text"], float(e["source_start_s"]), float(e["source_end_s"])) for e in committed]


def spoken_words(spoken: Iterable[dict]) -> list[TimedWord]:
    return [
        TimedWord(e["text"], float(e["speak_start_s"]), float(e["speak_end_s"]))
        for e in spoken
        if e.get("speak_start_s") is not None and e.get("speak_end_s") is not None
    ]


def plain_text(words: Iterable[TimedWord]) -> str:
    """The words as text, a sentence a line."""
    lines: list[list[str]] = [[]]
    for word in words:
        lines[-1].append(word.text)
        if ends_sentence(word.text):
            lines.append([])
    return "".join(" ".join(line) + "\n" for line in lines if line)


def read_whole_pass(path: Path) -> list[TimedWord] | None:
    """The words of a session's whole pass (``whole_pass.py``), or None when there is none or it cannot be read."""
    if not path.is_file():
        return None
    words = []
    try:
        with open(path, encoding="utf-8") as stream:
            for line in stream:
                event = json.loads(line)
                if event.get("event") != "whole_pass":
                    words.append(TimedWord(str(event["text"]), float(event["start_s"]), float(event["end_s"])))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("%s cannot be read (%s): the captions keep the words committed live", path, exc)
        return None
    return words


def write_captions(folder: Path) -> list[Path]:
    """Write the captions and ``transcript.txt`` of the session recorded in ``folder``; returns the files."""
    from engine.pipeline.recorder import TRANSCRIPT

    committed, spoken = read_transcript(folder / TRANSCRIPT)
    live, said = heard_words(committed), spoken_words(spoken)
    whole = read_whole_pass(folder / WHOLE_PASS)
    heard = live if whole is None else whole
    kinds = [(HEARD, heard), (SPOKEN, said)] + ([] if whole is None else [(COMMITTED, live)])
    written = []
    for name, words in kinds:
        items = cues(words)
        for suffix, text in ((".srt", srt_text(items)), (".vtt", vtt_text(items))):
            path = folder / f"{name}{suffix}"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    path = folder / TRANSCRIPT_TXT
    path.write_text(plain_text(heard), encoding="utf-8")
    written.append(path)
    return written


def write_captions_logged(folder: Path) -> None:
    """``write_captions``, an error logged: the recording itself is complete, only its captions are missing."""
    try:
        write_captions(folder)
    except (OSError, ValueError) as exc:
        log.error("could not write the session's captions into %s: %s", folder, exc)
