"""Split a Piper (VITS) ONNX voice into two stages with the noise as graph inputs.

Stage I: phoneme ids + noise → latent frames ``[1, 192, T]`` + frames per phoneme id (durations). It is kept as
two graphs: the text part (encoder, durations, the prior's sample per frame) and the flow (prior → latent). The flow
is convolutional and sees only ``FLOW_MARGIN`` frames either side, so the latent of a chunk needs the flow on the
chunk's frames and that margin only, not on all the left context the text part reads (half of Stage I's compute).
Stage II: latent frames → waveform (the decoder / vocoder).

The stock graph draws its noise inside (``RandomNormalLike``), so the same text gives different audio run to
run; turning both draws into inputs makes the output a pure function of text and noise, which is what lets an
incremental synthesizer fix the noise by absolute position. The split graphs are cached, keyed by the voice
file's hash, and rebuilt when missing or corrupt.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine import paths
from engine.hashing import file_sha256

if TYPE_CHECKING:  # onnx (and ml_dtypes under it) takes a second to import: only a cold cache's split needs it
    import onnx

log = logging.getLogger(__name__)

# Tensor names in Piper's VITS export (see shared/docs/FINDINGS.md)
DURATION_NOISE = "/dp/RandomNormalLike_output_0"  # [1, 2, phonemes], the stochastic duration predictor's draw
LATENT_NOISE = "/RandomNormalLike_output_0"  # [1, 192, frames], the prior's draw
DURATIONS = "/Ceil_output_0"  # frames per phoneme id
LATENT = "/Mul_7_output_0"  # flow output × mask: the decoder's only outside input
PRIOR = "/Add_output_0"  # the prior's sample per frame (mean + noise × scale), the flow's input
FRAME_MASK = "/Cast_2_output_0"  # [1, 1, frames], all ones for one sequence: the flow's other input
TEXT_INPUTS = ("input", "input_lengths", "scales")
WAVEFORM = "output"

# Names of the inputs and outputs in the split graphs
NOISE_DURATION_INPUT = "noise_duration"
NOISE_LATENT_INPUT = "noise_latent"
LATENT_CHANNELS = 192
# The flow's four couplings each stack four convolutions of kernel 5: 32 frames either side reach every frame that
# changes a frame's latent (measured: 24 frames give 5e-6 of difference, 32 none).
FLOW_MARGIN = 32
SPLIT_FORMAT_VERSION = 2  # bump when the split changes, so old caches are rebuilt
MANIFEST = "split.json"  # written last: hashes of the graphs


def flow_window(total: int, start: int, stop: int) -> tuple[int, int]:
    """The frames ``first:last`` the flow reads for the latent frames ``start:stop`` of a prior ``total`` long."""
    return max(start - FLOW_MARGIN, 0), min(stop + FLOW_MARGIN, total)


class VoiceSplitError(RuntimeError):
    """The voice cannot be split: a file is missing or the graph is not the one this code knows."""


@dataclass(frozen=True, slots=True)
class SplitVoice:
    """Paths of the graphs made from one voice file (all with the noise as inputs)."""

    full: Path  # the whole voice, noise as inputs (reference for bit-exactness)
    text: Path  # Stage I's first part: ids + noise → prior per frame + durations
    flow: Path  # Stage I's second part: prior → latent
    stage2: Path

    @classmethod
    def in_folder(cls, folder: Path) -> SplitVoice:
        return cls(*(folder / name for name in ("full.onnx", "stage1_text.onnx", "stage1_flow.onnx", "stage2.onnx")))

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.full, self.text, self.flow, self.stage2)


def _noise_as_input(model: onnx.ModelProto, tensor: str, new_name: str, channels: int | str) -> None:
    """Replace the node that draws ``tensor`` by a slice of a new graph input ``new_name`` ``[1, channels, N]``.

    The draw's length (phonemes, or frames, which the graph only knows after predicting durations) is taken
    from the draw's own template tensor, so the caller may pass any noise at least that long: noise fixed by
    absolute position, sliced to what the graph needs.
    """
    from onnx import TensorProto, helper

    graph = model.graph
    producers = [node for node in graph.node if tensor in node.output]
    if not producers:
        raise VoiceSplitError(f"tensor {tensor!r} not found in the voice graph; this is not a known Piper voice")
    node = producers[0]
    if node.op_type != "RandomNormalLike":
        raise VoiceSplitError(f"tensor {tensor!r} is made by {node.op_type}, not RandomNormalLike")
    template = node.input[0]
    index = list(graph.node).index(node)
    graph.node.remove(node)
    prefix = f"/liveshadow/{new_name}"
    new_nodes = [
        helper.make_node("Shape", [template], [f"{prefix}/length"], start=2, end=3),
        helper.make_node("Slice", [new_name, f"{prefix}/zero", f"{prefix}/length", f"{prefix}/axis"], [tensor]),
    ]
    graph.initializer.extend(
        [
            helper.make_tensor(f"{prefix}/zero", TensorProto.INT64, [1], [0]),
            helper.make_tensor(f"{prefix}/axis", TensorProto.INT64, [1], [2]),
        ]
    )
    for offset, new_node in enumerate(new_nodes):
        graph.node.insert(index + offset, new_node)
    graph.input.append(helper.make_tensor_value_info(new_name, TensorProto.FLOAT, [1, channels, f"{new_name}_n"]))


def _check_tensor(model: onnx.ModelProto, tensor: str) -> None:
    known = {out for node in model.graph.node for out in node.output} | {i.name for i in model.graph.input}
    if tensor not in known:
        raise VoiceSplitError(f"tensor {tensor!r} not found in the voice graph; this is not a known Piper voice")


def _save_atomic(model: onnx.ModelProto, path: Path) -> None:
    """Write to a temporary file in the same folder and rename, so a crash never leaves half a graph."""
    import onnx

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        onnx.save(model, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def build_split(voice_path: Path, out_dir: Path) -> SplitVoice:
    """Split ``voice_path`` into ``out_dir`` (always rebuilds)."""
    import onnx
    import onnx.utils

    try:
        model = onnx.load(str(voice_path))
    except Exception as exc:  # onnx raises DecodeError and friends for a broken file
        raise VoiceSplitError(f"cannot read the voice model {voice_path}: {exc}") from exc
    for tensor in (DURATIONS, LATENT, PRIOR, FRAME_MASK):
        _check_tensor(model, tensor)
    input_names = {i.name for i in model.graph.input}
    for name in TEXT_INPUTS:
        if name not in input_names:
            raise VoiceSplitError(f"tensor {name!r} not found in the voice graph's inputs")
    _noise_as_input(model, DURATION_NOISE, NOISE_DURATION_INPUT, 2)
    _noise_as_input(model, LATENT_NOISE, NOISE_LATENT_INPUT, LATENT_CHANNELS)
    split = SplitVoice.in_folder(out_dir)
    _save_atomic(model, split.full)
    extractor = onnx.utils.Extractor(model)
    stage1_inputs = [*TEXT_INPUTS, NOISE_DURATION_INPUT, NOISE_LATENT_INPUT]
    _save_atomic(extractor.extract_model(stage1_inputs, [PRIOR, DURATIONS]), split.text)
    _save_atomic(extractor.extract_model([PRIOR, FRAME_MASK], [LATENT]), split.flow)
    _save_atomic(extractor.extract_model([LATENT], [WAVEFORM]), split.stage2)
    manifest = {"version": SPLIT_FORMAT_VERSION, "files": {p.name: file_sha256(p) for p in split.files}}
    (out_dir / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    for stale in set(out_dir.glob("*.onnx")) - set(split.files):  # an older split's graphs
        stale.unlink(missing_ok=True)
    return split


def _cache_is_valid(split: SplitVoice, manifest_path: Path) -> bool:
    """The cache is used only when every graph's hash matches what was written (catches truncation and bit rot)."""
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if manifest.get("version") != SPLIT_FORMAT_VERSION:
            return False
        for path in split.files:
            if file_sha256(path) != manifest["files"][path.name]:
                log.warning("cached voice graph %s is corrupt; rebuilding", path)
                return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    return True


def split_voice(voice_path: Path | str, cache_root: Path | None = None) -> SplitVoice:
    """The split graphs of a voice, from the cache when valid, else built now (a few seconds, once)."""
    voice_path = Path(voice_path)
    if not voice_path.is_file():
        raise VoiceSplitError(f"voice model not found: {voice_path}")
    key = file_sha256(voice_path)[:16]
    out_dir = (cache_root or paths.cache_dir() / "voices") / f"{voice_path.stem}-{key}"
    split = SplitVoice.in_folder(out_dir)
    if _cache_is_valid(split, out_dir / MANIFEST):
        return split
    log.info("splitting the voice %s into two stages (cached in %s)", voice_path.name, out_dir)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    return build_split(voice_path, out_dir)
