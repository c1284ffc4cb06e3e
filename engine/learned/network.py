"""The READ/SPEAK policy network's shape, and its forward pass in numpy (training's sampling workers run it).

A GRU reads the observations one decision at a time (its hidden state is the policy's memory of the session so
far); a small MLP reads the GRU's state and the current observation and gives READ/SPEAK logits. Training
(``train.py``, torch) has the same network plus a value head (the learned baseline); the app runs the ONNX export
(``agent.py``). Parameter names are torch's, so a ``state_dict`` converted to numpy arrays is read here as is.
"""

from __future__ import annotations

import numpy as np

from engine.tts.learned.driver import N_FEATURES

HIDDEN = 32
HEAD = 32


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class NumpyPolicy:
    """Policy forward from torch-named weights: ``gru.weight_ih_l0`` …, ``head.0.weight`` …, ``head.2.bias``."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
        self.w_ih, self.w_hh = w["gru.weight_ih_l0"], w["gru.weight_hh_l0"]
        self.b_ih, self.b_hh = w["gru.bias_ih_l0"], w["gru.bias_hh_l0"]
        self.h0_w, self.h0_b = w["head.0.weight"], w["head.0.bias"]
        self.h2_w, self.h2_b = w["head.2.weight"], w["head.2.bias"]
        self.hidden = self.w_hh.shape[1]
        if self.w_ih.shape != (3 * self.hidden, N_FEATURES):
            raise ValueError(f"the policy reads {self.w_ih.shape[1]} features, the engine gives {N_FEATURES}")

    def initial_state(self) -> np.ndarray:
        return np.zeros(self.hidden)

    def step(self, x: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(READ/SPEAK probabilities, the next hidden state) for one observation vector."""
        x = np.asarray(x, np.float64)
        gi = self.w_ih @ x + self.b_ih
        gh = self.w_hh @ h + self.b_hh
        n = self.hidden
        r = _sigmoid(gi[:n] + gh[:n])
        z = _sigmoid(gi[n : 2 * n] + gh[n : 2 * n])
        cand = np.tanh(gi[2 * n :] + r * gh[2 * n :])
        h_next = (1.0 - z) * cand + z * h
        features = np.concatenate([h_next, x])
        logits = self.h2_w @ np.tanh(self.h0_w @ features + self.h0_b) + self.h2_b
        logits = logits - logits.max()
        probs = np.exp(logits) / np.exp(logits).sum()
        return probs, h_next
