"""Named sets of the shadowing knobs: "Lowest lag", "Balanced" (the defaults) and "Best voice".

A preset sets only the knobs that trade lag against the voice's naturalness (commit policy, lookahead, chunk sizes,
the pause after a comma, tentative lookahead, the hurry threshold); devices, models, the voice and its rate stay
the user's. Each preset carries the figures ``liveshadow bench shadow --preset ...`` measured for it, so the app can
show what choosing it means (docs/RESULTS.md has the table, its machine, date and command).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from engine.pipeline.config import ShadowConfig

KNOBS = ("commit", "tts_policy", "k", "first_chunk", "chunk", "phrase_chunk", "tentative_lookahead", "hurry_below_s")
CUSTOM = "Custom"


@dataclass(frozen=True)
class PresetFigures:
    """What ``bench shadow`` measured for a preset on ../shared/speech (medians over the recordings' words)."""

    lag_median_s: float
    lag_p90_s: float
    wer_spoken: float
    underruns: int
    machine: str
    date: str


@dataclass(frozen=True)
class Preset:
    key: str  # for the command line
    name: str  # for the window
    summary: str
    knobs: dict[str, Any]
    figures: PresetFigures | None = None

    def apply(self, config: ShadowConfig) -> ShadowConfig:
        return replace(config, **self.knobs)

    def matches(self, config: ShadowConfig) -> bool:
        return all(getattr(config, knob) == value for knob, value in self.knobs.items())


def _defaults() -> dict[str, object]:
    config = ShadowConfig()
    return {knob: getattr(config, knob) for knob in KNOBS}


def _knobs(**changes: object) -> dict[str, object]:
    knobs = {**_defaults(), **changes}
    names = {f.name for f in fields(ShadowConfig)}
    assert set(knobs) == set(KNOBS) and set(KNOBS) <= names
    return knobs


# `liveshadow bench shadow --preset lowest-lag,balanced,best-voice` on ../shared/speech (docs/RESULTS.md, "Presets")
MEASURED_ON = "a 2-core AMD EPYC"
MEASURED = "2026-11-24"

PRESETS: tuple[Preset, ...] = (
    Preset(
        "lowest-lag",
        "Lowest lag",
        "speaks each chunk without waiting for the next one and does not pause at commas: sooner, flatter",
        _knobs(k=0, phrase_chunk=0),
        PresetFigures(1.65, 2.64, 0.239, 0, MEASURED_ON, MEASURED),
    ),
    Preset(
        "balanced",
        "Balanced",
        "the defaults: one chunk of lookahead, read from the words still being recognized; a reader's pause at commas",
        _knobs(),
        PresetFigures(1.96, 2.58, 0.182, 1, MEASURED_ON, MEASURED),
    ),
    Preset(
        "best-voice",
        "Best voice",
        "two chunks of lookahead, from final words only: more natural phrasing, further behind",
        _knobs(k=2, tentative_lookahead=False),
        PresetFigures(3.03, 3.72, 0.164, 0, MEASURED_ON, MEASURED),
    ),
)


def preset(key_or_name: str) -> Preset:
    """The preset with this key ("lowest-lag") or name ("Lowest lag"); ValueError names the choices."""
    for item in PRESETS:
        if key_or_name in (item.key, item.name):
            return item
    raise ValueError(f"no preset {key_or_name!r}; choose one of {', '.join(p.key for p in PRESETS)}")


def matching(config: ShadowConfig) -> Preset | None:
    """The preset whose knobs ``config`` has, or None (the app then shows "Custom")."""
    return next((item for item in PRESETS if item.matches(config)), None)
