"""The real Whisper model (tiny.en from its package) on real recordings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.asr.backend import AsrError
from engine.asr.whisper_backend import WHOLE_PASS_SEED, WhisperBackend, cut_repetition
from engine.asr.words import Word
from engine.metrics.wer import wer as text_wer
from tests import virtual_audio as va

pytestmark = [pytest.mark.slow, pytest.mark.untimed]


@pytest.fixture(scope="module")
def whisper() -> WhisperBackend:
    return WhisperBackend()


def wer(reference: str, words: list[Word]) -> float:
    return text_wer(reference, " ".join(w.text for w in words))


@pytest.mark.parametrize(
    ("recording", "max_wer"), [("ls_61-70968-0000", 0.15), ("vctk_p225_002", 0.15), ("librivox_ss_0890", 0.3)]
)
def test_short_window_transcribes_real_speech(whisper, speech_manifest, speech_dir: Path, recording, max_wer) -> None:
    entry = next(e for e in speech_manifest if e["id"] == recording)
    audio, _ = va.read_mono(speech_dir / entry["wav"])
    words = whisper.transcribe(audio)
    assert wer(entry["text"], words) <= max_wer
    duration = audio.size / 16000
    assert all(0 <= w.start_s <= w.end_s <= duration + 0.05 for w in words)
    assert [w.start_s for w in words] == sorted(w.start_s for w in words)


def test_short_window_agrees_with_the_full_window(whisper, speech_manifest, speech_dir: Path) -> None:
    entry = next(e for e in speech_manifest if e["id"] == "ls_61-70968-0000")
    audio, _ = va.read_mono(speech_dir / entry["wav"])
    short = whisper.transcribe(audio)
    whisper.short_window = False
    try:
        full = whisper.transcribe(audio)
    finally:
        whisper.short_window = True
    assert abs(wer(entry["text"], short) - wer(entry["text"], full)) <= 0.1


def test_silence_and_tiny_buffers(whisper) -> None:
    assert whisper.transcribe(np.zeros(800, np.float32)) == []


def test_cut_repetition() -> None:
    words = [
        Word(t, i, i + 0.5) for i, t in enumerate("so I said thank you thank you thank you thank you thank".split())
    ]
    assert [w.text for w in cut_repetition(words)] == ["so", "I", "said", "thank", "you"]
    fine = [Word(t, i, i + 0.5) for i, t in enumerate("no no no".split())]
    assert cut_repetition(fine) == fine
    loop = "and so my fellow americans " * 3
    looped = [Word(t, i, i + 0.5) for i, t in enumerate(loop.split())]
    assert len(cut_repetition(looped)) == 5
    squeezed = [Word("a", 0, 0.3), Word("b", 0.3, 0.3), Word("c", 0.3, 0.3), Word("d", 0.3, 0.3), Word("e", 0.3, 0.5)]
    assert [w.text for w in cut_repetition(squeezed)] == ["a"]
    # words squeezed into no time before a loop: the loop is cut, and so are they (the loop's cut does not end it)
    squeezed_loop = squeezed + [Word(t, 1 + i, 1.5 + i) for i, t in enumerate(("the wind blows " * 3).split())]
    assert [w.text for w in cut_repetition(squeezed_loop)] == ["a"]
    within = [Word(t, i, i + 0.5) for i, t in enumerate("the prime minister ksisisisisisisisisisisisis said".split())]
    assert [w.text for w in cut_repetition(within)] == ["the", "prime", "minister"]
    for looped in ("T" + "-3" * 24, "Phon" + "-pah-phon" * 6 + "-p", "2020" + ".20" * 14 + "."):  # joined pieces
        pieces = [Word(t, i, i + 0.5) for i, t in enumerate(["I'm", "so", looped, "sorry"])]
        assert [w.text for w in cut_repetition(pieces)] == ["I'm", "so"]
    real_text = "Mississippi hahaha zzz 100,000,000 1,000,000,000,000 2020-2021 ha-ha-ha Hawaii, aaah!"
    real = [Word(t, i, i + 0.5) for i, t in enumerate(real_text.split())]
    assert cut_repetition(real) == real


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AsrError, match="no Whisper model"):
        WhisperBackend(tmp_path)
    (tmp_path / "model.bin").write_bytes(b"garbage")
    with pytest.raises(AsrError, match="incomplete: config.json, tokenizer.json, vocabulary.txt or vocabulary.json"):
        WhisperBackend(tmp_path)  # without tokenizer.json faster-whisper would fetch one from the network
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(AsrError, match="cannot load"):
        WhisperBackend(tmp_path)


def test_a_short_utterance_repeated_into_the_padding_is_not_kept_on_the_audio(whisper, speech_manifest, speech_dir):
    # "He was", cut from a real recording, with 1 s of near-silence before and 3 s after, decoded as the buffer grows
    # in the second after the speaker stopped (when the streaming recognizer's hypotheses agree or not): Whisper
    # tiny.en repeats it into the padding ("He was. He was. He was. ..."), and once the padding's words were dropped,
    # what was left on the audio ("he was he") was no loop any more, and was committed
    entry = next(e for e in speech_manifest if e["id"] == "librivox_ss_0880")
    audio, rate = va.read_mono(speech_dir / entry["wav"])
    (_, start, _), (_, _, end), (_, after, _) = entry["word_times"][:3]
    utterance = audio[int((start - 0.05) * rate) : int((end + after) / 2 * rate)]
    quiet = (np.random.default_rng(0).standard_normal(4 * rate) * 1e-3).astype(np.float32)
    buffer = np.concatenate([quiet[:rate], utterance, quiet[rate:]])
    speech_end = rate + utterance.size
    ends = range(speech_end + rate // 5, speech_end + rate * 6 // 5, rate // 10)
    decodes = [[w.key for w in whisper.transcribe(buffer[:n])] for n in ends]
    # here every decode is "he was"; before, 4 of the 10 had more ("he was he", "he was he was")
    assert sum(keys != ["he", "was"] for keys in decodes) <= 1, decodes


def test_a_failed_decode_is_retried_at_whispers_temperatures_only_when_asked(
    whisper, speech_manifest, speech_dir
) -> None:
    """``fallback_max_temperature``: a step's decode gets faster-whisper's retry at 0.2, 0.4, ... (a lever measured
    in docs/RESULTS.md, off); by default a step is decoded once, at temperature 0."""
    from engine.audio.io import load_audio

    audio = load_audio(speech_dir / next(e for e in speech_manifest if e["id"] == "ls_61-70968-0000")["wav"])
    asked: list[dict] = []
    transcribe = whisper._model.transcribe

    def recording(*args, **kwargs):
        asked.append(kwargs)
        return transcribe(*args, **kwargs)

    whisper._model.transcribe = recording
    try:
        assert whisper.transcribe(audio)
        with whisper.settings(fallback_max_temperature=0.4):
            assert whisper.transcribe(audio)
        assert whisper.fallback_max_temperature == 0.0  # put back
    finally:
        del whisper._model.transcribe
    assert [a["temperature"] for a in asked] == [(0.0,), (0.0, 0.2, 0.4)]
    assert {a["log_prob_threshold"] for a in asked} == {-1.0}


def test_a_whole_window_decode_keeps_its_words_unless_the_stock_decode_hears_more() -> None:
    """The stock decode replaces a whole-window decode only when a word stretched over ``STOPPED_WORD_S`` says it
    stopped, and only with more words (the real case: tests/test_practice_attempt.py)."""
    from engine.asr import whisper_backend

    def backend(own: list[Word], stock: list[Word] | None) -> WhisperBackend:
        fake = object.__new__(WhisperBackend)
        fake.beam_size = 1
        fake.transcribe = lambda audio, full_window=False: own  # type: ignore[method-assign]

        def stock_words(audio: np.ndarray, beam_size: int = 1) -> list[Word]:
            assert stock is not None, "the stock decode ran for a decode that did not stop"
            return stock

        fake.stock_words = stock_words  # type: ignore[method-assign]
        return fake

    audio = np.zeros(16000, np.float32)
    stopped = [Word("to", 0.0, 0.2), Word("my...", 0.2, 0.3 + whisper_backend.STOPPED_WORD_S)]
    more = [Word("to", 0.0, 0.2), Word("my", 0.2, 0.4), Word("circumstances", 1.8, 2.4)]
    assert backend(stopped, more).transcribe_offline(audio) == more
    assert backend(stopped, more[:2]).transcribe_offline(audio) == stopped
    assert backend(more, None).transcribe_offline(audio) == more


def test_the_whole_pass_writes_the_stock_decodes_words_in_time_order(whisper, speech_manifest, speech_dir) -> None:
    """faster-whisper's own word timestamps move its windows on to a stretched last word, and on the sonnet they
    lost its last words ("feels it cold."): the whole pass aligns the stock decode's segments afterwards."""
    import ctranslate2

    entry = next(e for e in speech_manifest if e["id"] == "librivox_sonnet002")
    audio, _ = va.read_mono(speech_dir / entry["wav"])
    ctranslate2.set_random_seed(WHOLE_PASS_SEED)  # a retried window samples as in the whole pass
    stock = whisper.transcribe_stock(audio)
    words = whisper.transcribe_whole(audio)
    assert text_wer(stock, " ".join(w.text for w in words)) == 0.0, (stock, words)
    assert text_wer(entry["text"], stock) <= 0.15
    duration = audio.size / 16000
    assert all(0 <= w.start_s <= w.end_s <= duration + 0.05 for w in words)
    assert all(a.end_s <= b.start_s for a, b in zip(words, words[1:], strict=False))
    assert words[-1].end_s > duration - 2.0  # the last words are timed where they are said
    assert whisper.transcribe_whole(audio) == words
