"""The trained READ/SPEAK policy as the app runs it: an ONNX graph in onnxruntime, its GRU state carried along.

torch trains the policy (``train.py``) and exports one decision step as ONNX: observation and hidden state in,
READ/SPEAK probabilities and the next hidden state out. The app never imports torch. The graph's metadata names
the features it was trained on; a file that is missing, corrupt or made for other features is refused with a
``PolicyLoadError`` saying which, and the session falls back to lookahead-1.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from engine import paths
from engine.tts.learned.driver import FEATURE_NAMES, N_FEATURES, READ, SPEAK, Observation

log = logging.getLogger(__name__)

LEARNED = "learned"  # the policy's name in settings, reports and the command line
POLICY_FILE = "learned_policy.onnx"
FALLBACK_POLICY = "lookahead-1"
INPUT, STATE_IN = "observation", "hidden"
OUTPUT, STATE_OUT = "probabilities", "hidden_out"
FEATURES_KEY = "liveshadow.features"


class PolicyLoadError(RuntimeError):
    """The learned policy's weights cannot be used (the message says why)."""


def default_policy_path() -> Path:
    """The policy shipped with liveshadow (``assets/learned_policy.onnx``)."""
    return paths.assets_dir() / POLICY_FILE


class LearnedAgent:
    """Greedy decisions of the trained policy: SPEAK when its SPEAK probability is above ``threshold``."""

    name = "learned"

    def __init__(self, path: Path | str | None = None, threshold: float = 0.5) -> None:
        import onnxruntime as ort

        self.path = Path(path) if path is not None else default_policy_path()
        if not self.path.is_file():
            raise PolicyLoadError(f"the learned policy's weights are missing: {self.path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types for a file that is not a model
            raise PolicyLoadError(f"the learned policy's weights cannot be read from {self.path}: {exc}") from exc
        meta = self._session.get_modelmeta().custom_metadata_map
        features = tuple(meta.get(FEATURES_KEY, "").split(","))
        if features != FEATURE_NAMES:
            raise PolicyLoadError(f"{self.path} was trained on other features ({meta.get(FEATURES_KEY)!r}); "
                                  f"this version observes {','.join(FEATURE_NAMES)}")  # fmt: skip
        inputs = {i.name: i.shape for i in self._session.get_inputs()}
        if set(inputs) != {INPUT, STATE_IN} or inputs[INPUT][-1] != N_FEATURES:
            raise PolicyLoadError(f"{self.path} is not a READ/SPEAK policy graph (inputs {inputs})")
        self.hidden_size = int(inputs[STATE_IN][-1])
        self.threshold = threshold
        self._state = np.zeros((1, self.hidden_size), np.float32)
        self.last_speak_probability = 0.0

    def probabilities(self, vector: np.ndarray) -> np.ndarray:
        """READ/SPEAK probabilities for one feature vector; advances the hidden state."""
        probs, self._state = self._session.run(
            [OUTPUT, STATE_OUT], {INPUT: np.asarray(vector, np.float32).reshape(1, N_FEATURES), STATE_IN: self._state}
        )
        return probs.reshape(-1)

    def decide(self, observation: Observation) -> int:
        probs = self.probabilities(observation.vector())
        self.last_speak_probability = float(probs[SPEAK])
        return SPEAK if probs[SPEAK] > self.threshold else READ

    def reset(self) -> None:
        self._state = np.zeros((1, self.hidden_size), np.float32)


def driven_agent(name: str, warnings: list[str] | None = None, path: Path | str | None = None):  # noqa: ANN201
    """The agent of a policy the READ/SPEAK driver runs (``learned``, ``wait-K-steps``), or None for the others.

    The learned policy's weights that cannot load give None too, the reason logged as a warning and appended to
    ``warnings`` (the caller then uses ``FALLBACK_POLICY``)."""
    from engine.tts.learned.driver import WaitStepsAgent, wait_steps_k

    k = wait_steps_k(name)
    if k is not None:
        return WaitStepsAgent(k)
    if name != LEARNED:
        return None
    try:
        return LearnedAgent(path)
    except PolicyLoadError as exc:
        message = f"{exc}; the voice uses {FALLBACK_POLICY} instead"
        log.warning("%s", message)
        if warnings is not None:
            warnings.append(message)
        return None


def voice_policy(name: str, k: int, warnings: list[str] | None = None):  # noqa: ANN201
    """The synthesizer's policy for a voice policy name, and the agent that drives it (None for the rule policies:
    ``lookahead``, ``lookahead-K``, ``full``, ``naive``). Learned weights that cannot load give ``FALLBACK_POLICY``
    (the reason in ``warnings``, see ``driven_agent``)."""
    from engine.tts.learned.driver import AgentPolicy
    from engine.tts.policies import make_policy

    agent = driven_agent(name, warnings)
    if agent is not None:
        return AgentPolicy(k=1, name=agent.name), agent
    return make_policy(FALLBACK_POLICY if name == LEARNED else name, k=k), None
