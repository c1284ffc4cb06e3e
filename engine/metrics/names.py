"""Metric and configuration names, exactly as shared/docs/METRICS.md spells them. Use these constants, not literals."""

from __future__ import annotations

# TTS (Ma et al. 2020)
FIRST_AUDIO_S = "first_audio_s"
GEN_S = "gen_s"
AUDIO_S = "audio_s"
COMPUTE_RATIO = "compute_ratio"
TIME_BALANCE = "time_balance"
UNDERRUNS = "underruns"
GAP_S = "gap_s"
STARVED_S = "starved_s"
WORD_DISTANCE_DB = "word_distance_db"
SEAM_SNR_DB = "seam_snr_db"

# ASR (Liu et al. 2020)
COMMIT_LATENCY_S = "commit_latency_s"
WER_COMMITTED = "wer_committed"
WER_OFFLINE = "wer_offline"
RTF_ASR = "rtf_asr"
BEHIND_S = "behind_s"

# Shadowing, end to end
EAR_VOICE_LAG_S = "ear_voice_lag_s"
CHUNK_DELAY_S = "chunk_delay_s"
WER_SPOKEN = "wer_spoken"
WER_SPOKEN_FLOOR = "wer_spoken_floor"
WER_TRANSCRIPT = "wer_transcript"
LAG_DRIFT_S = "lag_drift_s"

# Interpreting (speech in language X -> English voice); defined in METRICS.md, computed by issue 17's work
BLEU = "bleu"
CHRF = "chrf"
BLEU_OFFLINE = "bleu_offline"
AL_S = "al_s"
AL_CA_S = "al_ca_s"
END_OFFSET_S = "end_offset_s"

# Echo on speakers (``bench echo``, issue 56)
ECHO_WORDS = "echo_words"
AEC_COMPUTE_RATIO = "aec_compute_ratio"
ERLE_DB = "erle_db"
ECHO_HEARD_DB = "echo_heard_db"

DEFINITIONS: dict[str, str] = {
    FIRST_AUDIO_S: "compute time from holding the words the first chunk needs until its first samples are ready",
    GEN_S: "generation time of a chunk",
    AUDIO_S: "audio duration of a chunk",
    COMPUTE_RATIO: "gen_s / audio_s of a chunk",
    TIME_BALANCE: "synthesized audio in hand when a chunk is ready (gapless iff every value > 0)",
    UNDERRUNS: "playback gaps after the first audio that compute caused (the next words were already committed)",
    GAP_S: "total length of the gaps counted in underruns",
    STARVED_S: "total length of playback gaps caused by waiting for input (the speaker's pace)",
    WORD_DISTANCE_DB: "per word, log-mel distance between incremental and full-sentence synthesis, same noise",
    SEAM_SNR_DB: "SNR of the incremental waveform against a one-shot decode of the same latent frames",
    COMMIT_LATENCY_S: "per committed word: commit time - source end time of the word",
    WER_COMMITTED: "WER of the committed text against the reference",
    WER_OFFLINE: "WER of the same model transcribing the whole recording at once",
    RTF_ASR: "total ASR compute / audio duration",
    BEHIND_S: "how far the recognizer's clock ends behind the end of the audio",
    EAR_VOICE_LAG_S: "per spoken word: end of its synthesized audio playing - source end time of the word",
    CHUNK_DELAY_S: "mean over TTS chunks of (end of the chunk's audio playing - source end of its last word)",
    WER_SPOKEN: "WER of an offline recognition of the synthesized output against the reference text",
    WER_SPOKEN_FLOOR: "wer_spoken of the reference text spoken whole by the voice (no streaming): its floor",
    WER_TRANSCRIPT: "WER of a recorded session's transcript and captions: its recording recognized again after it",
    LAG_DRIFT_S: "slope of ear-voice lag over the session, seconds per minute",
    ECHO_WORDS: "committed words the alignment marks inserted that repeat a word the voice spoke in the 3 s before",
    AEC_COMPUTE_RATIO: "the echo canceller's compute / the audio it took",
    ERLE_DB: "echo return loss enhancement: echo energy before / after the guard, where only the voice is heard",
    ECHO_HEARD_DB: "the echo's speech level at the microphone, in dB from the speaker's (bench echo's simulated room)",
    BLEU: "sacrebleu BLEU of the committed English against the reference (lower case, no punctuation), corpus-level",
    CHRF: "sacrebleu chrF of the committed English against the reference (lower case, no punctuation)",
    BLEU_OFFLINE: "BLEU of the same model translating each whole recording at once",
    AL_S: "Average Lagging over committed target words, source time consumed (SimulEval, speech input)",
    AL_CA_S: "Average Lagging with computation-aware delays (commit time from the start of the source)",
    END_OFFSET_S: "per utterance: when the voice finished its translation - the end of the utterance's speech",
}

TTS_METRICS = (
    FIRST_AUDIO_S,
    GEN_S,
    AUDIO_S,
    COMPUTE_RATIO,
    TIME_BALANCE,
    UNDERRUNS,
    GAP_S,
    STARVED_S,
    WORD_DISTANCE_DB,
    SEAM_SNR_DB,
)
ASR_METRICS = (COMMIT_LATENCY_S, WER_COMMITTED, WER_OFFLINE, RTF_ASR, BEHIND_S)
SHADOW_METRICS = (EAR_VOICE_LAG_S, CHUNK_DELAY_S, WER_SPOKEN, WER_SPOKEN_FLOOR, WER_TRANSCRIPT, LAG_DRIFT_S)
INTERPRET_METRICS = (BLEU, CHRF, BLEU_OFFLINE, AL_S, AL_CA_S, END_OFFSET_S)
ECHO_METRICS = (ECHO_WORDS, AEC_COMPUTE_RATIO, ERLE_DB, ECHO_HEARD_DB)
ALL_METRICS = TTS_METRICS + ASR_METRICS + SHADOW_METRICS + INTERPRET_METRICS + ECHO_METRICS

# Configuration names used as keys of a benchmark's "results"
TTS_POLICIES = ("full", "naive", "lookahead-0", "lookahead-1", "lookahead-2", "learned")
ASR_COMMIT_POLICIES = ("la2", "hold2", "waitk", "offline")
# ``bench asr``'s reference rows: faster-whisper's own decode of each whole recording (greedy, and with 5 beams), and
# liveshadow's own whole pass (``transcribe_long``; for Whisper transcribing English, the stock decode timed and cut
# at a word that loops within itself; the name is from the 20 s windows it had before)
STOCK_OFFLINE = "stock_offline"
STOCK_OFFLINE_BEAM5 = "stock_offline_beam5"
WINDOWED_OFFLINE = "windowed_offline"
ASR_REFERENCES = (STOCK_OFFLINE, STOCK_OFFLINE_BEAM5, WINDOWED_OFFLINE)
SHADOW_CONFIGS = ("default",)
BENCH_NAMES = ("tts", "asr", "shadow")
