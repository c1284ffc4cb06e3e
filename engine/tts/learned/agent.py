"""The trained policy as the app runs it: an ONNX graph in onnxruntime choosing the rule's move, now, or wait.

torch trains the policy (``engine.learned.train``) and exports it as ONNX: the features of one decision in
(``moves.MOVE_FEATURES``), the probabilities of ``RULE``, ``NOW`` and ``WAIT`` out. The app never imports torch. The
graph's metadata names the features it was trained on; a file that is missing, corrupt or made for other features is
refused with a ``PolicyLoadError`` saying which, and the session falls back to lookahead-1.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from engine import paths
from engine.tts.learned.moves import MOVE_FEATURES, MOVES, N_MOVE_FEATURES, MoveObservation

log = logging.getLogger(__name__)

LEARNED = "learned"  # the policy's name in settings, reports and the command line
POLICY_FILE = "learned_policy.onnx"
FALLBACK_POLICY = "lookahead-1"
INPUT = "observation"
OUTPUT = "probabilities"
FEATURES_KEY = "liveshadow.features"


class PolicyLoadError(RuntimeError):
    """The learned policy's weights cannot be used (the message says why)."""


def default_policy_path() -> Path:
    """The policy shipped with liveshadow (``assets/learned_policy.onnx``)."""
    return paths.assets_dir() / POLICY_FILE


class LearnedAgent:
    """Greedy moves of the trained policy: the most probable."""

    name = LEARNED
    moves = True

    def __init__(self, path: Path | str | None = None) -> None:
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
        if features != MOVE_FEATURES:
            raise PolicyLoadError(
                f"{self.path} was trained on other features ({meta.get(FEATURES_KEY)!r}); "
                f"this version observes {','.join(MOVE_FEATURES)}"
            )
        inputs = {i.name: i.shape for i in self._session.get_inputs()}
        outputs = {o.name: o.shape for o in self._session.get_outputs()}
        if set(inputs) != {INPUT} or inputs[INPUT][-1] != N_MOVE_FEATURES or outputs.get(OUTPUT, [0])[-1] != len(MOVES):
            raise PolicyLoadError(f"{self.path} is not a move policy graph (inputs {inputs}, outputs {outputs})")
        self.last_probabilities = np.zeros(len(MOVES))

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """``RULE``/``NOW``/``WAIT`` probabilities, one row per feature vector."""
        batch = np.asarray(vectors, np.float32).reshape(-1, N_MOVE_FEATURES)
        (probs,) = self._session.run([OUTPUT], {INPUT: batch})
        return probs

    def decide(self, observation: MoveObservation) -> int:
        probs = self.probabilities(observation.vector())[0]
        self.last_probabilities = probs
        return int(np.argmax(probs))

    def reset(self) -> None:
        pass


def driven_agent(name: str, warnings: list[str] | None = None, path: Path | str | None = None):
    """The agent of a policy: ``learned`` (a move agent, ``moves``), ``wait-K-steps`` (the READ/SPEAK driver's), or
    None for the rule policies.

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


def voice_policy(name: str, k: int, warnings: list[str] | None = None):
    """The synthesizer's policy for a voice policy name, and the agent that drives it (None for the rule policies:
    ``lookahead``, ``lookahead-K``, ``full``, ``naive``). The learned policy runs on lookahead-1 with its move agent;
    weights that cannot load give ``FALLBACK_POLICY`` (the reason in ``warnings``, see ``driven_agent``)."""
    from engine.tts.learned.driver import AgentPolicy
    from engine.tts.policies import LookaheadPolicy, make_policy

    agent = driven_agent(name, warnings)
    if is_move_agent(agent):
        return LookaheadPolicy(k=1), agent
    if agent is not None:
        return AgentPolicy(k=1, name=agent.name), agent
    return make_policy(FALLBACK_POLICY if name == LEARNED else name, k=k), None


def is_move_agent(agent: object) -> bool:
    """``agent`` chooses the learned policy's moves (``moves.MoveAgent``), not READ/SPEAK."""
    return bool(getattr(agent, "moves", False))
