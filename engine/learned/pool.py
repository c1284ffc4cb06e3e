"""The processes that replay episodes for training: one per core, each with its own cached voice (no torch: the
policy runs in numpy there)."""

from __future__ import annotations

import logging
import multiprocessing as mp
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from engine.learned.environment import RewardWeights
from engine.learned.episodes import Episode
from engine.learned.network import NumpyPolicy, SamplingAgent

log = logging.getLogger(__name__)


def _worker(connection, episodes_path: str, weights: dict) -> None:
    """Replays episodes on request: ("run", policy weights, [(episode index, seed or None, mask or None)])."""
    from engine.learned.cache import CachedVoice
    from engine.learned.episodes import load_episodes
    from engine.tts.voice import TwoStageVoice

    logging.getLogger("engine").setLevel(logging.ERROR)  # a replay's sessions log what a user's would
    episodes = list(load_episodes(Path(episodes_path)))
    voice = CachedVoice(TwoStageVoice(threads=1), modelled=True)
    reward_weights = RewardWeights(**weights)
    while True:
        message = connection.recv()
        if message[0] == "stop":
            return
        _, policy_weights, jobs = message
        try:
            results = [
                _replay(episodes[i], i, seed, mask, voice, reward_weights, policy_weights) for i, seed, mask in jobs
            ]
            connection.send((results, voice.hit_rate))
        except Exception as exc:  # the parent raises it (a hung pipe would hide it)
            log.exception("replaying failed")
            connection.send(RuntimeError(f"a replaying worker failed: {exc!r}"))


def _replay(
    episode: Episode,
    index: int,
    seed: int | None,
    mask: dict | None,
    voice,
    reward_weights: RewardWeights,
    policy_weights: dict,
) -> dict:
    """One episode with the policy: sampled with ``seed``, greedy without."""
    from engine.learned.environment import replay

    agent = SamplingAgent(NumpyPolicy(policy_weights), np.random.default_rng(seed) if seed is not None else None, mask)
    outcome = replay(episode, agent, voice)
    return {
        "index": index,
        "seed": seed,
        "observations": np.asarray(outcome.observations, np.float32),
        "moves": np.asarray(outcome.moves, np.int64),
        "log_probs": np.asarray(agent.log_probs, np.float32),
        "costs": outcome.costs(reward_weights),
        **outcome.summary(reward_weights),
    }


class WorkerPool:
    """One replaying process per core; episode ``i`` always goes to worker ``i % n`` (its cache knows it)."""

    def __init__(self, episodes_path: Path, n: int, weights: RewardWeights) -> None:
        context = mp.get_context("spawn")
        self.connections = []
        self.processes = []
        for _ in range(n):
            parent, child = context.Pipe()
            process = context.Process(target=_worker, args=(child, str(episodes_path), asdict(weights)), daemon=True)
            process.start()
            self.connections.append(parent)
            self.processes.append(process)
        self.hit_rate = 0.0

    def run(self, policy_weights: dict, jobs: Sequence[tuple]) -> list[dict]:
        """Results in the order of ``jobs`` ((episode index, seed or None[, mask]))."""
        n = len(self.connections)
        jobs = [(job[0], job[1], job[2] if len(job) > 2 else None) for job in jobs]
        shares: list[list[tuple]] = [[] for _ in range(n)]
        for number, job in enumerate(jobs):
            shares[job[0] % n].append((number, job))
        for connection, share in zip(self.connections, shares, strict=True):
            connection.send(("run", policy_weights, [job for _, job in share]))
        results: list[dict | None] = [None] * len(jobs)
        rates = []
        for connection, share in zip(self.connections, shares, strict=True):
            answer = connection.recv()
            if isinstance(answer, Exception):
                raise answer
            part, rate = answer
            for (number, _), result in zip(share, part, strict=True):
                results[number] = result
            rates.append(rate)
        self.hit_rate = statistics.fmean(rates)
        return results  # type: ignore[return-value]

    def close(self) -> None:
        for connection in self.connections:
            try:
                connection.send(("stop",))
            except (BrokenPipeError, OSError):
                pass
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
