"""Which recordings train the READ/SPEAK policy and which judge it, and the episodes recorded from them.

A recording is held out for evaluation by a hash of its id (about 2 in 5), not by choice, so no one picks the
easy ones. Each training recording is replayed at several tempos (sox's WSOLA, the pitch kept: slower and faster
speakers than the recording's) and at several CPU slowdowns (the recognizer and the voice charged that many times
their compute: a slower laptop), so the policy meets input rates and machine speeds beyond the recordings' own.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from engine.learned.episodes import Episode, record_episode
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models

log = logging.getLogger(__name__)

EVAL_SHARE = 2  # of 5: recordings whose id hashes below this are held out
TEMPOS = (0.85, 1.0, 1.2, 1.4)
SLOWDOWNS = (1.0, 2.0)


def held_out(recording_id: str) -> bool:
    """Whether a recording is kept for evaluation (never trained on)."""
    digest = hashlib.blake2b(recording_id.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") % 5 < EVAL_SHARE


def variant_id(recording_id: str, tempo: float, slowdown: float) -> str:
    return f"{recording_id}@tempo{tempo:g}@cpu{slowdown:g}"


def episode_slowdown(episode: Episode) -> float:
    """The CPU slowdown an episode was recorded at (its voice is to be charged the same)."""
    return float(episode.config.get("cpu_slowdown") or 1.0)


def record_training_set(
    entries: Iterable[dict], speech_dir: Path, models: Models, done: set[str] | None = None,
    tempos: Sequence[float] = TEMPOS, slowdowns: Sequence[float] = SLOWDOWNS,
    progress: Callable[[str], None] | None = None,
) -> Iterator[Episode]:  # fmt: skip
    """An episode per training recording, tempo and slowdown (those in ``done`` are skipped: a resumed run)."""
    from engine.audio.io import load_audio
    from engine.eval.stress import tempo as change_tempo

    chosen = [e for e in entries if not held_out(e["id"])]
    jobs = [(e, t, s) for e in chosen for t in tempos for s in slowdowns]
    done = done or set()
    for number, (entry, factor, slowdown) in enumerate(jobs, 1):
        episode_id = variant_id(entry["id"], factor, slowdown)
        if episode_id in done:
            continue
        if progress is not None:
            progress(f"recording episode {number}/{len(jobs)}: {episode_id}")
        audio = load_audio(speech_dir / entry["wav"])
        if factor != 1.0:
            audio = change_tempo(audio, factor)
        config = replace(ShadowConfig(), cpu_slowdown=slowdown)
        yield record_episode(audio, models, episode_id, config, entry.get("text"))


def write_held_out_manifest(manifest: Path, out: Path) -> int:
    """A manifest of ``manifest``'s held-out recordings (their wav paths made absolute), for ``bench shadow`` and
    ``eval`` on recordings the policy never trained on; returns how many."""
    import json

    entries = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [{**e, "wav": str((manifest.parent / e["wav"]).resolve())} for e in entries if held_out(e["id"])]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
    return len(kept)


if __name__ == "__main__":  # python -m engine.learned.training_set MANIFEST OUT: the held-out manifest
    import sys

    count = write_held_out_manifest(Path(sys.argv[1]), Path(sys.argv[2]))
    sys.stdout.write(f"{count} held-out recordings: {sys.argv[2]}\n")
