"""Presets: named sets of the lag/voice knobs, with the balanced one equal to the defaults."""

from __future__ import annotations

import pytest

from engine.pipeline.config import ShadowConfig
from engine.pipeline.presets import KNOBS, PRESETS, matching, preset


def test_balanced_is_the_defaults_and_the_defaults_match_it() -> None:
    assert matching(ShadowConfig()) is preset("balanced")
    assert preset("Balanced").apply(ShadowConfig()) == ShadowConfig()


def test_each_preset_sets_only_its_knobs_and_is_found_again() -> None:
    user = ShadowConfig(voice_rate=1.2, echo_guard="gate", model="base", output_device="usb")
    seen = set()
    for item in PRESETS:
        config = item.apply(user)
        assert matching(config) is item
        assert (config.voice_rate, config.echo_guard, config.model, config.output_device) == (
            1.2,
            "gate",
            "base",
            "usb",
        )
        assert set(item.knobs) == set(KNOBS)
        seen.add(tuple(item.knobs[k] for k in KNOBS))
    assert len(seen) == len(PRESETS)  # no two presets are the same settings


def test_a_changed_knob_matches_no_preset_and_an_unknown_name_is_refused() -> None:
    assert matching(ShadowConfig(k=3)) is None
    with pytest.raises(ValueError, match="lowest-lag"):
        preset("fastest")
