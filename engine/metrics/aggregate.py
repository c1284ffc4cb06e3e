"""The aggregate form every report uses for a figure taken over words, chunks or recordings."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def aggregate(values: Iterable[float]) -> dict[str, float | int | None]:
    """``{"min", "median", "p90", "max", "mean", "n"}`` over the finite values; figures are None when n == 0.

    Non-finite values (NaN, inf) are left out of the figures, since one broken measurement must not poison a
    report, but they are still counted in ``n_nonfinite`` when present so nothing is hidden.
    """
    array = np.asarray(list(values), dtype=np.float64)
    finite = array[np.isfinite(array)]
    result: dict[str, float | int | None]
    if finite.size == 0:
        result = {"min": None, "median": None, "p90": None, "max": None, "mean": None, "n": 0}
    else:
        result = {
            "min": float(finite.min()),
            "median": float(np.median(finite)),
            "p90": float(np.percentile(finite, 90)),
            "max": float(finite.max()),
            "mean": float(finite.mean()),
            "n": int(finite.size),
        }
    skipped = int(array.size - finite.size)
    if skipped:
        result["n_nonfinite"] = skipped
    return result


def is_aggregate(value: object) -> bool:
    """True for a dict in the shape ``aggregate`` returns."""
    return isinstance(value, dict) and {"min", "median", "p90", "max", "mean", "n"} <= value.keys()


def finite_or_none(value: float) -> float | None:
    """JSON has no NaN: map non-finite figures to None (null)."""
    return value if math.isfinite(value) else None
