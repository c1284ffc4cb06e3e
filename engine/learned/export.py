"""What training writes besides the checkpoint: the policy as ONNX (what the app runs) and the training curve."""

from __future__ import annotations

import warnings
from pathlib import Path

from engine.tts.learned.moves import MOVE_FEATURES, N_MOVE_FEATURES


def export_onnx(model, path: Path) -> None:
    """The policy: observations [N, F] → probabilities of RULE, NOW and WAIT [N, 3]."""
    import onnx
    import torch

    from engine.tts.learned.agent import FEATURES_KEY, INPUT, OUTPUT

    class Policy(torch.nn.Module):
        def __init__(self, net) -> None:
            super().__init__()
            self.net = net

        def forward(self, observation):
            return torch.softmax(self.net.policy(observation), -1)

    policy = Policy(model).eval()
    partial = path.with_name(path.name + ".partial")
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the legacy exporter's notes
        warnings.simplefilter("ignore")
        torch.onnx.export(
            policy,
            (torch.zeros(1, N_MOVE_FEATURES),),
            str(partial),
            input_names=[INPUT],
            output_names=[OUTPUT],
            dynamic_axes={INPUT: {0: "n"}, OUTPUT: {0: "n"}},
            opset_version=17,
            dynamo=False,
        )
    graph = onnx.load(str(partial))
    entry = graph.metadata_props.add()
    entry.key, entry.value = FEATURES_KEY, ",".join(MOVE_FEATURES)
    onnx.save(graph, str(partial))
    partial.replace(path)


def plot_curve(history: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [h for h in history if "held_back_return" in h]
    its = [h["iteration"] for h in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    axes[0].plot(its, [h["held_back_return"] for h in rows], "o-", ms=3, label="held-back, updated policy")
    axes[0].plot(its, [h["kept_return"] for h in rows], "-", label="held-back, kept policy")
    sampled = [h for h in rows if "return" in h]
    axes[0].plot(
        [h["iteration"] for h in sampled], [h["return"] for h in sampled], alpha=0.5, label="training batch (sampled)"
    )
    axes[0].set_title("return")
    axes[0].legend(fontsize=7)
    axes[1].plot(its, [h["kept_lag_mean_s"] for h in rows], label="lag mean (s)")
    axes[1].plot(its, [h["kept_underruns"] for h in rows], label="underruns per episode")
    axes[1].set_title("held-back, kept policy")
    axes[1].legend(fontsize=7)
    axes[2].plot(its, [h["kept_distance_db"] for h in rows], label="word distance (dB)")
    axes[2].plot(its, [h["kept_now_share"] for h in rows], label="NOW share (greedy)")
    axes[2].plot(its, [h["kept_wait_share"] for h in rows], label="WAIT share (greedy)")
    axes[2].plot(
        [h["iteration"] for h in sampled], [h["now_share"] for h in sampled], alpha=0.5, label="NOW share (sampled)"
    )
    axes[2].set_title("quality and moves")
    axes[2].legend(fontsize=7)
    for ax in axes:
        ax.set_xlabel("iteration")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
