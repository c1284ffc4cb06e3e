"""Which recordings train the learned policy and which judge its updates, and the episodes recorded from them.

A recording is held back by a hash of its id (about 2 in 5), not by choice, so no one picks the easy ones: training
never replays it, and an update of the policy is kept only if the held-back episodes do not get worse. The clean
recordings (``../shared/speech``) and the spontaneous, accented and noisy ones (``../shared/speech-hard``) both take
part. Each training recording is replayed at several tempos (sox's WSOLA, the pitch kept: slower and faster
speakers than the recording's) and every recording at several CPU slowdowns (the recognizer and the voice charged
that many times their compute: a slower laptop), so the policy meets input rates and machine speeds beyond the
recordings' own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.hashing import id_fifth
from engine.learned.episodes import Episode, record_episode
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models

log = logging.getLogger(__name__)

EVAL_SHARE = 2  # of 5: recordings whose id hashes below this are held back
TEMPOS = (1.0, 1.2)
SLOWDOWNS = (1.0, 2.0)


def held_out(recording_id: str) -> bool:
    """Whether a recording is held back (never trained on; it judges the policy's updates)."""
    return id_fifth(recording_id) < EVAL_SHARE


def variant_id(recording_id: str, tempo: float, slowdown: float) -> str:
    return f"{recording_id}@tempo{tempo:g}@cpu{slowdown:g}"


def recording_id(episode_id: str) -> str:
    """The recording an episode was made from (its id without the variant)."""
    return episode_id.split("@", 1)[0]


@dataclass(frozen=True)
class RecordingJob:
    episode_id: str
    wav: str  # absolute path
    tempo: float
    slowdown: float
    text: str | None
    held_back: bool


def manifest_entries(speech_dirs: Sequence[Path]) -> list[dict]:
    """Every entry of each folder's ``manifest.jsonl``, its ``wav`` made absolute."""
    entries = []
    for folder in speech_dirs:
        manifest = Path(folder) / "manifest.jsonl"
        if not manifest.is_file():
            raise FileNotFoundError(f"no manifest.jsonl in {folder} (the recordings to train on)")
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                entries.append({**entry, "wav": str((Path(folder) / entry["wav"]).resolve())})
    return entries


def recording_jobs(
    entries: Sequence[dict], tempos: Sequence[float] = TEMPOS, slowdowns: Sequence[float] = SLOWDOWNS
) -> list[RecordingJob]:
    """An episode per training recording, tempo and slowdown, and per held-back recording and slowdown (its own
    tempo: it judges the policy on speech as it was said)."""
    jobs = []
    for entry in entries:
        held = held_out(entry["id"])
        for tempo in (1.0,) if held else tempos:
            for slowdown in slowdowns:
                jobs.append(
                    RecordingJob(
                        variant_id(entry["id"], tempo, slowdown), entry["wav"], tempo, slowdown, entry.get("text"), held
                    )
                )
    return jobs


def record_job(job: RecordingJob, models: Models) -> Episode:
    """The streaming recognizer run over the job's recording as a session would run it."""
    from engine.audio.io import load_audio
    from engine.eval.stress import tempo as change_tempo

    audio = load_audio(Path(job.wav))
    if job.tempo != 1.0:
        audio = change_tempo(audio, job.tempo)
    config = replace(ShadowConfig(), cpu_slowdown=job.slowdown)
    return record_episode(audio, models, job.episode_id, config, job.text)


def write_held_out_manifest(manifest: Path, out: Path) -> int:
    """A manifest of ``manifest``'s held-back recordings (their wav paths made absolute), for ``bench shadow`` and
    ``eval`` on recordings the policy never trained on; returns how many."""
    entries = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [{**e, "wav": str((manifest.parent / e["wav"]).resolve())} for e in entries if held_out(e["id"])]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(e) + "\n" for e in kept), encoding="utf-8")
    return len(kept)


if __name__ == "__main__":  # python -m engine.learned.training_set MANIFEST OUT: the held-out manifest
    import sys

    count = write_held_out_manifest(Path(sys.argv[1]), Path(sys.argv[2]))
    sys.stdout.write(f"{count} held-out recordings: {sys.argv[2]}\n")
