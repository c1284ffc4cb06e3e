"""Train the READ/SPEAK policy with REINFORCE and a learned baseline (torch; the app never imports this module).

``liveshadow train-policy --out DIR`` (or ``python -m engine.learned.train --out DIR``):

1. records the training episodes once (``training_set``: the training recordings at several tempos and CPU
   slowdowns, the streaming recognizer run over each on the compute-aware clock) into ``DIR/episodes.jsonl``;
2. trains: each iteration, worker processes (one per core) replay a batch of episodes into the real synthesizer
   with actions sampled from the current policy (``CachedVoice`` remembers every Stage I window and Stage II slice,
   so a replay costs little after the first), each decision charged what follows from it
   (``EpisodeOutcome.step_costs``); the policy gradient uses the reward-to-go minus the value head's estimate;
3. every ``eval_every`` iterations runs the greedy policy on every training episode and keeps the best;
4. exports the best to ``DIR/learned_policy.onnx`` (copy it to ``assets/`` to ship it) and writes
   ``DIR/training_curve.png``.

Seeded (``--seed``) and resumable: ``DIR/checkpoint.pt`` is written after every iteration and picked up again.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from engine.learned.environment import RewardWeights, episode_return
from engine.learned.episodes import Episode
from engine.learned.network import HEAD, HIDDEN, NumpyPolicy
from engine.tts.learned.driver import FEATURE_NAMES, N_FEATURES, READ, SPEAK, Observation, RuleAgent

log = logging.getLogger(__name__)

EPISODES_FILE = "episodes.jsonl"
CHECKPOINT_FILE = "checkpoint.pt"
HISTORY_FILE = "history.jsonl"
CURVE_FILE = "training_curve.png"
POLICY_FILE = "learned_policy.onnx"


@dataclass
class TrainSettings:
    out: Path
    speech_dir: Path | None = None  # the recordings (manifest.jsonl inside); ../shared/speech by default
    iterations: int = 200
    batch: int = 6  # episodes per iteration
    replays: int = 2  # each replayed this many times (the leave-one-out baseline compares them)
    # the reward-to-go's discount per recognizer step (0.3 s; 1 = none). 0.95 (a horizon of seconds) was tried and
    # did no better (docs/learned_policy.md)
    discount: float = 1.0
    seed: int = 0
    lr: float = 3e-3
    entropy: float = 0.01
    value_weight: float = 0.5
    workers: int = 2
    eval_every: int = 10
    speak_bias: float = -1.0  # initial SPEAK logit bias (a READ-leaning start: word-by-word speech has gaps)
    record: bool = True  # record the missing training episodes (False: train on DIR/episodes.jsonl as it is)
    warm_start: bool = True  # imitate a simple rule first (RuleAgent), then REINFORCE
    tempos: tuple[float, ...] = (0.85, 1.0, 1.2, 1.4)
    slowdowns: tuple[float, ...] = (1.0, 2.0)
    weights: RewardWeights = field(default_factory=RewardWeights)


# ----- the replaying workers (no torch: the policy runs in numpy there)
class SamplingAgent:
    """The policy's actions, sampled (training) or greedy (evaluation)."""

    name = "learned"

    def __init__(self, policy: NumpyPolicy, rng: np.random.Generator | None) -> None:
        self.policy, self.rng = policy, rng
        self.h = policy.initial_state()

    def decide(self, observation: Observation) -> int:
        probs, self.h = self.policy.step(observation.vector(), self.h)
        if self.rng is None:
            return SPEAK if probs[SPEAK] > 0.5 else READ
        return SPEAK if self.rng.random() < probs[SPEAK] else READ

    def reset(self) -> None:
        self.h = self.policy.initial_state()


def _worker(connection, episodes_path: str, weights: dict) -> None:  # noqa: ANN001 - a multiprocessing Connection
    """Replays episodes on request: ("run", policy weights, [(episode index, seed or None)]) → a result per job."""
    from engine.learned.cache import CachedVoice
    from engine.learned.episodes import load_episodes
    from engine.tts.voice import TwoStageVoice

    episodes = list(load_episodes(Path(episodes_path)))
    voice = CachedVoice(TwoStageVoice(threads=1))
    environments: dict = {}
    reward_weights = RewardWeights(**weights)
    while True:
        message = connection.recv()
        if message[0] == "stop":
            return
        _, policy_weights, jobs = message
        try:
            results = [_replay(episodes[i], i, seed, voice, environments, reward_weights, policy_weights)
                       for i, seed in jobs]  # fmt: skip
            connection.send((results, voice.hit_rate, voice.cached_bytes))
        except Exception as exc:  # the parent raises it (a hung pipe would hide it)
            log.exception("replaying failed")
            connection.send(RuntimeError(f"a replaying worker failed: {exc!r}"))


def _replay(episode: Episode, index: int, seed: int | None, voice, environments: dict,  # noqa: ANN001
            reward_weights: RewardWeights, policy_weights: dict | None) -> dict:  # fmt: skip
    """One episode with the policy (sampled with ``seed``, greedy without), or the rule when there are no weights."""
    from engine.learned.environment import ReadSpeakEnvironment
    from engine.learned.training_set import episode_slowdown

    slowdown = episode_slowdown(episode)
    if slowdown not in environments:
        environments[slowdown] = ReadSpeakEnvironment(voice, voice_slowdown=slowdown, timer=voice.timer)
    agent: SamplingAgent | RuleAgent = RuleAgent()  # no weights: the rule the warm start imitates
    if policy_weights is not None:
        agent = SamplingAgent(NumpyPolicy(policy_weights), np.random.default_rng(seed) if seed is not None else None)
    outcome = environments[slowdown].run(episode, agent)
    return {
        "index": index, "seed": seed, "observations": np.asarray(outcome.observations, np.float32),
        "actions": np.asarray(outcome.actions, np.int64), "costs": outcome.step_costs(reward_weights),
        "return": episode_return(outcome, reward_weights), "lag_mean_s": outcome.lag_mean_s,
        "lag_median_s": outcome.lag_median_s, "underruns": outcome.underruns, "distance_db": outcome.distance_db,
    }  # fmt: skip


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
        self.cached_bytes = 0

    def run(self, policy_weights: dict | None, jobs: Sequence[tuple[int, int | None]]) -> list[dict]:
        n = len(self.connections)
        shares: list[list[tuple[int, int | None]]] = [[] for _ in range(n)]
        for job in jobs:
            shares[job[0] % n].append(job)
        for connection, share in zip(self.connections, shares, strict=True):
            connection.send(("run", policy_weights, share))
        results, rates, sizes = [], [], []
        for connection in self.connections:
            answer = connection.recv()
            if isinstance(answer, Exception):
                raise answer
            part, rate, size = answer
            results.extend(part)
            rates.append(rate)
            sizes.append(size)
        self.hit_rate, self.cached_bytes = statistics.fmean(rates), sum(sizes)
        order = {job: n for n, job in enumerate(jobs)}
        return sorted(results, key=lambda r: order[(r["index"], r["seed"])])

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


# ----- the network and its update (torch)
def _network(speak_bias: float):  # noqa: ANN202 - a torch Module
    import torch
    from torch import nn

    class PolicyNet(nn.Module):
        """GRU over the observations; policy and value heads read its state and the current observation."""

        def __init__(self) -> None:
            super().__init__()
            self.gru = nn.GRU(N_FEATURES, HIDDEN, batch_first=True)
            self.head = nn.Sequential(nn.Linear(HIDDEN + N_FEATURES, HEAD), nn.Tanh(), nn.Linear(HEAD, 2))
            self.value = nn.Sequential(nn.Linear(HIDDEN + N_FEATURES, HEAD), nn.Tanh(), nn.Linear(HEAD, 1))
            with torch.no_grad():
                self.head[2].bias.copy_(torch.tensor([0.0, speak_bias]))

        def forward(self, observations, hidden=None):  # noqa: ANN001, ANN201
            states, hidden = self.gru(observations, hidden)
            features = torch.cat([states, observations], dim=-1)
            return self.head(features), self.value(features).squeeze(-1), hidden

    return PolicyNet()


def _numpy_weights(model) -> dict[str, np.ndarray]:  # noqa: ANN001
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items() if not k.startswith("value")}


def _discounted_to_go(costs, discount: float):  # noqa: ANN001, ANN202 - torch tensors
    """Per step: its cost plus the later ones, each step further discounted by ``discount``."""
    import torch

    out = torch.empty_like(costs)
    running = torch.zeros(())
    for t in range(len(costs) - 1, -1, -1):
        running = costs[t] + discount * running
        out[t] = running
    return out


def _update(model, optimizer, results: list[dict], settings: TrainSettings) -> dict:  # noqa: ANN001
    """One policy-gradient step. Each decision's advantage is its reward-to-go minus a baseline: the mean of the
    value head's estimate (learned) and, when the episode was replayed more than once in the batch, the mean
    reward-to-go of the other replays at the same recognizer step (leave-one-out), which takes out how hard the
    episode is. The value head learns the reward-to-go."""
    import torch

    runs = []
    for result in results:
        obs = torch.from_numpy(result["observations"]).unsqueeze(0)
        costs = torch.from_numpy(result["costs"]).float()
        to_go = -_discounted_to_go(costs, settings.discount)
        logits, values, _ = model(obs)
        runs.append((result["index"], logits[0], values[0], torch.from_numpy(result["actions"]), to_go))
    advantages = []
    for index, _, values, _, to_go in runs:
        others = [g for i, _, _, _, g in runs if i == index and g is not to_go]
        baseline = values.detach()
        if others:
            baseline = 0.5 * (baseline + torch.stack(others).mean(0))
        advantages.append(to_go - baseline)
    flat = torch.cat(advantages)
    mean, std = flat.mean(), flat.std().clamp_min(1e-6)
    policy_loss = value_loss = entropy = torch.zeros(())
    steps = len(flat)
    for (_, logits, values, actions, to_go), advantage in zip(runs, advantages, strict=True):
        logp = torch.log_softmax(logits, -1)
        chosen = logp.gather(1, actions.unsqueeze(1)).squeeze(1)
        policy_loss = policy_loss - (((advantage - mean) / std) * chosen).sum() / steps
        value_loss = value_loss + ((values - to_go) ** 2).sum() / steps
        entropy = entropy - (logp.exp() * logp).sum() / steps
    loss = policy_loss + settings.value_weight * value_loss - settings.entropy * entropy
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return {"loss": float(loss.detach()), "value_loss": float(value_loss.detach()), "entropy": float(entropy.detach())}


def imitate(model, results: list[dict], steps: int = 300, lr: float = 1e-2) -> float:  # noqa: ANN001
    """Warm start: fit the policy head to the actions of ``results`` (the rule's), cross-entropy over whole
    sequences; returns the share of actions the fitted policy then takes greedily as the rule did."""
    import torch

    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    sequences = [(torch.from_numpy(r["observations"]).unsqueeze(0), torch.from_numpy(r["actions"])) for r in results]
    for _ in range(steps):
        loss = torch.zeros(())
        for obs, actions in sequences:
            logits, _, _ = model(obs)
            loss = loss + torch.nn.functional.cross_entropy(logits[0], actions, reduction="sum")
        optimizer.zero_grad()
        (loss / sum(len(a) for _, a in sequences)).backward()
        optimizer.step()
    with torch.no_grad():
        agree = sum(int((model(obs)[0][0].argmax(-1) == actions).sum()) for obs, actions in sequences)
    return agree / sum(len(a) for _, a in sequences)


def _summary(results: list[dict]) -> dict:
    actions = np.concatenate([r["actions"] for r in results]) if results else np.zeros(0)
    return {
        "return": statistics.fmean(r["return"] for r in results),
        "lag_mean_s": statistics.fmean(r["lag_mean_s"] for r in results),
        "underruns": statistics.fmean(r["underruns"] for r in results),
        "distance_db": statistics.fmean(r["distance_db"] for r in results),
        "speak_share": float(np.mean(actions == SPEAK)) if actions.size else 0.0,
    }


# ----- the episodes
def _load_recorded(path: Path) -> list[Episode]:
    """The episodes recorded so far; a line cut short by an interrupted run is dropped (and recorded again)."""
    if not path.is_file():
        return []
    episodes, good = [], 0
    raw = path.read_bytes()
    for line in raw.splitlines(keepends=True):
        try:
            episodes.append(Episode.from_json(line.decode("utf-8")))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            log.warning("%s: dropping a cut-short episode line (it is recorded again)", path)
            break
        good += len(line)
    if good < len(raw):
        with open(path, "r+b") as stream:
            stream.truncate(good)
    return episodes


def record_episodes(settings: TrainSettings, progress=print) -> list[Episode]:  # noqa: ANN001
    from engine.learned.training_set import record_training_set
    from engine.paths import shared_speech_dir

    path = settings.out / EPISODES_FILE
    episodes = _load_recorded(path)
    if not settings.record:
        if not episodes:
            raise ValueError(f"no episodes in {path}")
        return episodes
    speech_dir = settings.speech_dir or shared_speech_dir()
    manifest = speech_dir / "manifest.jsonl"
    if not manifest.is_file():
        raise FileNotFoundError(f"no manifest.jsonl in {speech_dir} (the recordings to train on)")
    entries = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    done = {e.id for e in episodes}
    with open(path, "a", encoding="utf-8") as stream:
        for episode in record_training_set(entries, speech_dir, _LazyModels(), done, settings.tempos,  # type: ignore[arg-type]
                                           settings.slowdowns, progress):  # fmt: skip
            stream.write(episode.to_json() + "\n")
            stream.flush()
            episodes.append(episode)
    if not episodes:
        raise ValueError(f"no training recordings in {manifest} (every one is held out for evaluation)")
    return episodes


class _LazyModels:
    """Loads the recognizer only if an episode is still to be recorded (a resumed run usually has them all)."""

    def __init__(self) -> None:
        self._models = None

    def __getattr__(self, name: str):  # noqa: ANN204
        if self._models is None:
            from engine.pipeline.config import ShadowConfig
            from engine.pipeline.models import Models

            self._models = Models.load(ShadowConfig())
        return getattr(self._models, name)


# ----- export
def export_onnx(model, path: Path) -> None:  # noqa: ANN001
    """One decision step: (observation [1, F], hidden [1, H]) → (probabilities [1, 2], hidden_out [1, H])."""
    import onnx
    import torch

    from engine.tts.learned.agent import FEATURES_KEY, INPUT, OUTPUT, STATE_IN, STATE_OUT

    class Step(torch.nn.Module):
        def __init__(self, net) -> None:  # noqa: ANN001
            super().__init__()
            self.net = net

        def forward(self, observation, hidden):  # noqa: ANN001, ANN201
            logits, _, state = self.net(observation.unsqueeze(1), hidden.unsqueeze(0))
            return torch.softmax(logits[:, 0], -1), state[0]

    step = Step(model).eval()
    example = (torch.zeros(1, N_FEATURES), torch.zeros(1, HIDDEN))
    partial = path.with_name(path.name + ".partial")
    with warnings.catch_warnings():  # the legacy exporter's notes on batch sizes (this graph is batch 1)
        warnings.simplefilter("ignore")
        torch.onnx.export(step, example, str(partial), input_names=[INPUT, STATE_IN],
                          output_names=[OUTPUT, STATE_OUT], opset_version=17, dynamo=False)  # fmt: skip
    graph = onnx.load(str(partial))
    entry = graph.metadata_props.add()
    entry.key, entry.value = FEATURES_KEY, ",".join(FEATURE_NAMES)
    onnx.save(graph, str(partial))
    partial.replace(path)


def plot_curve(history: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sampled = [h for h in history if "return" in h]
    its = [h["iteration"] for h in sampled]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    axes[0].plot(its, [h["return"] for h in sampled], label="sampled (batch mean)", alpha=0.6)
    greedy = [h for h in history if "greedy_return" in h]
    if greedy:
        axes[0].plot([h["iteration"] for h in greedy], [h["greedy_return"] for h in greedy], "o-", label="greedy")
    axes[0].set_title("return")
    axes[0].legend()
    axes[1].plot(its, [h["lag_mean_s"] for h in sampled], label="lag mean (s)")
    axes[1].plot(its, [h["underruns"] for h in sampled], label="underruns per episode")
    axes[1].set_title("latency and gaps (sampled)")
    axes[1].legend()
    axes[2].plot(its, [h["distance_db"] for h in sampled], label="word distance (dB)")
    axes[2].plot(its, [h["speak_share"] for h in sampled], label="SPEAK share")
    axes[2].set_title("quality and actions (sampled)")
    axes[2].legend()
    for ax in axes:
        ax.set_xlabel("iteration")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ----- the loop
def train(settings: TrainSettings, progress=print) -> Path:  # noqa: ANN001
    import torch

    settings.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(1)
    episodes = record_episodes(settings, progress)
    progress(f"{len(episodes)} training episodes, {sum(e.audio_s for e in episodes) / 60:.1f} min of speech")
    model = _network(settings.speak_bias)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    history: list[dict] = []
    best: dict = {"return": -float("inf"), "state": None, "iteration": 0}
    checkpoint = settings.out / CHECKPOINT_FILE
    start = 0
    if checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        history, best, start = saved["history"], saved["best"], saved["iteration"]
        progress(f"resumed at iteration {start} of {settings.iterations}")
    pool = WorkerPool(settings.out / EPISODES_FILE, settings.workers, settings.weights)
    greedy_jobs = [(i, None) for i in range(len(episodes))]
    try:
        if start == 0 and settings.warm_start:
            rule = pool.run(None, greedy_jobs)
            agreement = imitate(model, rule)
            summary = _summary(rule)
            history.append({"iteration": 0, "rule_agreement": agreement,
                            **{f"rule_{k}": v for k, v in summary.items()}})  # fmt: skip
            progress(f"warm start: the rule (SPEAK with >= 12 phonemes pending and < 1 s in hand) returns "
                     f"{summary['return']:.3f} (lag {summary['lag_mean_s']:.2f} s, underruns "
                     f"{summary['underruns']:.2f}, distance {summary['distance_db']:.2f} dB); the policy imitates "
                     f"{agreement:.0%} of its actions")  # fmt: skip
        if start == 0:  # the policy REINFORCE starts from, for the curve
            greedy = _summary(pool.run(_numpy_weights(model), greedy_jobs))
            history.append({"iteration": 0, **{f"greedy_{k}": v for k, v in greedy.items()}})
            best = {"return": greedy["return"], "iteration": 0,
                    "state": {k: v.clone() for k, v in model.state_dict().items()}}  # fmt: skip
            progress(f"the starting policy, greedy: return {greedy['return']:.3f}, lag {greedy['lag_mean_s']:.2f} s, "
                     f"underruns {greedy['underruns']:.2f}, distance {greedy['distance_db']:.2f} dB")  # fmt: skip
        for iteration in range(start + 1, settings.iterations + 1):
            t0 = time.perf_counter()
            rng = np.random.default_rng([settings.seed, iteration])
            picks = rng.choice(len(episodes), size=min(settings.batch, len(episodes)), replace=False)
            jobs = [(int(i), int(rng.integers(2**31))) for i in picks for _ in range(settings.replays)]
            results = pool.run(_numpy_weights(model), jobs)
            stats = _update(model, optimizer, results, settings)
            row = {"iteration": iteration, **_summary(results), **stats, "cache_hit_rate": pool.hit_rate,
                   "seconds": time.perf_counter() - t0}  # fmt: skip
            if iteration % settings.eval_every == 0 or iteration == settings.iterations:
                greedy = _summary(pool.run(_numpy_weights(model), greedy_jobs))
                row.update({f"greedy_{k}": v for k, v in greedy.items()})
                if greedy["return"] > best["return"]:
                    best = {"return": greedy["return"], "iteration": iteration,
                            "state": {k: v.clone() for k, v in model.state_dict().items()}}  # fmt: skip
            history.append(row)
            progress(_progress_line(row, settings.iterations))
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "history": history,
                        "best": best, "iteration": iteration, "settings": repr(settings)},
                       str(checkpoint) + ".partial")  # fmt: skip
            Path(str(checkpoint) + ".partial").replace(checkpoint)
            with open(settings.out / HISTORY_FILE, "w", encoding="utf-8") as stream:
                stream.writelines(json.dumps(h) + "\n" for h in history)
            if iteration % settings.eval_every == 0:
                plot_curve(history, settings.out / CURVE_FILE)
    finally:
        pool.close()
    if best["state"] is not None:
        model.load_state_dict(best["state"])
    path = settings.out / POLICY_FILE
    export_onnx(model, path)
    plot_curve(history, settings.out / CURVE_FILE)
    progress(f"best greedy return {best['return']:.3f} at iteration {best['iteration']}; policy: {path}; "
             f"curve: {settings.out / CURVE_FILE}")  # fmt: skip
    return path


def _progress_line(row: dict, total: int) -> str:
    line = (f"iteration {row['iteration']}/{total}: return {row['return']:.3f}, lag {row['lag_mean_s']:.2f} s, "
            f"underruns {row['underruns']:.2f}, distance {row['distance_db']:.2f} dB, SPEAK {row['speak_share']:.2f}, "
            f"cache hits {row['cache_hit_rate']:.0%}, {row['seconds']:.1f} s")  # fmt: skip
    if "greedy_return" in row:
        line += (f" | greedy: return {row['greedy_return']:.3f}, lag {row['greedy_lag_mean_s']:.2f} s, "
                 f"underruns {row['greedy_underruns']:.2f}, distance {row['greedy_distance_db']:.2f} dB")  # fmt: skip
    return line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="folder for episodes, checkpoint, curve and policy")
    parser.add_argument("--speech-dir", type=Path, help="recordings with manifest.jsonl (default ../shared/speech)")
    parser.add_argument("--iterations", type=int, default=TrainSettings.iterations)
    parser.add_argument("--batch", type=int, default=TrainSettings.batch, help="episodes per iteration")
    parser.add_argument("--discount", type=float, default=TrainSettings.discount,
                        help="the reward-to-go's discount per recognizer step (1 = none)")  # fmt: skip
    parser.add_argument("--replays", type=int, default=TrainSettings.replays, help="replays of each per iteration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=TrainSettings.lr)
    parser.add_argument("--workers", type=int, default=2, help="replaying processes (one per core)")
    defaults = RewardWeights()
    parser.add_argument("--lag-weight", type=float, default=defaults.lag, help="return: per second of mean lag")
    parser.add_argument("--underrun-weight", type=float, default=defaults.underrun, help="return: per underrun")
    parser.add_argument("--quality-weight", type=float, default=defaults.quality,
                        help="return: per dB of mean word distance from the whole-sentence voice")  # fmt: skip
    parser.add_argument("--tempos", default="0.85,1,1.2,1.4", help="training recordings replayed at these tempos")
    parser.add_argument("--slowdowns", default="1,2", help="... and at these CPU slowdowns")


def settings_from(args: argparse.Namespace) -> TrainSettings:
    def floats(text: str) -> tuple[float, ...]:
        return tuple(float(x) for x in text.split(",") if x.strip())

    return TrainSettings(out=args.out, speech_dir=args.speech_dir, iterations=args.iterations, batch=args.batch,
                         replays=args.replays, discount=args.discount,
                         weights=RewardWeights(lag=args.lag_weight, underrun=args.underrun_weight,
                                               quality=args.quality_weight),
                         seed=args.seed, lr=args.lr, workers=args.workers, tempos=floats(args.tempos),
                         slowdowns=floats(args.slowdowns))  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.learned.train", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)  # a line per recognizer step otherwise
    train(settings_from(args), progress=lambda line: print(line, flush=True))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
