"""A stress set made from real recordings: fast joined speech, quiet, clipped, noisy and telephone-band versions.

``liveshadow stress-set --out DIR [--manifest M] [--recordings all|ID,ID,..]`` writes ``DIR/manifest.jsonl`` and
``DIR/wav/*.wav`` in the manifest format of ``shared/speech``, each entry with a ``condition``;
``liveshadow bench shadow --manifest DIR/manifest.jsonl`` runs on it and reports per condition.

Conditions (every one seeded, so the set is the same each time it is made):
- ``fast_joined``: every recording of the manifest with its leading and trailing silence cut, joined without pauses,
  twice (the second time in reverse order), at 1.2× tempo (sox's WSOLA: faster, same pitch): several minutes of
  continuous fast speech;
- ``quiet``: scaled to −35 dBFS (RMS of the speech); ``clipped``: +12 dB over full scale, clipped;
- ``white_10db``, ``babble_10db``: white noise, or four other recordings mixed (babble), at 10 dB SNR;
- ``telephone``: 8 kHz telephone band (300–3400 Hz), back at 16 kHz;
- ``short_phrases``: phrases of one to three words cut at word boundaries from the recordings with word times,
  between pauses: someone saying short things one at a time, after which Whisper tends to say the phrase again into
  the silence ("he was he");
- ``silence_60s``, ``noise_60s``: nothing said (the reference is empty; any word spoken is an insertion).

Word times of the manifest are kept where a condition does not move them (level, noise, band) and dropped where it
does (the joined speech: its lag is measured against the recognizer's word times).
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.asr.backend import SAMPLE_RATE
from engine.asr.bench import load_manifest
from engine.asr.vad import FRAME, SileroVad, speech_flags, speech_span
from engine.audio.io import load_audio
from engine.audio.resample import resample

log = logging.getLogger(__name__)

DEFAULT_RECORDINGS = (
    "ls_2412-153948-0000",
    "librivox_ss_0870",
    "mfa_acoustic_corpus",
    "jfk_inaugural",
    "ljspeech_LJ001-0001",
    "vctk_p225_002",
)
FAST_TEMPO = 1.2
QUIET_DBFS = -35.0
CLIP_GAIN_DB = 12.0
SNR_DB = 10.0
BABBLE_TALKERS = 4
TELEPHONE_RATE = 8000
TELEPHONE_LOW_HZ = 300.0
EDGE_KEEP_S = 0.05  # of silence kept at each end of a recording in the joined speech
SHORT_PHRASES = 24
SHORT_MAX_WORDS = 3
SHORT_PAUSE_S = 2.0  # of near-silence before each short phrase (and after the last)
SHORT_QUIET_DBFS = -60.0


class StressSetError(RuntimeError):
    pass


def rms(signal: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(signal, dtype=np.float64)))) or 1e-9


def speech_rms(audio: np.ndarray, flags: np.ndarray) -> float:
    """RMS over the frames ``flags`` (``vad.speech_flags``) call speech (the whole signal if none)."""
    return rms(audio[: flags.size * FRAME].reshape(-1, FRAME)[flags] if flags.any() else audio)


def trim_silence(audio: np.ndarray, vad: SileroVad) -> np.ndarray:
    span = speech_span(audio, vad, EDGE_KEEP_S)
    return audio if span is None else audio[span[0] : span[1]]


def at_level(audio: np.ndarray, dbfs: float, level: float) -> np.ndarray:
    """Scaled so that its speech (RMS ``level``) sits at ``dbfs``."""
    return (audio * (10 ** (dbfs / 20) / level)).astype(np.float32)


def clipped(audio: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(audio))) or 1.0
    return np.clip(audio / peak * 10 ** (CLIP_GAIN_DB / 20), -1.0, 1.0).astype(np.float32)


def with_noise(audio: np.ndarray, noise: np.ndarray, snr_db: float, level: float) -> np.ndarray:
    """``noise`` (looped or cut to length) scaled to ``snr_db`` below the speech (RMS ``level``), added; peaks kept
    below 1."""
    noise = np.resize(noise, audio.size).astype(np.float64)
    noise *= level / rms(noise) / 10 ** (snr_db / 20)
    mixed = audio + noise
    peak = float(np.max(np.abs(mixed)))
    return (mixed / peak * 0.99 if peak > 0.99 else mixed).astype(np.float32)


def babble(others: Sequence[np.ndarray], length: int) -> np.ndarray:
    """Several talkers at once: each recording looped to ``length``, normalized, summed."""
    out = np.zeros(length, np.float64)
    for i, other in enumerate(others):
        talker = np.roll(np.resize(other, length), i * length // max(len(others), 1))
        out += talker / rms(talker)
    return out.astype(np.float32)


def telephone(audio: np.ndarray) -> np.ndarray:
    """Down to 8 kHz (soxr's filter takes out everything above ~3.4–4 kHz), below 300 Hz removed, back to 16 kHz."""
    narrow = resample(audio, SAMPLE_RATE, TELEPHONE_RATE)
    spectrum = np.fft.rfft(narrow)
    spectrum[np.fft.rfftfreq(narrow.size, 1 / TELEPHONE_RATE) < TELEPHONE_LOW_HZ] = 0
    return resample(np.fft.irfft(spectrum, narrow.size).astype(np.float32), TELEPHONE_RATE, SAMPLE_RATE)


def tempo(audio: np.ndarray, factor: float) -> np.ndarray:
    """Faster speech at the same pitch, with sox's ``tempo`` (WSOLA)."""
    sox = shutil.which("sox")
    if sox is None:
        raise StressSetError("sox is not installed (Debian package sox; scripts/setup installs it)")
    with tempfile.TemporaryDirectory(prefix="liveshadow-stress-") as folder:
        src, dst = Path(folder) / "in.wav", Path(folder) / "out.wav"
        sf.write(str(src), audio, SAMPLE_RATE, subtype="FLOAT")
        done = subprocess.run([sox, str(src), str(dst), "tempo", "-s", f"{factor}"], capture_output=True, text=True)
        if done.returncode != 0:
            raise StressSetError(f"sox tempo failed: {done.stderr.strip()}")
        return load_audio(dst)


def short_phrases(
    entries: Sequence[dict], audio: dict[str, np.ndarray], rng: np.random.Generator, count: int = SHORT_PHRASES
) -> tuple[np.ndarray, str, list[dict]] | None:
    """``count`` phrases of 1..``SHORT_MAX_WORDS`` words, each after ``SHORT_PAUSE_S`` of near-silence; cut halfway
    between a phrase's words and its neighbours (word times from forced alignment). Returns the audio, the words said
    and the recordings cut from; None without word times."""
    timed = [e for e in entries if e.get("word_times")]
    if not timed:
        return None
    pause = int(SHORT_PAUSE_S * SAMPLE_RATE)
    quiet_rms = 10 ** (SHORT_QUIET_DBFS / 20)
    pieces: list[np.ndarray] = []
    said: list[str] = []
    for i in range(count):
        entry = timed[i % len(timed)]
        times, clean = entry["word_times"], audio[entry["id"]]
        n = int(rng.integers(1, min(SHORT_MAX_WORDS, len(times)) + 1))
        first = int(rng.integers(0, len(times) - n + 1))
        start, end = max(times[first][1] - EDGE_KEEP_S, 0.0), times[first + n - 1][2] + EDGE_KEEP_S
        if first > 0:
            start = max(start, (times[first - 1][2] + times[first][1]) / 2)
        if first + n < len(times):
            end = min(end, (times[first + n - 1][2] + times[first + n][1]) / 2)
        pieces += [quiet_rms * rng.standard_normal(pause), clean[int(start * SAMPLE_RATE) : int(end * SAMPLE_RATE)]]
        said += [w[0] for w in times[first : first + n]]
    pieces.append(quiet_rms * rng.standard_normal(pause))
    return np.concatenate(pieces).astype(np.float32), " ".join(said), timed


def build(manifest: Path, out_dir: Path, recordings: Sequence[str] | None = None, seed: int = 0) -> list[dict]:
    """Write the stress set into ``out_dir``; returns its manifest entries."""
    entries = load_manifest(manifest)
    if not entries:
        raise StressSetError(f"{manifest} lists no recordings")
    by_id = {e["id"]: e for e in entries}
    chosen = list(recordings) if recordings else [i for i in DEFAULT_RECORDINGS if i in by_id]
    missing = [i for i in chosen if i not in by_id]
    if missing or not chosen:
        raise StressSetError(f"not in {manifest}: {', '.join(missing) or 'any of the default recordings'}")
    (out_dir / "wav").mkdir(parents=True, exist_ok=True)
    vad = SileroVad()
    rng = np.random.default_rng(seed)
    audio = {e["id"]: load_audio(e["path"]) for e in entries}
    out: list[dict] = []

    def write(entry_id: str, samples: np.ndarray, text: str, condition: str, source: dict | None) -> None:
        wav = f"wav/{entry_id}.wav"
        sf.write(str(out_dir / wav), np.clip(samples, -1, 1), SAMPLE_RATE, subtype="PCM_16")
        out.append(
            {
                "id": entry_id,
                "wav": wav,
                "text": text,
                "duration_s": round(samples.size / SAMPLE_RATE, 3),
                "condition": condition,
                "source_id": source["id"] if source else None,
                "speaker": source.get("speaker") if source else None,
                "corpus": source.get("corpus") if source else None,
                "licence": source.get("licence") if source else "made by liveshadow (no speech)",
                "word_times": source.get("word_times") if source and condition != "fast_joined" else None,
            }
        )

    order = [*entries, *reversed(entries)]
    joined = np.concatenate([trim_silence(audio[e["id"]], vad) for e in order])
    write("fast_joined", tempo(joined, FAST_TEMPO), " ".join(e["text"] for e in order), "fast_joined", None)
    for entry_id in chosen:
        entry, clean = by_id[entry_id], audio[entry_id]
        level = speech_rms(clean, speech_flags(clean, vad))
        others = [audio[e["id"]] for e in entries if e["id"] != entry_id][:BABBLE_TALKERS]
        variants = {
            "quiet": at_level(clean, QUIET_DBFS, level),
            "clipped": clipped(clean),
            "white_10db": with_noise(clean, rng.standard_normal(clean.size).astype(np.float32), SNR_DB, level),
            "babble_10db": with_noise(clean, babble(others, clean.size), SNR_DB, level),
            "telephone": telephone(clean),
        }
        for condition, samples in variants.items():
            write(f"{condition}__{entry_id}", samples, entry["text"], condition, entry)
    phrases = short_phrases(entries, audio, np.random.default_rng([seed, 1]))  # the other conditions' draws kept
    if phrases is not None:
        samples, text, sources = phrases
        cut_from = {
            "id": ",".join(e["id"] for e in sources),
            "licence": "; ".join(sorted({e["licence"] for e in sources})),
        }
        write("short_phrases", samples, text, "short_phrases", cut_from)
    minute = 60 * SAMPLE_RATE
    write("silence_60s", np.zeros(minute, np.float32), "", "silence_60s", None)
    write("noise_60s", (0.03 * rng.standard_normal(minute)).astype(np.float32), "", "noise_60s", None)
    with open(out_dir / "manifest.jsonl", "w", encoding="utf-8") as stream:
        for entry in out:
            stream.write(json.dumps(entry) + "\n")
    return out
