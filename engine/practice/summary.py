"""The figures of a scored attempt in words, one line each: what the command line prints under the two transcripts
and what the window's Practise summary shows."""

from __future__ import annotations

from engine.practice.score import ACCURACY, EVS_S, LONGEST_LOST_S, MISSED_WORDS, RATE_RATIO


def figure_lines(report: dict) -> list[str]:
    """A shadowing or (``task`` "interpret") an interpreting report's figures."""
    lines = _interpreting(report) if report.get("task") == "interpret" else _shadowing(report)
    if report.get("mode") == "sentence by sentence":
        lines += _sentences(report)
    elif report.get("mode") == "loop":
        lines += _passes(report)
    if report.get("speed", 1.0) != 1.0:
        lines.append(f"the source played at {report['speed']:g}x (its pitch kept): the times are as it played")
    machine = report.get("machine_lag_s")
    if machine and machine["median"] is not None:
        lines.append(f"liveshadow's own voice on this recording: lag median {machine['median']:.2f} s")
    return lines


def _shadowing(report: dict) -> list[str]:
    evs = report[EVS_S]
    if report.get("mode") == "sentence by sentence":  # repeated after it: the EVS is the sentence's length, not a lag
        lines = []
    elif evs["n"]:
        lines = [
            f"ear-voice span: median {evs['median']:.2f} s, p90 {evs['p90']:.2f} s, max {evs['max']:.2f} s "
            f"({evs['n']} words said of {report['source_words']})"
        ]
    else:
        lines = [f"no word of the source's {report['source_words']} was said"]
    accuracy, rate = report[ACCURACY], report[RATE_RATIO]
    line = f"accuracy {accuracy:.0%}" if accuracy is not None else "accuracy: the source has no words"
    line += (
        f"; missed {report[MISSED_WORDS]}, substituted {report['substituted_words']}, "
        f"added {report['added_words']}; longest stretch lost {report[LONGEST_LOST_S]:.1f} s"
    )
    if rate is not None:
        line += f"; your rate {rate:.2f}x the source's"
    return [*lines, line]


def _interpreting(report: dict) -> list[str]:
    lag = report["sentence_lag_s"]
    if lag["n"]:
        lines = [
            f"lag from a sentence's end to the end of yours: median {lag['median']:.2f} s, max "
            f"{lag['max']:.2f} s ({lag['n']} of {report['sentences']} sentences)"
        ]
    else:
        lines = [f"none of the {report['sentences']} sentences was rendered"]
    if report["chrf"] is not None:
        lines.append(f"chrF {report['chrf']:.1f} against {report['chrf_against']}")
    elif report.get("chrf_note"):
        lines.append(report["chrf_note"])
    return lines


def _sentences(report: dict) -> list[str]:
    """Sentence by sentence: a line per sentence (accuracy, how soon the person started, the words missed)."""
    rows = report["sentences"]
    started = report["started_after_s"]
    head = f"sentence by sentence: {report['sentences_said']} of {len(rows)} repeated"
    if started["n"]:
        head += f", started {started['median']:.2f} s after a sentence's end (median)"
    lines = [head]
    for row in rows:
        line = f"  {row['sentence']}. "
        line += "not repeated" if not row["attempt_text"] else f"{row['accuracy']:.0%}"
        if row["started_after_s"] is not None:
            line += f", started after {row['started_after_s']:.2f} s"
        if row["missed"]:
            line += f", missed: {', '.join(row['missed'])}"
        lines.append(line)
    return lines


def _passes(report: dict) -> list[str]:
    """An A-B loop: a line per pass, the best and the last marked."""
    loop, rows = report["loop"], report["passes"]
    lines = [f"loop {loop['a_s']:.1f}-{loop['b_s']:.1f} s: {len(rows)} pass{'es' if len(rows) != 1 else ''}"]
    for row in rows:
        marks = [m for m, n in (("best", report["best_pass"]), ("last", report["last_pass"])) if n == row["pass"]]
        line = f"  pass {row['pass']}" + (f": {row['accuracy']:.0%}" if row["accuracy"] is not None else "")
        if row["evs_s"] is not None:
            line += f", EVS median {row['evs_s']:.2f} s"
        if row["missed"]:
            line += f", missed: {', '.join(row['missed'])}"
        lines.append(line + (f" ({' and '.join(marks)})" if marks else ""))
    return lines
