"""``liveshadow shadow``: one recording (or the microphone) through the whole pipeline, with its report.

A file run always records the session (into a temporary folder unless asked for one): the output WAV it writes is
what ``--out`` copies and what the speech-chain check (``wer_spoken``) recognizes again.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np

from engine.asr.backend import SAMPLE_RATE
from engine.asr.offline import transcribe_long
from engine.asr.run import LongAudio
from engine.asr.transcribe import manifest_entry
from engine.asr.vad import FRAME as VAD_FRAME
from engine.asr.vad import speech_flags
from engine.asr.words import normalize_token
from engine.audio.io import load_audio
from engine.audio.played_track import PlayedTrack
from engine.audio.resample import resample
from engine.metrics import aggregate
from engine.metrics import names as m
from engine.metrics.shadowing import lag_drift_s
from engine.metrics.wer import wer
from engine.pipeline.config import ShadowConfig
from engine.pipeline.models import Models
from engine.pipeline.recorder import OUTPUT_WAV
from engine.pipeline.session import ShadowSession
from engine.tts.chunker import ChunkSizes
from engine.tts.policies import FullSentencePolicy
from engine.tts.quality import session_word_distances
from engine.tts.synthesizer import IncrementalSynthesizer, synthesize_text

log = logging.getLogger(__name__)


TRANSCRIPT_TEXT = "transcript_text"  # report key: the words of the session's captions after the whole pass
LEAD_IN_S = 0.5  # of the silence before the voice's first sound, what the speech-chain check keeps
SOUND_LEVEL = 1e-4  # the session writes digital silence (zeros) until the voice starts


def from_first_sound(audio: np.ndarray, lead_in_s: float = LEAD_IN_S) -> np.ndarray:
    """``audio`` from ``lead_in_s`` before its first sound (empty if it has none).

    How long a session waited before the voice spoke must not change what the speech-chain check hears: the same
    voice output of "Please call Stella." (vctk_p226_001), 2.52 s or 2.91 s into the file, was heard by Whisper as
    "Please call Stella." or "Please call still up." (that recording's ``wer_spoken`` 0 or 0.67)."""
    sound = np.flatnonzero(np.abs(audio) > SOUND_LEVEL)
    if not sound.size:
        return audio[:0]
    return audio[max(0, int(sound[0]) - round(lead_in_s * SAMPLE_RATE)) :]


def spoken_wer(models: Models, output_wav: Path, reference_text: str) -> tuple[float, str]:
    """Speech chain check: recognize the voice's output offline and score it against the reference."""
    audio = load_audio(output_wav, SAMPLE_RATE) if output_wav.stat().st_size > 44 else np.zeros(0, np.float32)
    audio = from_first_sound(audio)
    words = transcribe_long(models.backend, audio) if audio.size else []
    text = " ".join(w.text for w in words)
    return wer(reference_text, text), text


def spoken_floor(models: Models, reference_text: str, voice_rate: float = 1.0) -> tuple[float, str]:
    """The floor of ``wer_spoken``: the reference spoken whole by the voice (whole sentences, at ``voice_rate``) and
    recognized back as ``spoken_wer`` recognizes a session's voice. What the voice and the recognizer lose with no
    streaming at all; ``wer_spoken`` above it is the streaming's own cost. The transcript is spoken as written (one in
    capitals too: the voice reads them as words)."""
    voice = models.voice
    rate, voice.rate = voice.rate, voice_rate
    try:
        audio, _ = synthesize_text(IncrementalSynthesizer(voice, FullSentencePolicy()), reference_text)
    finally:
        voice.rate = rate
    audio = from_first_sound(resample(audio, voice.sample_rate, SAMPLE_RATE)) if audio.size else audio
    heard = " ".join(w.text for w in transcribe_long(models.backend, audio)) if audio.size else ""
    return wer(reference_text, heard), heard


def rescore_with_reference_times(report: dict, word_times: list) -> None:
    """Lags and commit latencies against the manifest's aligned word ends instead of the recognizer's."""
    words = report["words"]
    ref_keys = [normalize_token(t) for t, _, _ in word_times]
    hyp_keys = [normalize_token(w["text"]) for w in words]
    lags, latencies, ends = [], [], []
    for block in SequenceMatcher(a=hyp_keys, b=ref_keys, autojunk=False).get_matching_blocks():
        for i in range(block.size):
            word, ref_end = words[block.a + i], float(word_times[block.b + i][2])
            lags.append(word["speak_end_s"] - ref_end)
            latencies.append(word["commit_s"] - ref_end)
            ends.append(ref_end)
    report["ear_voice_lag_s_recognizer_times"] = report[m.EAR_VOICE_LAG_S]
    report[m.EAR_VOICE_LAG_S] = aggregate(lags)
    report["ear_voice_lag_values_s"] = lags
    report[m.COMMIT_LATENCY_S] = aggregate(latencies)
    report["commit_latency_values_s"] = latencies
    report[m.LAG_DRIFT_S] = lag_drift_s(ends, lags)
    report["source_times"] = "manifest word_times (forced alignment), matched to the spoken words"


def shadow_file(
    path: Path,
    config: ShadowConfig | None = None,
    models: Models | None = None,
    out: Path | None = None,
    record_dir: Path | None = None,
    realtime: bool = False,
    play: bool = False,
    entry: dict | None = None,
    speech_chain: bool = True,
    voice_quality: bool = False,
    keep_on_error: bool = False,
    hear: Callable[[np.ndarray, ShadowSession], LongAudio] | None = None,
    whole_pass: bool = False,
    progress: Callable[[float], None] | None = None,
) -> dict:
    """``voice_quality``: also ``word_distance_db`` of every spoken word against the whole-sentence voice (one more
    synthesis of the words; benchmarks and evaluation). A session stopped by an error (the output device of
    ``play`` went away) raises, unless ``keep_on_error``: then its report says why (``error``), keeps what was heard
    and said, and is not scored (a reference scored against half a session says nothing). ``hear`` turns the
    recording into what a microphone hears in a room where the voice plays (``engine.audio.room``): the session
    then writes the voice's played samples into its ``voice_track`` and its echo guard applies. ``whole_pass``: the
    session's recording is recognized again after it (``whole_pass.py``; ``progress`` hears the share done), its
    captions and transcript take those words, and the report has them (``transcript_text``, ``wer_transcript``)."""
    config = config or ShadowConfig()
    audio = load_audio(path)
    models = models or Models.load(config)
    entry = entry if entry is not None else manifest_entry(path)
    temporary = None
    if record_dir is None:
        temporary = tempfile.TemporaryDirectory(prefix="liveshadow-session-")
        record_dir = Path(temporary.name)
    try:
        session = ShadowSession(
            config, models, record_dir=record_dir, voice_track=PlayedTrack() if hear is not None else None
        )
        if voice_quality:
            session.flow.pieces = []
        heard = hear(audio, session) if hear is not None else audio
        figures = session.run_file(heard, realtime=realtime, output_device=config.output_device, play=play)
        if session.error and not keep_on_error:
            raise RuntimeError(session.error)
        report = figures.report()
        report["file"] = str(path)
        report["config"]["mode"] = "realtime" if realtime else "simulate"
        report["ear_voice_lag_values_s"] = [w[m.EAR_VOICE_LAG_S] for w in report["words"]]
        report["commit_latency_values_s"] = [w["commit_s"] - w["source_end_s"] for w in report["words"]]
        report["warnings"] = list(session.warnings)
        if session.flow.pieces is not None:
            distances = session_word_distances(
                models.voice,
                session.flow.pieces,
                ChunkSizes(config.first_chunk, config.chunk, config.phrase_chunk),
                config.voice_rate,
            )
            session.flow.pieces = None
            report[m.WORD_DISTANCE_DB] = aggregate(distances)
            report["word_distance_values_db"] = distances
        backend = models.backend
        report["spoken_language"] = getattr(backend, "language", "en")
        detected = getattr(backend, "detected", None)
        report["language_detected"] = {"language": detected[0], "probability": detected[1]} if detected else None
        if session.error:
            report[m.WER_COMMITTED] = report[m.WER_SPOKEN] = None
            return _finish(report, record_dir, out)
        if whole_pass:
            _pass_again(report, record_dir, models, progress)
        if entry and entry.get("word_times") and config.translate_from is None:
            rescore_with_reference_times(report, entry["word_times"])
        if config.translate_from is not None:
            _score_translation(report, entry, speech_end_s(audio, models))
            return _finish(report, record_dir, out)
        reference = entry.get("text") if entry else None
        report[m.WER_COMMITTED] = wer(reference, report["committed_text"]) if reference else None
        if report.get(TRANSCRIPT_TEXT) is not None:
            report[m.WER_TRANSCRIPT] = wer(reference, report[TRANSCRIPT_TEXT]) if reference else None
        report[m.WER_SPOKEN] = None
        if reference and speech_chain:
            report[m.WER_SPOKEN], report["spoken_recognized_text"] = spoken_wer(
                models, record_dir / OUTPUT_WAV, reference
            )
        return _finish(report, record_dir, out)
    finally:
        if temporary is not None:
            temporary.cleanup()


def _pass_again(report: dict, folder: Path, models: Models, progress: Callable[[float], None] | None) -> None:
    """The session's whole recording recognized again into its captions; the report gets the words (or why not)."""
    from engine.pipeline.whole_pass import WholePassError, WholePassSkipped, run_whole_pass

    try:
        words = run_whole_pass(folder, models.backend, progress)
    except WholePassSkipped as exc:  # a session the pass is not for (speakers, interpreting, vosk): nothing to warn
        log.info("%s", exc)
        return
    except WholePassError as exc:
        log.warning("%s", exc)
        report["warnings"].append(str(exc))
        return
    report[TRANSCRIPT_TEXT] = " ".join(w.text for w in words)


def _finish(report: dict, record_dir: Path, out: Path | None) -> dict:
    if out is not None:
        shutil.copyfile(record_dir / OUTPUT_WAV, out)
    return report


def speech_end_s(audio: np.ndarray, models: Models) -> float | None:
    """Where the recording's speech ends (the voice-activity detector's last speech frame), None without speech."""
    models.vad.reset()
    flags = np.flatnonzero(speech_flags(audio, models.vad))
    models.vad.reset()
    return float((flags[-1] + 1) * VAD_FRAME / SAMPLE_RATE) if flags.size else None


def _score_translation(report: dict, entry: dict | None, speech_end: float | None) -> None:
    """Interpreting: the committed English against the manifest's reference translation (no WER: the source
    transcript is in another language), Average Lagging over the committed words, and when the voice finished
    after the speech did."""
    from engine.metrics.translation import average_lagging, bleu, chrf

    reference = entry.get("translation") if entry else None
    committed = report["committed_text"]
    report[m.WER_COMMITTED] = report[m.WER_SPOKEN] = None
    try:
        report[m.BLEU] = bleu([reference], [committed]) if reference else None
        report[m.CHRF] = chrf([reference], [committed]) if reference else None
    except ImportError as exc:  # the packaged app leaves sacrebleu out
        log.warning("BLEU and chrF not computed (%s)", exc)
        report[m.BLEU] = report[m.CHRF] = None
    source_s = report["audio_s_heard"]
    words = len(reference.split()) if reference else 0
    commits = report.get("commits", [])
    heard = [min(c["heard_s"], source_s) for c in commits if c["heard_s"] is not None]
    report[m.AL_S] = average_lagging(heard, source_s, words)
    report[m.AL_CA_S] = average_lagging([c["commit_s"] for c in commits], source_s, words)
    ends = [w["speak_end_s"] for w in report["words"] if w.get("speak_end_s") is not None]
    report[m.END_OFFSET_S] = max(ends) - speech_end if ends and speech_end is not None else None
