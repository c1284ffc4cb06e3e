"""A benchmark run several times: each headline figure of every run, with its median and range over the runs.

On a 2-core VM one run of the same code can differ from the next by several underruns (the sonnet at ``--cpu-slowdown
2`` had 0 in one run and 7 in the next), so a change or a target is judged on
the median over runs, with the range beside it.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One headline figure of a run: its key in the summary, how to read it from a run, how to print it."""

    key: str
    read: Callable[[dict], float | int | None]
    unit: str = ""
    digits: int = 2
    count: bool = False  # a count (underruns, words): every run's value is printed, not only the range

    def text(self, value: float | int | None, unit: bool = True) -> str:
        if value is None:
            return "-"
        if self.count:  # a median of counts is a whole number or a half
            number = f"{int(value)}" if float(value).is_integer() else f"{value:.1f}"
        else:
            number = f"{value:.{self.digits}f}"
        return number + (self.unit if unit else "")


def run_progress(progress: Callable[[str], None] | None, run: int, repeat: int) -> Callable[[str], None] | None:
    """``progress`` with each message prefixed by its run ("run 2/3: ..."); as it is for a single run."""
    if progress is None or repeat == 1:
        return progress
    return lambda text: progress(f"run {run}/{repeat}: {text}")


def over_runs(values: Sequence[float | int | None]) -> dict:
    """``{"runs", "median", "min", "max"}``: every run's value, and the median and range of those that exist."""
    present = [v for v in values if v is not None]
    if not present:
        return {"runs": list(values), "median": None, "min": None, "max": None}
    return {"runs": list(values), "median": statistics.median(present), "min": min(present), "max": max(present)}


def summarize(runs: Sequence[dict], figures: Sequence[Figure]) -> dict[str, dict]:
    """Each figure over ``runs`` (one dict per run, as ``Figure.read`` expects)."""
    return {figure.key: over_runs([figure.read(run) for run in runs]) for figure in figures}


def format_summary(summary: dict[str, dict], figures: Sequence[Figure]) -> list[str]:
    """One line per figure, ``key median (min to max)``; a count also lists every run's value."""
    lines = []
    for figure in figures:
        values = summary[figure.key]
        text = f"{figure.key} {figure.text(values['median'])}"
        if values["median"] is not None:
            text += f" ({figure.text(values['min'], unit=False)} to {figure.text(values['max'])}"
            if figure.count:
                text += "; per run " + ", ".join(figure.text(v) for v in values["runs"])
            text += ")"
        lines.append(text)
    return lines


def repeated_report(reports: Sequence[dict], over: dict) -> dict:
    """The report of a benchmark run ``len(reports)`` times: every run's report whole, and ``over_runs``."""
    first = reports[0]
    return {
        "bench": first["bench"],
        "repeat": len(reports),
        "machine": first["machine"],
        "config": first["config"],
        "over_runs": over,
        "repeats": list(reports),
    }
