"""The READ/SPEAK environment on the real voice: constructed arrivals and a real recording's episode."""

from __future__ import annotations

import pytest

from engine.audio.io import load_audio
from engine.learned.environment import READ, SPEAK, Observation, ReadSpeakEnvironment, always
from engine.learned.episodes import Episode, record_episode
from tests.learned_episodes import SENTENCE, constructed


def _constructed() -> Episode:
    """A word every 0.3 s, committed 0.8 s after it ends, a recognizer step every 0.3 s, two words of hint."""
    return constructed(SENTENCE, pace_s=0.3, delay_s=0.8)


@pytest.fixture(scope="module")
def environment(shadow_models) -> ReadSpeakEnvironment:
    return ReadSpeakEnvironment(shadow_models.voice)


def test_always_read_waits_for_the_sentence_end_and_always_speak_follows_the_words(environment) -> None:
    episode = _constructed()
    read = environment.run(episode, always(READ))
    speak = environment.run(episode, always(SPEAK))
    for outcome in (read, speak):
        assert [w.text for w in outcome.words] == SENTENCE.split()  # every word once, in order
        assert len(outcome.actions) == len(episode.steps)
    last_commit = max(w.commit_s for w in episode.words)
    assert min(w.play_end_s for w in read.words) > last_commit  # nothing before the sentence was complete
    assert speak.lag_median_s < read.lag_median_s - 1.0
    assert min(w.play_end_s for w in speak.words) < last_commit


def test_the_policy_sees_the_text_pile_up_while_it_reads(environment) -> None:
    seen: list[Observation] = []

    def read_and_watch(observation: Observation) -> int:
        seen.append(observation)
        return READ

    environment.run(_constructed(), read_and_watch)
    words = len(SENTENCE.split())
    pending = [o.pending_phonemes for o in seen[: words - 1]]  # before the step that completes the sentence
    assert 0 < pending[0] <= 5 and pending == sorted(pending) and pending[-1] > 40  # "The": 2 phonemes
    assert seen[words - 1].pending_phonemes == 0  # the sentence's end is spoken whatever the policy
    assert [o.consecutive_reads for o in seen] == list(range(len(seen)))
    assert any(o.hint_phonemes > 0 for o in seen) and any(o.ends_clause for o in seen)  # "dog," ends a phrase
    assert all(o.in_hand_s == 0.0 for o in seen[:words])  # nothing played before the sentence was complete
    assert seen[-1].in_hand_s > 0 and seen[-1].pending_phonemes == 0  # then it is, all of it
    assert seen[0].vector().shape == (9,)


def test_a_real_recording_replayed_speaks_every_word_once_in_order(
    environment, shadow_models, speech_manifest, speech_dir
) -> None:
    item = next(e for e in speech_manifest if e["id"] == "ljspeech_LJ001-0001")
    episode = record_episode(load_audio(speech_dir / item["wav"]), shadow_models, item["id"])
    read = environment.run(episode, always(READ))
    speak = environment.run(episode, always(SPEAK))
    committed = [w.text for w in episode.words]
    assert [w.text for w in read.words] == committed == [w.text for w in speak.words]
    assert speak.lag_median_s < read.lag_median_s
    assert speak.underruns >= read.underruns  # word by word, compute leaves gaps the waiting voice does not have


def test_rewards_charge_long_reading_each_underrun_once_and_distance_from_the_whole_sentence_voice(
    environment,
) -> None:
    from dataclasses import replace

    from engine.learned.environment import RewardWeights, episode_return

    weights = RewardWeights()
    episode = _constructed()
    read = environment.run(episode, always(READ))
    speak = environment.run(episode, always(SPEAK))
    # always READ: 22 steps in a row; every READ past the target costs
    assert read.excess_reads(weights.reads_target) == len(episode.steps) - weights.reads_target
    assert speak.excess_reads(weights.reads_target) == 0
    # speaking word by word sounds less like the whole-sentence voice than speaking with the sentence in hand
    assert len(speak.word_distances_db) == len(SENTENCE.split()) and speak.distance_db > read.distance_db
    one_more = replace(speak, underruns=speak.underruns + 1)
    assert episode_return(one_more, weights) == pytest.approx(episode_return(speak, weights) - weights.underrun)
    assert episode_return(speak, weights) <= 0 and episode_return(read, weights) <= 0


def test_each_decision_is_charged_what_follows_from_it_and_the_charges_add_up_to_the_return(environment) -> None:
    from engine.learned.environment import RewardWeights, episode_return

    weights = RewardWeights()
    for outcome in (environment.run(_constructed(), always(READ)), environment.run(_constructed(), always(SPEAK))):
        costs = outcome.step_costs(weights)
        assert costs.shape == (len(outcome.actions),) and (costs >= 0).all()
        assert costs.sum() == pytest.approx(-episode_return(outcome, weights))
        assert sum(outcome.step_underruns) == outcome.underruns  # an underrun is charged once, to one decision
    read = environment.run(_constructed(), always(READ))
    # waiting: nothing is charged before the sentence's end is spoken, except the READs past the target
    end = next(i for i, c in enumerate(read.step_costs(weights)) if c > weights.excess_read + 1e-9)
    assert end >= len(SENTENCE.split()) - 1


def test_a_slower_cpu_charges_the_voice_more_and_a_cached_voice_gives_the_same_episode(shadow_models) -> None:
    from engine.learned.cache import CachedVoice

    cached = CachedVoice(shadow_models.voice)
    fast = ReadSpeakEnvironment(cached, timer=cached.timer)
    slow = ReadSpeakEnvironment(cached, voice_slowdown=3.0, timer=cached.timer)
    first = fast.run(_constructed(), always(SPEAK))
    misses = cached.misses
    again = fast.run(_constructed(), always(SPEAK))
    assert cached.misses == misses and cached.hits > 0  # the replay computed nothing
    assert [w.play_end_s for w in again.words] == [w.play_end_s for w in first.words]  # charged what it cost
    assert again.word_distances_db == pytest.approx(first.word_distances_db)
    slower = slow.run(_constructed(), always(SPEAK))
    assert slower.compute_s == pytest.approx(3.0 * first.compute_s)
    assert slower.lag_mean_s > first.lag_mean_s
