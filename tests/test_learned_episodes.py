"""Episodes for the learned policy: the real recognizer's word arrivals on real speech, kept on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.audio.io import load_audio
from engine.learned.episodes import Episode, load_episodes, record_episode, record_manifest, save_episodes
from engine.metrics.wer import wer

SHORT = "ls_61-70968-0000"


@pytest.mark.slow  # timed: its steps come on the compute-aware clock (at idle priority beside the timed tests, a
# step's wall time held the other tests' too: 10 steps on 7.1 s in CI on 2026-12-08)
def test_an_episode_keeps_every_step_and_word_of_a_real_recording(shadow_models, speech_manifest, speech_dir) -> None:
    item = next(e for e in speech_manifest if e["id"] == SHORT)
    episode = record_episode(load_audio(speech_dir / item["wav"]), shadow_models, SHORT, reference=item["text"])
    assert episode.audio_s == pytest.approx(item["duration_s"], abs=0.2)
    times = [s.at_s for s in episode.steps]
    assert times == sorted(times) and len(times) > 10
    assert episode.steps[-1].tentative == ()  # the last step commits the rest
    assert any(s.tentative for s in episode.steps)  # the voice could read ahead from these
    words = episode.words
    assert wer(item["text"], " ".join(w.text for w in words)) < 0.3
    for word in words:  # said, then committed; a word is committed at the step that gave it
        assert word.start_s < word.end_s < word.commit_s
    for step in episode.steps:
        assert all(w.commit_s == pytest.approx(step.at_s, abs=0.05) for w in step.committed)
    assert sum(s.compute_s for s in episode.steps) > 0.5  # what the session's pace reads on replay
    result = next(s for s in episode.steps if s.committed).result()  # as the recognizer gave it to the session
    assert result.committed[0].text == next(s for s in episode.steps if s.committed).committed[0].text
    assert result.at_s is not None and result.compute_s > 0


@pytest.mark.slow
@pytest.mark.untimed  # what it checks does not depend on how many steps the recordings got
def test_episodes_round_trip_through_a_file_and_a_bad_line_is_named(
    shadow_models, speech_manifest, speech_dir, tmp_path: Path
) -> None:
    entries = [e for e in speech_manifest if e["id"] in (SHORT, "vctk_p225_002")]
    path = tmp_path / "episodes.jsonl"
    assert save_episodes(path, record_manifest(entries, speech_dir, shadow_models)) == 2
    assert not path.with_name(path.name + ".partial").exists()
    loaded = list(load_episodes(path))
    assert [e.id for e in loaded] == [e["id"] for e in entries]
    assert loaded[0] == Episode.from_json(loaded[0].to_json())
    assert loaded[0].config["commit"] == "la2" and loaded[0].reference == entries[0]["text"]
    path.write_text(path.read_text() + '{"id": "cut short", "steps": [\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 3"):
        list(load_episodes(path))
