"""The move policy network's shape, and its forward pass in numpy (training's replaying workers run it).

An MLP reads one decision's features (``moves.MOVE_FEATURES``) and gives the logits of ``RULE``, ``NOW`` and
``WAIT``; the features carry what the decision needs of the past (recent commits, stability, voice in hand), so it
has no memory of its own. Training (``train.py``, torch) has the same network plus a value head; the app runs the ONNX
export (``engine/tts/learned/agent.py``). Parameter names are torch's, so a ``state_dict`` converted to numpy
arrays is read here as is.
"""

from __future__ import annotations

import numpy as np

from engine.tts.learned.moves import MOVES, N_MOVE_FEATURES, MoveObservation

HIDDEN = 32
EXPLORE = 0.1  # the imitation start's probability of each move other than RULE: greedy it is the rule, sampled not


class NumpyPolicy:
    """Policy forward from torch-named weights: ``policy.0.weight`` …, ``policy.4.bias``."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
        self.layers = [(w[f"policy.{i}.weight"], w[f"policy.{i}.bias"]) for i in (0, 2, 4)]
        if self.layers[0][0].shape[1] != N_MOVE_FEATURES:
            reads = self.layers[0][0].shape[1]
            raise ValueError(f"the policy reads {reads} features, the engine gives {N_MOVE_FEATURES}")

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """(RULE, NOW, WAIT) probabilities for one feature vector (or a batch, one per row)."""
        h = np.asarray(x, np.float64)
        for i, (weight, bias) in enumerate(self.layers):
            h = h @ weight.T + bias
            if i < len(self.layers) - 1:
                h = np.tanh(h)
        h = h - h.max(axis=-1, keepdims=True)
        e = np.exp(h)
        return e / e.sum(axis=-1, keepdims=True)


class SamplingAgent:
    """The policy's moves, sampled with ``rng`` (training) or greedy without; keeps each move's log-probability."""

    name = "learned"
    moves = True

    def __init__(
        self, policy: NumpyPolicy, rng: np.random.Generator | None = None, mask: dict[int, float] | None = None
    ) -> None:
        """``mask``: features replaced by a constant (an ablation: index → value)."""
        self.policy, self.rng, self.mask = policy, rng, mask or {}
        self.log_probs: list[float] = []

    def decide(self, observation: MoveObservation) -> int:
        x = observation.vector()
        for index, value in self.mask.items():
            x[index] = value
        probs = self.policy.probabilities(x)
        if self.rng is None:
            move = int(np.argmax(probs))
        else:
            move = min(int(np.searchsorted(np.cumsum(probs), self.rng.random(), side="right")), len(MOVES) - 1)
        self.log_probs.append(float(np.log(max(probs[move], 1e-12))))
        return move

    def reset(self) -> None:
        self.log_probs = []
