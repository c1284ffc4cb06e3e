"""``liveshadow speak``: words in (all at once, paced, or as typed), incremental speech out, with a report."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from engine.metrics import aggregate, machine_info
from engine.metrics import names as m
from engine.tts.chunker import ChunkSizes
from engine.tts.frontend import ends_sentence, split_words
from engine.tts.keys import SentenceKeys
from engine.tts.learned.agent import is_move_agent, voice_policy
from engine.tts.learned.driver import ReadSpeakDriver
from engine.tts.learned.moves import MoveAdvisor
from engine.tts.measure import gen_times
from engine.tts.pieces import AudioPiece
from engine.tts.quality import snr_db
from engine.tts.synthesizer import IncrementalSynthesizer
from engine.tts.timeline import simulate_playback
from engine.tts.voice import TwoStageVoice
from engine.tts.worker import SynthesisWorker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpeakOptions:
    policy: str = "lookahead"
    k: int = 1
    first_chunk: int = 18
    chunk: int = 12
    delta: int = 12
    seed: int = 0
    threads: int = 1
    play: bool = False
    device: str | int | None = None
    voice: str | None = None  # a .onnx path; the bundled voice when None


@dataclass
class SpeakResult:
    audio: np.ndarray
    sample_rate: int
    report: dict


def paced(
    words: Sequence[str], words_per_second: float, sleep: Callable[[float], None] = time.sleep
) -> Iterator[list[str]]:
    """Yield one word at a time at a steady rate (simulated speaker)."""
    if words_per_second <= 0:
        raise ValueError(f"--words-per-second must be positive, not {words_per_second}")
    start = time.monotonic()
    for i, word in enumerate(words):
        sleep(max(start + i / words_per_second - time.monotonic(), 0.0))
        yield [word]


def speak(batches: Iterable[Sequence[str]], options: SpeakOptions) -> SpeakResult:
    """Feed word batches as they come, synthesize in the background, optionally play; measure everything."""
    voice = TwoStageVoice(model_path=options.voice, threads=options.threads, seed=options.seed)
    warnings: list[str] = []
    policy, agent = voice_policy(options.policy, options.k, warnings)
    synthesizer = IncrementalSynthesizer(voice, policy, ChunkSizes(options.first_chunk, options.chunk), options.delta)
    advisor = MoveAdvisor(agent) if is_move_agent(agent) else None
    driver = ReadSpeakDriver(synthesizer, agent) if agent is not None and advisor is None else None
    plays_until = [0.0]  # on the monotonic clock: when the voice made so far has played (for a driven policy)
    player = None
    if options.play:
        from engine.audio.player import Player

        player = Player(voice.sample_rate, device=options.device)
        player.start()

    t0 = time.perf_counter()
    pieces: list[AudioPiece] = []
    ready: list[float] = []
    live_balance: list[float] = []
    seams: list[float | None] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def on_piece(piece: AudioPiece) -> None:
        with lock:
            ready.append(time.perf_counter() - t0)
            pieces.append(piece)
            plays_until[0] = max(plays_until[0], time.monotonic()) + piece.audio_s
        if piece.sentence_end and synthesizer.last_sentence_latent is not None:
            sentence_audio = np.concatenate([p.samples for p in pieces if p.sentence == piece.sentence])
            one_shot = voice.stage2(synthesizer.last_sentence_latent)
            seams.append(snr_db(sentence_audio, one_shot) if one_shot.shape == sentence_audio.shape else None)
        if player is not None:
            live_balance.append(player.buffered_s)
            player.enqueue(piece.samples, key=(piece.sentence, piece.chunk))

    in_hand = (lambda now: max(plays_until[0] - now, 0.0)) if agent is not None else None
    worker = SynthesisWorker(
        synthesizer, on_piece, errors.append, audio_in_hand=in_hand, driver=driver, advisor=advisor
    )
    arrivals: dict[tuple[int, int], float] = {}
    completed: dict[int, float] = {}
    keys = SentenceKeys()  # the (sentence, index) the synthesizer gives each word
    try:
        for batch in batches:
            words = [t for w in batch for t in split_words(w)]
            now = time.perf_counter() - t0
            for word in words:
                for token, key in keys.tokens(word):
                    arrivals[key] = now
                    if ends_sentence(token):
                        completed[key[0]] = now
            if words:
                worker.feed(words)
        completed.setdefault(keys.sentence, time.perf_counter() - t0)
        worker.flush()
        worker.wait_idle()
    finally:
        worker.close()
    played = None
    if player is not None:
        player.drain(timeout=600)
        played = {
            "underruns": player.stats.underruns,
            "gap_s": player.stats.gap_s,
            "output_latency_s": player.output_latency_s,
            "device_rate": player.device_rate,
        }
        player.close()
    if errors:
        raise errors[0]

    inputs_at = [
        max(
            arrivals.get((p.sentence, p.needs_word), 0.0),
            completed.get(p.sentence, 0.0) if p.needs_sentence_end else 0.0,
        )
        for p in pieces
    ]
    audio_s = [p.audio_s for p in pieces]
    gen = gen_times(ready, inputs_at)
    timeline = simulate_playback(ready, audio_s, inputs_at)
    audio = np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)
    offset = 0
    words_report = []
    for piece, start in zip(pieces, timeline.start_s, strict=True):
        for w in piece.words:
            words_report.append(
                {
                    "text": w.text,
                    "sentence": w.sentence,
                    "index": w.index,
                    "arrived_s": arrivals.get((w.sentence, w.index)),
                    "audio_start_sample": offset + w.start_sample,
                    "audio_end_sample": offset + w.end_sample,
                    "plays_until_s": start + w.end_sample / voice.sample_rate,
                }
            )
        offset += piece.samples.size
    report = {
        "command": "speak",
        "machine": machine_info(),
        "config": {
            **asdict(options),
            "policy": agent.name if advisor is not None else policy.name,
            "sample_rate": voice.sample_rate,
        },
        "warnings": warnings,
        m.FIRST_AUDIO_S: (ready[0] - inputs_at[0]) if pieces else None,
        m.GEN_S: gen,
        m.AUDIO_S: audio_s,
        m.COMPUTE_RATIO: aggregate([g / a for g, a in zip(gen, audio_s, strict=True) if a > 0]),
        m.TIME_BALANCE: live_balance[1:] if player is not None else timeline.time_balance,
        m.UNDERRUNS: timeline.underruns,
        m.GAP_S: timeline.gap_s,
        m.STARVED_S: timeline.starved_s,
        m.SEAM_SNR_DB: seams,
        "played": played,
        "pieces": [
            {
                "sentence": p.sentence,
                "chunk": p.chunk,
                "ready_s": r,
                "stage1_s": p.stage1_s,
                "stage2_s": p.stage2_s,
                "audio_s": p.audio_s,
            }
            for p, r in zip(pieces, ready, strict=True)
        ],
        "words": words_report,
    }
    return SpeakResult(audio, voice.sample_rate, report)
