"""Quality figures of incremental synthesis: ``word_distance_db`` and ``seam_snr_db`` (METRICS.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from engine.tts.pieces import AudioPiece

N_FFT = 1024
HOP = 256
N_MELS = 80
FLOOR = 1e-10


@lru_cache(maxsize=4)
def mel_filterbank(sample_rate: int, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """Triangular filters on the HTK mel scale, ``[n_mels, n_fft // 2 + 1]``."""

    def hz_to_mel(f: np.ndarray) -> np.ndarray:
        return 2595.0 * np.log10(1.0 + f / 700.0)

    def mel_to_hz(m: np.ndarray) -> np.ndarray:
        return 700.0 * (10 ** (m / 2595.0) - 1.0)

    edges = mel_to_hz(np.linspace(hz_to_mel(np.array(0.0)), hz_to_mel(np.array(sample_rate / 2)), n_mels + 2))
    freqs = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    bank = np.zeros((n_mels, freqs.size))
    for m in range(n_mels):
        lo, mid, hi = edges[m], edges[m + 1], edges[m + 2]
        rising = (freqs - lo) / max(mid - lo, 1e-9)
        falling = (hi - freqs) / max(hi - mid, 1e-9)
        bank[m] = np.clip(np.minimum(rising, falling), 0, None)
    return bank


def log_mel_db(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Log-mel power spectrogram in dB, ``[n_mels, frames]`` (at least one frame)."""
    audio = np.asarray(audio, dtype=np.float64)
    if audio.size < N_FFT:
        audio = np.pad(audio, (0, N_FFT - audio.size))
    frames = 1 + (audio.size - N_FFT) // HOP
    index = np.arange(N_FFT)[None, :] + HOP * np.arange(frames)[:, None]
    spectrum = np.abs(np.fft.rfft(audio[index] * np.hanning(N_FFT), axis=1)) ** 2
    return 10.0 * np.log10(np.maximum(mel_filterbank(sample_rate) @ spectrum.T, FLOOR))


def _warp(spec: np.ndarray, frames: int) -> np.ndarray:
    """Linear time warp of a spectrogram to ``frames`` frames (aligns a word's two renditions)."""
    if spec.shape[1] == frames:
        return spec
    source = np.linspace(0, spec.shape[1] - 1, frames)
    return np.stack([np.interp(source, np.arange(spec.shape[1]), row) for row in spec])


def spectral_distance_db(a: np.ndarray, b: np.ndarray, sample_rate: int) -> float:
    """Mean over aligned frames of the RMS log-mel difference (dB) between two renditions of a word."""
    spec_a, spec_b = log_mel_db(a, sample_rate), log_mel_db(b, sample_rate)
    spec_b = _warp(spec_b, spec_a.shape[1])
    return float(np.mean(np.sqrt(np.mean((spec_a - spec_b) ** 2, axis=0))))


def word_spans(pieces: Sequence[AudioPiece]) -> dict[tuple[int, int], tuple[int, int]]:
    """(sentence, word index) → (start, end) sample in the concatenation of the pieces."""
    spans = {}
    offset = 0
    for piece in pieces:
        for word in piece.words:
            spans[(word.sentence, word.index)] = (offset + word.start_sample, offset + word.end_sample)
        offset += piece.samples.size
    return spans


def word_distances_by_key(
    incremental: np.ndarray,
    incremental_pieces: Sequence[AudioPiece],
    reference: np.ndarray,
    reference_pieces: Sequence[AudioPiece],
    sample_rate: int,
) -> dict[tuple[int, int], float]:
    """Per word key (sentence, index), in key order: distance between the incremental and the reference
    (full-sentence) rendition."""
    inc, ref = word_spans(incremental_pieces), word_spans(reference_pieces)
    distances = {}
    for key in sorted(inc.keys() & ref.keys()):
        (a0, a1), (b0, b1) = inc[key], ref[key]
        if a1 > a0 and b1 > b0:
            distances[key] = spectral_distance_db(incremental[a0:a1], reference[b0:b1], sample_rate)
    return distances


def word_distances_db(
    incremental: np.ndarray,
    incremental_pieces: Sequence[AudioPiece],
    reference: np.ndarray,
    reference_pieces: Sequence[AudioPiece],
    sample_rate: int,
) -> list[float]:
    """Per word: distance between the incremental and the reference (full-sentence) rendition."""
    return list(
        word_distances_by_key(incremental, incremental_pieces, reference, reference_pieces, sample_rate).values()
    )


def snr_db(signal: np.ndarray, reference: np.ndarray) -> float:
    """SNR of ``signal`` against ``reference`` (same length is required); inf when they are identical."""
    if signal.shape != reference.shape:
        raise ValueError(f"lengths differ: {signal.shape} vs {reference.shape}")
    noise = float(np.sum((signal.astype(np.float64) - reference) ** 2))
    power = float(np.sum(reference.astype(np.float64) ** 2))
    if noise == 0.0:
        return float("inf")
    return 10.0 * np.log10(max(power, 1e-20) / noise)


def whole_sentence_voice(
    voice,
    tokens: Sequence[str],
    sizes,
    timer: Callable[[], float] = time.perf_counter,
) -> tuple[np.ndarray, list[AudioPiece]]:
    """``tokens`` spoken a whole sentence at a time (the reference ``word_distance_db`` is measured against), with
    the voice's own noise; the audio and its pieces."""
    from engine.tts.policies import FullSentencePolicy
    from engine.tts.synthesizer import IncrementalSynthesizer

    synthesizer = IncrementalSynthesizer(voice, FullSentencePolicy(), sizes, timer=timer)
    pieces = synthesizer.feed(list(tokens)) + synthesizer.flush()
    return (np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)), pieces


def session_word_distances(voice, pieces: Sequence[AudioPiece], sizes, rate: float = 1.0) -> list[float]:
    """``word_distance_db`` of every word a session spoke: its pieces against the same words (the tokens the voice
    was fed) synthesized a whole sentence at a time with the same noise, at the session's own speaking rate."""
    return list(session_word_distances_by_key(voice, pieces, sizes, rate).values())


def session_word_distances_by_key(
    voice,
    pieces: Sequence[AudioPiece],
    sizes,
    rate: float = 1.0,
) -> dict[tuple[int, int], float]:
    """``session_word_distances`` per word key (sentence, index), in key order."""
    if not pieces:
        return {}
    words = sorted({(w.sentence, w.index): w.text for p in pieces for w in p.words}.items())
    saved = voice.rate
    voice.rate = rate
    try:
        reference, reference_pieces = whole_sentence_voice(voice, [text for _, text in words], sizes)
    finally:
        voice.rate = saved
    spoken = np.concatenate([p.samples for p in pieces])
    return word_distances_by_key(spoken, pieces, reference, reference_pieces, voice.sample_rate)
