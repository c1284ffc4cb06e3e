"""Offline recognition of long recordings: the whole pass, and windows cut at quiet moments."""

from __future__ import annotations

import numpy as np

from engine.asr.offline import cut_points, transcribe_long
from engine.asr.stock_timing import in_order
from engine.asr.whisper_backend import WhisperBackend
from engine.asr.words import Word


def test_cuts_fall_in_the_quiet_parts() -> None:
    rng = np.random.default_rng(0)
    audio = (0.3 * rng.standard_normal(16000 * 45)).astype(np.float32)
    for quiet_s in (17.0, 33.0):  # 300 ms of near-silence inside each search range
        audio[int(quiet_s * 16000) : int((quiet_s + 0.3) * 16000)] *= 0.001
    cuts = cut_points(audio, max_window_s=20.0)
    assert cuts[-1] == audio.size and len(cuts) == 3
    assert 17.0 <= cuts[0] / 16000 <= 17.3 and 33.0 <= cuts[1] / 16000 <= 33.3
    assert cut_points(audio[: 16000 * 5]) == [16000 * 5]


class _Echo:
    """Returns one word per call, timed at the window's start, to check the time offsets."""

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        return [Word(f"w{audio.size}", 0.1, 0.2)]


def test_word_times_are_on_the_recording_clock() -> None:
    audio = np.zeros(16000 * 50, np.float32)
    audio[::7] = 0.5  # loud everywhere except where we make it quiet
    audio[16000 * 18 : 16000 * 18 + 3200] = 0.0
    words = transcribe_long(_Echo(), audio, max_window_s=20.0)
    assert len(words) == 3 and words[0].start_s == 0.1
    assert 18.0 < words[1].start_s < 18.4 and words[1].start_s < words[2].start_s


class _Whole(_Echo):
    """A backend with a whole pass of its own, transcribing or translating."""

    def __init__(self, task: str, language: str = "en") -> None:
        self.task, self.language = task, language

    def transcribe_whole(self, audio: np.ndarray) -> list[Word]:
        return [Word("whole", 0.0, 0.5)]


def test_english_takes_the_whole_pass_and_translating_and_other_languages_the_windows() -> None:
    audio = np.full(16000 * 3, 0.1, np.float32)
    assert [w.text for w in transcribe_long(_Whole("transcribe"), audio)] == ["whole"]
    assert [w.text for w in transcribe_long(_Whole("translate"), audio)] == [f"w{audio.size}"]
    assert [w.text for w in transcribe_long(_Whole("transcribe", "es"), audio)] == [f"w{audio.size}"]


def test_words_are_put_in_time_order_across_segments() -> None:
    # faster-whisper's alignment took the second segment's start from its timestamp, before the last word before it
    segments = [
        [Word("shifted", 10.36, 10.74), Word("to", 10.74, 11.02), Word("the", 11.02, 12.94)],
        [Word("extenuating", 10.96, 11.74), Word("circumstances", 11.74, 12.46)],
    ]
    fixed = in_order(segments)
    assert [[w.text for w in words] for words in fixed] == [[w.text for w in words] for words in segments]
    flat = [w for words in fixed for w in words]
    assert all(a.start_s <= b.start_s and a.end_s <= b.start_s for a, b in zip(flat, flat[1:], strict=False))
    assert all(w.start_s <= w.end_s for w in flat)
    assert flat[3].start_s == 11.02 and flat[3].end_s == 11.74 and flat[0] == segments[0][0]


def test_the_whole_pass_keeps_said_repetitions_and_cuts_a_looped_word() -> None:
    backend = object.__new__(WhisperBackend)  # no model: its stock decode is given
    backend.beam_size = 1
    said = [Word(t, i * 0.3, i * 0.3 + 0.2) for i, t in enumerate("words, words, words, words. And that".split())]
    looped = [Word("M-A-L-E-E-E-E-E-E-E-E-E-E", 3.0, 4.0), Word("after", 4.0, 4.2)]
    backend.stock_segments = lambda audio, beam_size, progress=None: [said, [Word("the", 2.6, 2.8), *looped]]  # type: ignore[method-assign]
    words = backend.transcribe_whole(np.zeros(16000, np.float32))
    assert [w.text for w in words] == [w.text for w in said] + ["the"]


class _Segment:
    def __init__(self, seek: int, start: float, end: float, tokens: list[int]) -> None:
        self.seek, self.start, self.end, self.tokens = seek, start, end, tokens


class _Extractor:
    nb_max_frames = 3000
    hop_length = 160


class _Model:
    """faster-whisper's interface as the timing uses it: the decode encodes a window before yielding its segments;
    the alignment gives each token 0.1 s from the window's start."""

    def __init__(self, windows: list[list[_Segment]]) -> None:
        self.windows, self.encoded, self.aligned = windows, None, []
        self.feature_extractor = _Extractor()
        self.hf_tokenizer = None

        class _Inner:
            is_multilingual = False

        self.model = _Inner()

    def transcribe(self, audio: np.ndarray, **_options: object) -> tuple:
        def decode():
            for number, window in enumerate(self.windows):
                self.encoded = f"window {number}"
                yield from window

        class _Info:
            language = "en"

        return decode(), _Info()

    def add_word_timestamps(self, groups, tokenizer, encoded, size, prepend, append, last_speech_timestamp):
        self.aligned.append((encoded, size, [p["tokens"] for p in groups[0]]))
        offset = groups[0][0]["seek"] / 100
        for n, piece in enumerate(groups[0]):
            piece["words"] = [
                {"word": f" t{t}", "start": offset + n + 0.1 * i, "end": offset + n + 0.1 * (i + 1)}
                for i, t in enumerate(piece["tokens"])
            ]
        return last_speech_timestamp


def test_a_window_that_starts_inside_the_last_one_at_the_recordings_end_is_aligned_on_it(monkeypatch) -> None:
    from faster_whisper import tokenizer as fw_tokenizer

    from engine.asr import stock_timing

    monkeypatch.setattr(fw_tokenizer, "Tokenizer", lambda *args, **kwargs: None)
    monkeypatch.setattr(stock_timing, "_punctuation_defaults", lambda model: ("", ""))
    long_audio = np.zeros(16000 * 40, np.float32)  # a second window is needed: aligned on its own audio
    model = _Model([[_Segment(0, 0.0, 28.0, [1, 2])], [_Segment(2800, 28.0, 40.0, [3])]])
    stock_timing.stock_segments_timed(model, long_audio, "en", "transcribe", 1, lambda: model.encoded)
    assert model.aligned == [("window 0", 3000, [[1, 2]]), ("window 1", 1200, [[3]])]
    # 14.8 s: the first window holds all of it, but its timestamps ended at 14.0 s and a second window decoded
    # the words it had left, on the 0.8 s after the timestamp
    short_audio = np.zeros(int(16000 * 14.8), np.float32)
    first = [_Segment(0, 0.0, 14.0, [1, 2]), _Segment(0, 14.0, 14.0, [3])]
    model = _Model([first, [_Segment(1400, 14.0, 14.8, [4, 5])]])
    timed = stock_timing.stock_segments_timed(model, short_audio, "en", "transcribe", 1, lambda: model.encoded)
    assert model.aligned == [("window 0", 1480, [[1, 2], [3], [4, 5]])]
    assert [[w for w, _, _ in words] for words in timed] == [[" t1", " t2"], [" t3"], [" t4", " t5"]]


def test_the_frames_counted_are_the_decodes() -> None:
    from faster_whisper.feature_extractor import FeatureExtractor

    from engine.asr.stock_timing import content_frames_of

    extractor = FeatureExtractor()
    for samples in (1, 159, 160, 16123, 480000, 480001, 1234567):
        assert content_frames_of(extractor, samples) == extractor(np.zeros(samples, np.float32)).shape[-1] - 1
