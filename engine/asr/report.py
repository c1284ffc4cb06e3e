"""Transcription figures (METRICS.md): commit latency against reference word end times, WERs, RTF, lag."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from engine.asr.run import StreamRun
from engine.asr.stream_values import CommittedWord
from engine.asr.words import Word, normalize_token
from engine.metrics import aggregate
from engine.metrics import names as m
from engine.metrics.wer import wer


def commit_latencies(committed: Sequence[CommittedWord], reference: Sequence[Word]) -> list[float]:
    """Per committed word matched to a reference word (in order): commit time − the reference word's end."""
    hyp_keys = [normalize_token(w.text) for w in committed]
    ref_keys = [normalize_token(w.text) for w in reference]
    latencies = []
    matcher = SequenceMatcher(a=hyp_keys, b=ref_keys, autojunk=False)
    for block in matcher.get_matching_blocks():
        for i in range(block.size):
            latencies.append(committed[block.a + i].commit_s - reference[block.b + i].end_s)
    return latencies


def transcription_report(
    run: StreamRun,
    reference_text: str | None,
    reference_words: Sequence[Word],
    reference_source: str,
    offline_text: str | None,
) -> dict:
    hypothesis = " ".join(w.text for w in run.committed)
    latencies = commit_latencies(run.committed, reference_words)
    wer_offline = wer(reference_text, offline_text) if reference_text is not None and offline_text is not None else None
    return {
        m.COMMIT_LATENCY_S: aggregate(latencies),
        "commit_latency_reference": reference_source,
        m.WER_COMMITTED: wer(reference_text, hypothesis) if reference_text is not None else None,
        m.WER_OFFLINE: wer_offline,
        m.RTF_ASR: run.compute_s / run.audio_s if run.audio_s else None,
        m.BEHIND_S: run.behind_s,
        "committed_text": hypothesis,
        "offline_text": offline_text,
        "words": [
            {"text": w.text, "start_s": w.start_s, "end_s": w.end_s, "commit_s": w.commit_s} for w in run.committed
        ],
        "steps": {
            "n": len(run.step_compute_s),
            "compute_s": aggregate(run.step_compute_s),
            "buffer_s": aggregate(run.step_buffer_s),
        },
        "audio_s": run.audio_s,
    }
