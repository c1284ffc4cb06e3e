"""The learned policy's environment: a real recording's episode replayed through the session's own code, the
imitation start equal to lookahead-1, and each decision charged what follows from it.

The episode is kept (tests/data): how a recognizer's commits bunch up depends on the machine's speed (on a CPU whose
recognizer step takes 0.47 s the words arrive three and four at a time and speaking now gains little), and these
tests are about the replay, not the machine. ``record_episode`` itself is tested in test_learned_episodes.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.learned.cache import CachedVoice
from engine.learned.environment import RewardWeights, replay
from engine.learned.episodes import load_episodes
from engine.tts.learned.moves import NOW, RULE, WAIT, RuleMoves
from tests.learned_episodes import constructed

pytestmark = pytest.mark.slow

# ``record_episode`` of ../shared/speech's ls_2412-153948-0000 with the default settings (AMD EPYC VM, 2026-12-07).
KEPT_EPISODE = Path(__file__).parent / "data" / "episode_ls_2412-153948-0000.jsonl"


@pytest.fixture(scope="module")
def episode():
    (kept,) = load_episodes(KEPT_EPISODE)
    return kept


@pytest.fixture(scope="module")
def voice(shadow_models):
    return CachedVoice(shadow_models.voice, modelled=True)


class _Always:
    moves = True

    def __init__(self, move: int) -> None:
        self.move, self.name = move, f"always-{move}"

    def decide(self, observation) -> int:
        return self.move

    def reset(self) -> None:
        pass


def _assert_same(a, b) -> None:
    """Two replays spoke alike (the compute charged so far is a growing sum: its last bits may differ)."""
    assert a.lags_s == pytest.approx(b.lags_s, abs=1e-9)
    assert a.underruns == b.underruns
    assert a.distances_db == pytest.approx(b.distances_db, abs=1e-9)


def test_the_imitation_start_is_lookahead_1_exactly_on_recorded_states(episode, voice) -> None:
    """The untrained network's greedy move is the rule's on every state a session meets (those of the rule's own
    replay and those after NOW moves), and a session driven by it speaks as lookahead-1 does, word for word."""
    from engine.learned.network import NumpyPolicy, SamplingAgent
    from engine.learned.train import network, numpy_weights

    policy = NumpyPolicy(numpy_weights(network()))
    rule = replay(episode, None, voice)
    greedy = replay(episode, SamplingAgent(policy), voice)
    sampled = replay(episode, SamplingAgent(policy, np.random.default_rng(1)), voice)
    assert len(greedy.moves) > 5 and set(greedy.moves) == {RULE}
    assert NOW in sampled.moves  # sampling explores
    states = np.concatenate([greedy.observations, sampled.observations])
    assert (policy.probabilities(states).argmax(1) == RULE).all()
    _assert_same(greedy, rule)
    _assert_same(replay(episode, RuleMoves(), voice), rule)
    assert len(rule.lags_s) == len(episode.words)


def test_a_replay_is_the_same_every_time_and_speaking_now_is_sooner(episode, voice) -> None:
    rule = replay(episode, RuleMoves(), voice)
    _assert_same(replay(episode, RuleMoves(), voice), rule)  # modelled compute: no machine noise
    _assert_same(replay(episode, RuleMoves(), CachedVoice(voice.voice, modelled=True)), rule)  # nor a cold cache
    now = replay(episode, _Always(NOW), voice)
    assert now.lag_mean_s < rule.lag_mean_s - 0.2
    assert now.distance_db > rule.distance_db  # without its lookahead a word sounds further from the sentence's
    assert 0.0 < rule.distance_db < 15.0 and rule.underruns == 0
    wait = replay(episode, _Always(WAIT), voice)  # one more chunk of lookahead: later, and closer to the sentence's
    assert wait.lag_mean_s > rule.lag_mean_s + 0.1 and wait.distance_db < rule.distance_db - 0.3


def test_each_decision_is_charged_what_follows_it_and_the_charges_add_up(episode, voice) -> None:
    weights = RewardWeights(lag=1.0, underrun=2.0, quality=0.5)
    for agent in (RuleMoves(), _Always(NOW)):
        outcome = replay(episode, agent, voice)
        costs = outcome.costs(weights)
        assert len(costs) == len(outcome.moves) == len(outcome.observations)
        assert costs.sum() == pytest.approx(-outcome.episode_return(weights))
        assert (costs >= 0).all()


def test_a_slower_cpu_charges_the_voice_more_and_a_constructed_episode_replays(voice) -> None:
    from dataclasses import replace

    fast = constructed()
    slow = replace(fast, id="slow", config={"cpu_slowdown": 4.0})
    a, b = replay(fast, RuleMoves(), voice), replay(slow, RuleMoves(), voice)
    assert len(a.lags_s) == len(b.lags_s) == len(fast.words)
    assert b.lag_mean_s > a.lag_mean_s
