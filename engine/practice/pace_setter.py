"""The pace-setter: the machine's own ear-voice lag on a source, word by word, shown beside the person's EVS.

It is a headless shadowing (or interpreting) run of the source on the compute-aware clock (the times a live run
would have on this machine), with the default settings, kept per source content in the data folder so a second
attempt at the same recording starts at once. The voice speaks English: a source in another language has a
pace-setter only when it is interpreted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine import paths
from engine.hashing import file_sha256
from engine.metrics import names as m

log = logging.getLogger(__name__)

CACHE_FOLDER = "pace-setter"
SAMPLE_RATE = 16000


@contextlib.contextmanager
def played_at(source: Path, speed: float) -> Iterator[Path]:
    """``source`` itself at 1x; else a WAV of it stretched to ``speed``, removed afterwards."""
    if speed == 1.0:
        yield source
        return
    from engine.audio.stretch import write_stretched

    with tempfile.TemporaryDirectory(prefix="liveshadow-speed-") as folder:
        yield write_stretched(source, speed, Path(folder) / f"{source.stem}-{speed:g}x.wav", SAMPLE_RATE)


def _cache_path(source: Path, interpret_from: str | None, speed: float) -> Path:
    name = file_sha256(source) + (f"-interpret-{interpret_from}" if interpret_from else "")
    name += f"-{speed:g}x" if speed != 1.0 else ""
    return paths.data_dir() / CACHE_FOLDER / f"{name}.json"


@dataclass(frozen=True)
class PaceSetter:
    """The machine's run on a source: its lag per word, and its own words as it spoke them (for the export)."""

    lags: list[tuple[float, float]]  # (source word end, the machine's ear-voice lag)
    words: list[dict]  # {"text", "speak_start_s", "speak_end_s"} on the source's clock (as played)

    @classmethod
    def none(cls) -> PaceSetter:
        return cls([], [])

    @classmethod
    def of_session(cls, report: dict) -> PaceSetter:
        """The pace-setter a shadowing (or interpreting) session's report gives: its spoken words."""
        spoken = [w for w in report["words"] if w.get(m.EAR_VOICE_LAG_S) is not None]
        return cls(
            [(float(w["source_end_s"]), float(w[m.EAR_VOICE_LAG_S])) for w in spoken],
            [
                {"text": w["text"], "speak_start_s": w.get("speak_start_s"), "speak_end_s": w.get("speak_end_s")}
                for w in spoken
            ],
        )


def pace_setter(source: Path, language: str | None = "en", interpret: bool = False, speed: float = 1.0) -> PaceSetter:
    """The machine shadowing (or ``interpret``: interpreting from ``language``, None: detected) the source as played
    at ``speed`` (``audio.stretch``), on that clock; none for a source in another language shadowed, or when the run
    fails (the practice goes on without it)."""
    from engine.pipeline.config import AUTO_LANGUAGE, ShadowConfig

    if language != "en" and not interpret:
        return PaceSetter.none()
    translate_from = (language or AUTO_LANGUAGE) if interpret else None
    cache = _cache_path(source, translate_from, speed)
    try:
        kept = json.loads(cache.read_text(encoding="utf-8"))
        return PaceSetter([(float(a), float(b)) for a, b in kept["lags"]], list(kept["words"]))
    except (OSError, ValueError, TypeError, KeyError):  # none kept, or kept by an older version (lags only)
        pass
    from engine.pipeline.shadow import shadow_file

    try:
        with played_at(source, speed) as played:
            report = shadow_file(played, ShadowConfig(translate_from=translate_from), speech_chain=False)
    except (OSError, RuntimeError, ValueError) as exc:
        log.warning("no pace-setter for %s: %s", source, exc)
        return PaceSetter.none()
    result = PaceSetter.of_session(report)
    _keep(result, cache)
    return result


def keep(result: PaceSetter, source: Path, translate_from: str | None = None, speed: float = 1.0) -> None:
    """Keep ``result`` as the pace-setter of ``source`` (interpreted from ``translate_from``, played at ``speed``)
    in the data folder; a folder that cannot be written is only a warning."""
    _keep(result, _cache_path(source, translate_from, speed))


def _keep(result: PaceSetter, cache: Path) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"lags": result.lags, "words": result.words}), encoding="utf-8")
    except OSError as exc:
        log.warning("the pace-setter was not kept in %s: %s", cache, exc)
