"""Episodes: what the streaming recognizer gave the voice, step by step, on real speech.

The learned policy decides at recognizer steps whether to leave waiting words to the lookahead rule or to speak them
now. Training it on the real engine needs the real arrivals: when each word was committed, what the tentative words
were at every step, where the speaker paused, and what each step cost (the session's pace reads it). A session
replays them (``ShadowSession.run_steps``) as it would have spoken them. Running the recognizer is the expensive
part (a minute of speech costs about half a minute of compute on one core), so an episode is recorded once per
recording and configuration, on the compute-aware simulated clock (the times are those a live run on this machine
would see), and kept as JSON lines.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from engine.asr.run import run_stream
from engine.asr.stream_values import CommittedWord, StepResult
from engine.asr.words import Word
from engine.clock import SimulatedClock
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models

log = logging.getLogger(__name__)

EPISODE_VERSION = 2


@dataclass(frozen=True)
class ArrivedWord:
    """A committed word: its text, where it was said on the source clock, and when it was committed."""

    text: str
    start_s: float
    end_s: float
    commit_s: float
    pause_after: bool = False  # the speaker paused after it (the voice treats that as a comma)
    heard_s: float = 0.0  # source audio heard when it was committed
    forced: bool = False  # committed by the hold bound


@dataclass(frozen=True)
class Step:
    """One recognizer step: when it ended, the words it committed, and the tentative words after it."""

    at_s: float
    committed: tuple[ArrivedWord, ...] = ()
    tentative: tuple[str, ...] = ()
    recognized: bool = False
    compute_s: float = 0.0  # the step's compute on the simulated clock
    paused: bool = False  # the speaker had paused with nothing tentative (``StepResult.paused``)

    def result(self) -> StepResult:
        """The step as the recognizer gave it to the session."""
        committed = [
            CommittedWord(w.text, w.start_s, w.end_s, w.commit_s, w.pause_after, w.heard_s, w.forced)
            for w in self.committed
        ]
        tentative = [Word(text, 0.0, 0.0) for text in self.tentative]
        return StepResult(committed, tentative, self.recognized, self.at_s, self.compute_s, paused=self.paused)


@dataclass
class Episode:
    id: str
    audio_s: float
    steps: list[Step] = field(default_factory=list)
    reference: str | None = None  # what was said, when known (for scoring what the voice spoke)
    config: dict = field(default_factory=dict)  # the recognizer settings the episode was recorded with
    version: int = EPISODE_VERSION

    @property
    def words(self) -> list[ArrivedWord]:
        return [w for step in self.steps for w in step.committed]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, line: str) -> Episode:
        data = json.loads(line)
        if data.get("version") != EPISODE_VERSION:
            raise ValueError(f"episode format {data.get('version')!r}, this code reads {EPISODE_VERSION}")
        steps = [
            Step(
                s["at_s"],
                tuple(ArrivedWord(**w) for w in s["committed"]),
                tuple(s["tentative"]),
                s["recognized"],
                s["compute_s"],
                s["paused"],
            )
            for s in data["steps"]
        ]
        return cls(data["id"], data["audio_s"], steps, data.get("reference"), data.get("config") or {})


def _step(result: StepResult) -> Step:
    words = tuple(
        ArrivedWord(w.text, w.start_s, w.end_s, w.commit_s, w.pause_after, w.heard_s, w.forced)
        for w in result.committed
    )
    at = result.at_s if result.at_s is not None else 0.0
    return Step(at, words, tuple(w.text for w in result.tentative), result.recognized, result.compute_s, result.paused)


def record_episode(
    audio: np.ndarray,
    models: Models,
    episode_id: str,
    config: ShadowConfig | None = None,
    reference: str | None = None,
) -> Episode:
    """Run the streaming recognizer over ``audio`` (16 kHz mono) as a session would, keeping every step."""
    config = config or ShadowConfig()
    clock = SimulatedClock(compute_scale=config.cpu_slowdown)
    steps: list[Step] = []
    run = run_stream(
        audio,
        models.recognizer(config),
        clock,
        config.step_s,
        on_step=lambda r: steps.append(_step(r)),
        keep_words=False,
        phase_s=config.step_phase_s,
    )
    settings = {
        "backend": config.backend,
        "model": config.model,
        "commit": config.commit,
        "step_s": config.step_s,
        "cpu_slowdown": config.cpu_slowdown,
        "translate_from": config.translate_from,
    }
    return Episode(episode_id, run.audio_s, steps, reference, settings)


def save_episodes(path: Path, episodes: Iterable[Episode]) -> int:
    """Write episodes as JSON lines (atomically: a cut-short write never replaces a good file); returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    count = 0
    with open(partial, "w", encoding="utf-8") as stream:
        for episode in episodes:
            stream.write(episode.to_json() + "\n")
            count += 1
    partial.replace(path)
    return count


def load_episodes(path: Path) -> Iterator[Episode]:
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if line.strip():
                try:
                    yield Episode.from_json(line)
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{path} line {number} is not an episode: {exc}") from exc


def record_manifest(
    entries: Iterable[dict],
    speech_dir: Path,
    models: Models,
    config: ShadowConfig | None = None,
    progress: Callable[[str], None] | None = None,
) -> Iterator[Episode]:
    """An episode per manifest entry (``id``, ``wav`` relative to ``speech_dir``, and ``text`` when known)."""
    from engine.audio.io import load_audio

    entries = list(entries)
    for i, entry in enumerate(entries, 1):
        if progress is not None:
            progress(f"{i}/{len(entries)} {entry['id']}")
        audio = load_audio(speech_dir / entry["wav"])
        yield record_episode(audio, models, entry["id"], config, entry.get("text"))
