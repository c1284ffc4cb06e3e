"""Train the learned policy's moves with PPO, keeping only updates the held-back episodes confirm (torch; the app
never imports this module).

``liveshadow train-policy --out DIR`` (or ``python -m engine.learned.train_options --out DIR``):

1. records the episodes once (``training_set``: the recordings of ``../shared/speech`` and ``../shared/speech-hard``,
   the training ones at several tempos, all at several CPU slowdowns; the streaming recognizer run over each on the
   compute-aware clock, one process per core) into ``DIR/episodes.jsonl``;
2. starts from the rule: the network's greedy move is ``RULE`` on every state (its last layer's weights are zero and
   its bias leans to ``RULE``), so its greedy policy is lookahead-1 exactly, while sampling tries ``NOW`` and ``WAIT``;
3. each iteration, worker processes (one per core) replay a batch of training episodes through the session's own
   code with moves sampled from the policy (``environment.replay``, the voice cached and charged its modelled
   compute); PPO's clipped objective on the discounted cost-to-go minus a learned value; then the greedy policy is
   replayed on the held-back episodes, and the update is kept only if their mean return is no lower than the best
   so far (less a tolerance of 0.002), trying the whole step, half and a quarter of it (otherwise the network and
   the optimizer go back to where they were);
4. exports the best policy on the held-back episodes to ``DIR/learned_policy.onnx`` (copy it to ``assets/`` to ship
   it), writes ``DIR/training_curve.png`` and ``DIR/history.jsonl`` (the held-back figures per iteration).

``--ablate`` then replays the held-back episodes with each feature group replaced by its mean over the training
decisions (``moves.FEATURE_GROUPS``) and writes ``DIR/ablation.json``.

Seeded (``--seed``) and resumable: ``DIR/checkpoint.pt`` is written after every iteration and picked up again.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import multiprocessing as mp
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.learned.environment import RewardWeights
from engine.learned.episodes import Episode
from engine.learned.export import export_onnx, plot_curve
from engine.learned.network import EXPLORE, HIDDEN
from engine.learned.pool import WorkerPool
from engine.tts.learned.moves import FEATURE_GROUPS, MOVE_FEATURES, MOVES, N_MOVE_FEATURES

log = logging.getLogger(__name__)

EPISODES_FILE = "episodes.jsonl"
CHECKPOINT_FILE = "checkpoint.pt"
HISTORY_FILE = "history.jsonl"
CURVE_FILE = "training_curve.png"
POLICY_FILE = "learned_policy.onnx"
ABLATION_FILE = "ablation.json"


@dataclass
class TrainSettings:
    out: Path
    speech_dirs: tuple[Path, ...] = ()  # folders with manifest.jsonl; ../shared/speech and ../shared/speech-hard
    iterations: int = 60
    batch: int = 16  # training episodes replayed (sampled) per iteration
    discount: float = 0.8  # the cost-to-go's discount per decision
    seed: int = 0
    lr: float = 3e-3
    clip: float = 0.2  # PPO's probability-ratio clip
    # an update is kept if the held-back return falls no more than this below the best so far: a decision at the
    # boundary between two moves, flipped by every step, would otherwise hold the policy where it is for good
    tolerance: float = 0.002
    moves: tuple[str, ...] = MOVES  # the moves the policy may take (RULE always)
    epochs: int = 4  # passes over a batch per update
    entropy: float = 0.01
    value_weight: float = 0.5
    workers: int = 2
    record: bool = True  # record the missing episodes (False: train on DIR/episodes.jsonl as it is)
    tempos: tuple[float, ...] = (1.0, 1.2)
    slowdowns: tuple[float, ...] = (1.0, 2.0)
    weights: RewardWeights = field(default_factory=RewardWeights)


# ----- the network and its update (torch)
def network(moves: Sequence[str] = MOVES):
    """Policy and value MLPs on the features; the policy starts as the rule (greedy ``RULE`` on every state). A move
    not in ``moves`` is never taken (its logit starts at -30 and nothing rewards it)."""
    import torch
    from torch import nn

    class MoveNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            head = nn.Linear(HIDDEN, len(MOVES))
            self.policy = nn.Sequential(
                nn.Linear(N_MOVE_FEATURES, HIDDEN),
                nn.Tanh(),
                nn.Linear(HIDDEN, HIDDEN),
                nn.Tanh(),
                head,
            )
            self.value = nn.Sequential(nn.Linear(N_MOVE_FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1))
            with torch.no_grad():  # the imitation start: each other move's probability EXPLORE on every state
                head.weight.zero_()
                allowed = [m for m in MOVES[1:] if m in moves]
                other = math.log(EXPLORE / (1 - EXPLORE * len(allowed)))
                head.bias.copy_(torch.tensor([0.0] + [other if m in moves else -30.0 for m in MOVES[1:]]))

        def forward(self, observations):
            return self.policy(observations), self.value(observations).squeeze(-1)

    return MoveNet()


def numpy_weights(model) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items() if k.startswith("policy")}


def cost_to_go(costs: np.ndarray, discount: float) -> np.ndarray:
    """Per decision: its cost plus the later ones, each decision further discounted by ``discount``."""
    out = np.zeros(len(costs), np.float64)
    running = 0.0
    for t in range(len(costs) - 1, -1, -1):
        running = costs[t] + discount * running
        out[t] = running
    return out


def ppo_update(model, optimizer, results: list[dict], settings: TrainSettings) -> dict:
    """PPO's clipped surrogate over the batch's decisions: the advantage is minus the discounted cost-to-go less the
    value head's estimate (normalized over the batch); the value head learns the cost-to-go."""
    import torch

    kept = [r for r in results if len(r["moves"])]
    if not kept:
        return {"loss": 0.0, "decisions": 0}
    obs = torch.from_numpy(np.concatenate([r["observations"] for r in kept]))
    moves = torch.from_numpy(np.concatenate([r["moves"] for r in kept]))
    old = torch.from_numpy(np.concatenate([r["log_probs"] for r in kept]))
    returns = torch.from_numpy(np.concatenate([-cost_to_go(r["costs"], settings.discount) for r in kept])).float()
    with torch.no_grad():
        _, values = model(obs)
    advantages = returns - values
    advantages = (advantages - advantages.mean()) / advantages.std().clamp_min(1e-6)
    stats = {}
    for _ in range(settings.epochs):
        logits, values = model(obs)
        logp = torch.log_softmax(logits, -1)
        chosen = logp.gather(1, moves.unsqueeze(1)).squeeze(1)
        ratio = torch.exp(chosen - old)
        surrogate = torch.min(ratio * advantages, ratio.clamp(1 - settings.clip, 1 + settings.clip) * advantages)
        entropy = -(logp.exp() * logp).sum(-1).mean()
        value_loss = ((values - returns) ** 2).mean()
        loss = -surrogate.mean() + settings.value_weight * value_loss - settings.entropy * entropy
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        stats = {
            "loss": float(loss.detach()),
            "value_loss": float(value_loss.detach()),
            "entropy": float(entropy.detach()),
            "decisions": int(len(moves)),
        }
    return stats


BACKTRACK = (1.0, 0.5, 0.25)  # shares of an update's step tried, largest first (a line search, as TRPO's)


def guarded_update(
    model,
    optimizer,
    results: list[dict],
    settings: TrainSettings,
    held_back_return: Callable[[dict[str, np.ndarray]], float],
    kept_return: float,
) -> tuple[bool, float, dict]:
    """A PPO update kept only if the held-back return of the updated policy is no lower than ``kept_return``. The
    whole step is tried, then half and a quarter of it (a smaller step may leave the greedy moves that got worse as
    they were); when none holds, the network and the optimizer are put back. Returns (kept, the held-back return
    of the last step tried, the update's figures with the share of the step kept)."""
    import torch

    model_state = copy.deepcopy(model.state_dict())
    optimizer_state = copy.deepcopy(optimizer.state_dict())
    stats = ppo_update(model, optimizer, results, settings)
    updated = copy.deepcopy(model.state_dict())
    tried = kept_return
    for share in BACKTRACK:
        with torch.no_grad():
            model.load_state_dict({k: model_state[k] + share * (updated[k] - model_state[k]) for k in updated})
        tried = held_back_return(numpy_weights(model))
        if tried >= kept_return:
            return True, tried, {**stats, "step_kept": share}
    model.load_state_dict(model_state)
    optimizer.load_state_dict(optimizer_state)
    return False, tried, {**stats, "step_kept": 0.0}


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
            log.warning("%s: dropping an episode line this version cannot read (it is recorded again)", path)
            break
        good += len(line)
    if good < len(raw):
        with open(path, "r+b") as stream:
            stream.truncate(good)
    return episodes


_models = None


def _record_in_process(job):
    global _models
    from engine.learned.training_set import record_job

    if _models is None:
        from engine.pipeline.config import ShadowConfig
        from engine.pipeline.models import Models

        logging.getLogger("faster_whisper").setLevel(logging.WARNING)
        _models = Models.load(ShadowConfig())
    return record_job(job, _models).to_json()


def default_speech_dirs() -> tuple[Path, ...]:
    from engine.paths import shared_speech_dir

    speech = shared_speech_dir()
    return (speech, speech.parent / "speech-hard")


def record_episodes(settings: TrainSettings, progress=print) -> list[Episode]:
    """The episodes of ``settings`` (recorded now if missing, one process per worker), in job order."""
    from engine.learned.training_set import manifest_entries, recording_jobs

    path = settings.out / EPISODES_FILE
    recorded = {e.id: e for e in _load_recorded(path)}
    if not settings.record:
        if not recorded:
            raise ValueError(f"no episodes in {path}")
        return list(recorded.values())
    jobs = recording_jobs(
        manifest_entries(settings.speech_dirs or default_speech_dirs()), settings.tempos, settings.slowdowns
    )
    missing = [job for job in jobs if job.episode_id not in recorded]
    if missing:
        progress(f"recording {len(missing)} of {len(jobs)} episodes ({settings.workers} processes)")
        context = mp.get_context("spawn")
        with context.Pool(settings.workers) as pool, open(path, "a", encoding="utf-8") as stream:
            for number, line in enumerate(pool.imap_unordered(_record_in_process, missing), 1):
                stream.write(line + "\n")
                stream.flush()
                episode = Episode.from_json(line)
                recorded[episode.id] = episode
                progress(f"recorded episode {number}/{len(missing)}: {episode.id}")
    return [recorded[job.episode_id] for job in jobs]


def _held(episode: Episode) -> bool:
    from engine.learned.training_set import held_out, recording_id

    return held_out(recording_id(episode.id))


# ----- the loop
def _mean(results: list[dict]) -> dict:
    keys = ("return", "lag_mean_s", "lag_median_s", "underruns", "distance_db", "now_share", "wait_share")
    return {k: statistics.fmean(r[k] for r in results) for k in keys}


def train(settings: TrainSettings, progress=print) -> Path:
    import torch

    settings.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(1)
    episodes = record_episodes(settings, progress)
    training = [i for i, e in enumerate(episodes) if not _held(e)]
    held_back = [i for i, e in enumerate(episodes) if _held(e)]
    if not training or not held_back:
        raise ValueError(
            f"training needs training and held-back recordings ({len(training)} and {len(held_back)} "
            "episodes): a recording is held back by a hash of its id, about 2 in 5"
        )
    progress(
        f"{len(training)} training and {len(held_back)} held-back episodes, "
        f"{sum(e.audio_s for e in episodes) / 60:.1f} min of speech"
    )
    model = network(settings.moves)
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    history: list[dict] = []
    checkpoint = settings.out / CHECKPOINT_FILE
    start, kept, best = 0, None, None
    if checkpoint.is_file():
        saved = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        history, start, kept, best = saved["history"], saved["iteration"], saved["kept"], saved["best"]
        progress(f"resumed at iteration {start} of {settings.iterations}")
    pool = WorkerPool(settings.out / EPISODES_FILE, settings.workers, settings.weights)
    last: dict = {}

    def held_back_return(weights: dict) -> float:
        results = pool.run(weights, [(i, None) for i in held_back])
        last.clear()
        last.update(_mean(results))
        return last["return"]

    try:
        if kept is None:  # the imitation start: greedy, it is lookahead-1
            held_back_return(numpy_weights(model))
            kept = dict(last)
            best = {"figures": kept, "iteration": 0, "state": copy.deepcopy(model.state_dict())}
            history.append(
                {
                    "iteration": 0,
                    "held_back_return": kept["return"],
                    "kept_return": kept["return"],
                    "best_return": kept["return"],
                    **{f"kept_{k}": v for k, v in kept.items()},
                }
            )
            progress(
                f"the rule (the imitation start) on the held-back episodes: return {kept['return']:.4f}, lag "
                f"{kept['lag_mean_s']:.3f} s, underruns {kept['underruns']:.2f}, distance "
                f"{kept['distance_db']:.2f} dB"
            )
        assert best is not None
        for iteration in range(start + 1, settings.iterations + 1):
            t0 = time.perf_counter()
            rng = np.random.default_rng([settings.seed, iteration])
            picks = rng.choice(training, size=min(settings.batch, len(training)), replace=False)
            results = pool.run(numpy_weights(model), [(int(i), int(rng.integers(2**31))) for i in picks])
            floor = best["figures"]["return"] - settings.tolerance
            accepted, tried, stats = guarded_update(model, optimizer, results, settings, held_back_return, floor)
            tried_figures = dict(last)
            if accepted:
                kept = tried_figures
                if tried > best["figures"]["return"] + 1e-9:  # not the last bits of a sum
                    best = {"figures": kept, "iteration": iteration, "state": copy.deepcopy(model.state_dict())}
            row = {
                "iteration": iteration,
                **_mean(results),
                **stats,
                "accepted": accepted,
                "held_back_return": tried,
                "kept_return": kept["return"],
                "best_return": best["figures"]["return"],
                **{f"tried_{k}": v for k, v in tried_figures.items()},
                **{f"kept_{k}": v for k, v in kept.items()},
                "cache_hit_rate": pool.hit_rate,
                "seconds": time.perf_counter() - t0,
            }
            history.append(row)
            progress(_progress_line(row, settings.iterations))
            torch.save(
                {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "history": history,
                    "kept": kept,
                    "best": best,
                    "iteration": iteration,
                    "settings": repr(settings),
                },
                str(checkpoint) + ".partial",
            )
            Path(str(checkpoint) + ".partial").replace(checkpoint)
            with open(settings.out / HISTORY_FILE, "w", encoding="utf-8") as stream:
                stream.writelines(json.dumps(h) + "\n" for h in history)
            if iteration % 5 == 0:
                plot_curve(history, settings.out / CURVE_FILE)
    finally:
        pool.close()
    path = settings.out / POLICY_FILE
    model.load_state_dict(best["state"])
    export_onnx(model, path)
    plot_curve(history, settings.out / CURVE_FILE)
    figures = best["figures"]
    progress(
        f"best policy (iteration {best['iteration']}) on the held-back episodes: return {figures['return']:.4f} "
        f"(the rule's {history[0]['kept_return']:.4f}), lag {figures['lag_mean_s']:.3f} s, underruns "
        f"{figures['underruns']:.2f}, distance {figures['distance_db']:.2f} dB, NOW {figures['now_share']:.2f}, "
        f"WAIT {figures['wait_share']:.2f}; policy: {path}"
    )
    return path


def _progress_line(row: dict, total: int) -> str:
    verdict = "kept" if row["accepted"] else "rejected"
    return (
        f"iteration {row['iteration']}/{total}: batch return {row['return']:.3f} (NOW {row['now_share']:.2f}, "
        f"WAIT {row['wait_share']:.2f}); "
        f"update {verdict}: held-back {row['held_back_return']:.4f} (best {row['best_return']:.4f}; kept: "
        f"lag {row['kept_lag_mean_s']:.3f} s, underruns {row['kept_underruns']:.2f}, distance "
        f"{row['kept_distance_db']:.2f} dB, NOW {row['kept_now_share']:.2f}, WAIT {row['kept_wait_share']:.2f}); "
        f"{row['seconds']:.1f} s"
    )


def ablate(settings: TrainSettings, progress=print) -> dict:
    """The best policy on the held-back episodes with each feature group replaced by its mean over the training
    episodes' decisions: how much each group matters (a group whose removal changes nothing does not)."""
    import torch

    episodes = record_episodes(TrainSettings(out=settings.out, record=False))
    training = [i for i, e in enumerate(episodes) if not _held(e)]
    held_back = [i for i, e in enumerate(episodes) if _held(e)]
    model = network()
    model.load_state_dict(torch.load(settings.out / CHECKPOINT_FILE, weights_only=False)["best"]["state"])
    weights = numpy_weights(model)
    pool = WorkerPool(settings.out / EPISODES_FILE, settings.workers, settings.weights)
    try:
        observed = pool.run(weights, [(i, None) for i in training])
        means = np.concatenate([r["observations"] for r in observed if len(r["observations"])]).mean(0)
        rows = {"all features": _mean(pool.run(weights, [(i, None) for i in held_back]))}
        for group, names in FEATURE_GROUPS.items():
            mask = {MOVE_FEATURES.index(n): float(means[MOVE_FEATURES.index(n)]) for n in names}
            rows[f"without {group}"] = _mean(pool.run(weights, [(i, None, mask) for i in held_back]))
            progress(f"without {group}: return {rows[f'without {group}']['return']:.4f}")
    finally:
        pool.close()
    (settings.out / ABLATION_FILE).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return rows
