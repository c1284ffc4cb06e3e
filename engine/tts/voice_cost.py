"""The voice's compute per call, modelled instead of measured, for runs that must not depend on the machine's load
(the deterministic replay of ``scripts/voice_replay.py``, the learned policy's training test).

Medians measured on the 2-core AMD EPYC VM (2026-11-24, ``scripts/voice_replay.py calibrate``): Stage I's text part
by the ids it reads (interpolated), the flow linear in the frames it runs on (the chunk's and ``FLOW_MARGIN`` either
side), Stage II by the frames it decodes (interpolated).
"""

from __future__ import annotations

import numpy as np

from engine.tts.voice_split import flow_window

STAGE1_IDS = ([20, 40, 80, 120, 160, 240, 340, 600], [0.0118, 0.0152, 0.0217, 0.0327, 0.0542, 0.0811, 0.149, 0.40])
FLOW = (0.00221, 0.000158)  # seconds, + seconds per frame
STAGE2_FRAMES = ([0, 24, 40, 80, 160, 320, 640], [0.002, 0.0171, 0.0279, 0.0565, 0.1323, 0.2754, 0.56])


def stage1_s(ids: int) -> float:
    return float(np.interp(ids, *STAGE1_IDS))


def flow_s(total: int, start: int, stop: int) -> float:
    """The flow's call for the latent frames ``start:stop`` of a prior ``total`` frames long (it reads a margin)."""
    first, last = flow_window(total, start, stop)
    return FLOW[0] + FLOW[1] * (last - first)


def stage2_s(frames: int) -> float:
    return float(np.interp(frames, *STAGE2_FRAMES))
