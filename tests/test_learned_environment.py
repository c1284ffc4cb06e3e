"""The READ/SPEAK environment on the real voice: constructed arrivals and a real recording's episode."""

from __future__ import annotations

import pytest

from engine.audio.io import load_audio
from engine.tts.learned.environment import READ, SPEAK, Observation, ReadSpeakEnvironment, always
from engine.tts.learned.episodes import ArrivedWord, Episode, Step, record_episode

SENTENCE = "The quick brown fox jumps over the lazy dog, and then it runs back into the forest again."


def _constructed() -> Episode:
    """A word every 0.3 s, committed 0.8 s after it ends, a recognizer step every 0.3 s, two words of hint."""
    words = SENTENCE.split()
    arrived = [ArrivedWord(w, 0.3 * i, 0.3 * i + 0.25, 0.3 * i + 1.05) for i, w in enumerate(words)]
    steps = []
    for n in range(len(words) + 4):  # step n commits word n; four steps with nothing new at the end
        committed = (arrived[n],) if n < len(words) else ()
        hint = tuple(words[n + 1 : n + 3])
        steps.append(Step(0.3 * n + 1.05, committed, hint, True))
    return Episode("constructed", 0.3 * len(words) + 0.5, steps, SENTENCE)


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

    from engine.tts.learned.environment import RewardWeights, episode_return

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
