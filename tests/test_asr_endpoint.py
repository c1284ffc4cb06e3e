"""The streaming recognizer at a pause in the speech (``StreamConfig.endpoint_s``, ``StepResult.paused``), on scripted
hypotheses."""

from __future__ import annotations

import numpy as np
import pytest

from engine.asr.backend import SAMPLE_RATE
from engine.asr.commit import make_commit_policy
from engine.asr.stream_values import StreamConfig
from engine.asr.streaming import FINISH_TAIL_S, PHRASE_END_QUIET_S, StreamingRecognizer
from engine.asr.vad import FRAME, FRAME_S
from engine.asr.words import Word
from engine.pipeline.config import ShadowConfig

STEP_S = 0.5
HANGOVER_S = 0.3  # the speech gate's (GateConfig.hangover_s): speech "ends" that long after the last speech frame


class IntervalVad:
    """Speech probability 0.9 inside ``speech`` (source-time intervals), 0 elsewhere."""

    def __init__(self, speech: list[tuple[float, float]]) -> None:
        self.speech = speech
        self.frames = 0
        self.pending = 0

    def probabilities(self, samples: np.ndarray) -> np.ndarray:
        self.pending += samples.size
        n, self.pending = divmod(self.pending, FRAME)
        t = np.arange(self.frames, self.frames + n) * FRAME_S
        self.frames += n
        inside = np.zeros(n, bool)
        for a, b in self.speech:
            inside |= (t >= a) & (t < b)
        return np.where(inside, 0.9, 0.0).astype(np.float32)


class Reordering:
    """A translation's hypotheses: the words said so far, with the last one heard reworded at every call, so local
    agreement never commits it. ``said`` holds (text, start, end) on the source clock; ``reach_s``: the decoder
    stops there (it gives up early on some buffers)."""

    name = "reordering"

    def __init__(self, said: list[tuple[str, float, float]], reach_s: float = float("inf")) -> None:
        self.said = said
        self.reach_s = reach_s
        self.calls = 0
        self.lengths: list[float] = []
        self.recognizer: StreamingRecognizer | None = None

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        assert self.recognizer is not None
        self.calls += 1
        self.lengths.append(audio.size / SAMPLE_RATE)
        offset = self.recognizer._offset_s
        end = offset + audio.size / SAMPLE_RATE
        heard = [(t, a, b) for t, a, b in self.said if a >= offset - 1e-6 and b <= end and b <= self.reach_s]
        words = [Word(t, a - offset, b - offset) for t, a, b in heard]
        if words:
            last = words[-1]
            words[-1] = Word(f"{last.text}{'ab'[self.calls % 2]}", last.start_s, last.end_s)
        return words


class Steady(Reordering):
    """The words said so far, the same at every call: local agreement commits each on the step after it is heard.
    ``early_end_s``: each word's end is given that much before its true end (Whisper's word ends often are)."""

    def __init__(self, said: list[tuple[str, float, float]], early_end_s: float = 0.0) -> None:
        super().__init__([(t, a, b - early_end_s) for t, a, b in said])

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        self.calls += 1
        assert self.recognizer is not None
        offset = self.recognizer._offset_s
        end = offset + audio.size / SAMPLE_RATE
        return [Word(t, a - offset, b - offset) for t, a, b in self.said if a >= offset - 1e-6 and b <= end]


def sentence(first: int, start_s: float, count: int) -> list[tuple[str, float, float]]:
    return [(f"w{first + i}", start_s + 0.4 * i, start_s + 0.4 * i + 0.35) for i in range(count)]


def make(said: list, speech: list[tuple[float, float]], endpoint_s: float | None, reach_s: float = float("inf")):
    backend = Reordering(said, reach_s)
    recognizer = StreamingRecognizer(
        backend,
        make_commit_policy("la2"),
        vad=IntervalVad(speech),  # type: ignore[arg-type]
        config=StreamConfig(endpoint_s=endpoint_s),
    )
    backend.recognizer = recognizer
    return backend, recognizer


def feed(recognizer: StreamingRecognizer, seconds: float) -> list[tuple[float, list]]:
    out = []
    for n in range(int(round(seconds / STEP_S))):
        recognizer.insert_audio(np.zeros(int(STEP_S * SAMPLE_RATE), np.float32))
        now = (n + 1) * STEP_S
        out.append((now, recognizer.step(now)))
    return out


def test_at_a_pause_the_words_still_held_are_committed_and_the_pause_is_not_decoded() -> None:
    said = sentence(0, 0.2, 6)  # w0..w5 from 0.2 s to 2.55 s; the speaker then stays quiet
    backend, recognizer = make(said, [(0.2, 2.55)], endpoint_s=0.8)
    steps = feed(recognizer, 8.0)
    speech_end = 2.55 + HANGOVER_S
    # the first step that hears 0.8 s of quiet commits the reworded last word with the rest
    at, step = next((now, s) for now, s in steps if s.at_pause)
    assert at == pytest.approx(np.ceil((speech_end + 0.8) / STEP_S) * STEP_S, abs=STEP_S + 1e-6)
    assert [w.text for w in recognizer.committed] == ["w0", "w1", "w2", "w3", "w4", step.committed[-1].text]
    assert step.committed[-1].text.startswith("w5") and step.at_pause >= 1 and step.forced == 0
    assert recognizer.pause_words == sum(s.at_pause for _, s in steps)
    assert step.committed[-1].pause_after  # the voice hears the pause as a phrase boundary
    # that step decoded the speech and a short tail, not the quiet heard since
    assert backend.lengths[-1] == pytest.approx(speech_end + FINISH_TAIL_S, abs=2 * FRAME_S)
    assert all(not s.recognized for now, s in steps if now > at)  # the buffer holds no speech after the cut
    assert backend.calls == sum(s.recognized for _, s in steps)
    assert recognizer.buffer_s <= 2 * recognizer.config.quiet_keep_s + 1e-6  # only the last moments of quiet kept


def test_without_the_endpoint_the_last_word_waits_for_the_hold_bound() -> None:
    said = sentence(0, 0.2, 6)
    _, recognizer = make(said, [(0.2, 2.55)], endpoint_s=None)
    steps = feed(recognizer, 8.0)
    last = next(now for now, s in steps if any(w.text.startswith("w5") for w in s.committed))
    assert last >= 2.55 + recognizer.config.max_hold_s  # what the endpoint saves
    assert recognizer.pause_words == 0


def test_the_next_utterance_after_a_pause_is_heard_at_its_own_times() -> None:
    said = sentence(0, 0.2, 4) + sentence(4, 4.0, 4)  # w0..w3 until 1.75 s; w4..w7 from 4.0 s to 5.55 s
    _, recognizer = make(said, [(0.2, 1.75), (4.0, 5.55)], endpoint_s=0.8)
    feed(recognizer, 9.0)
    committed = recognizer.committed
    assert [w.text[:2] for w in committed] == [f"w{i}" for i in range(8)]
    for word, (_, start, end) in zip(committed, said, strict=True):
        assert (word.start_s, word.end_s) == pytest.approx((start, end), abs=1e-6)


def test_a_hypothesis_that_stops_short_of_the_speech_does_not_cut_it() -> None:
    """The decoder gave up halfway through the speech: cutting at the pause would lose what it never reached."""
    said = sentence(0, 0.2, 10)  # until 3.95 s
    _, recognizer = make(said, [(0.2, 3.95)], endpoint_s=0.8, reach_s=2.0)
    feed(recognizer, 6.0)
    assert recognizer.pause_words == 0
    assert recognizer._offset_s < 3.95  # the speech it did not reach is still in the buffer


def test_only_interpreting_ends_utterances_at_pauses() -> None:
    assert ShadowConfig().endpoint_s is None
    assert ShadowConfig(translate_from="es").endpoint_s == ShadowConfig().interpret_endpoint_s > 0
    with pytest.raises(ValueError, match="pause"):
        ShadowConfig(interpret_endpoint_s=0)


@pytest.mark.parametrize("early_end_s", [0.0, 0.2])
def test_each_step_says_whether_the_speaker_has_ended_a_phrase(early_end_s: float) -> None:
    """``StepResult.paused`` lets the voice speak a sentence's first words, held for their lookahead, when none is
    coming: the speaker has been quiet for ``PHRASE_END_QUIET_S`` and nothing is tentative. The quiet is read at the
    end of the audio, so a last word whose end Whisper gives early (0.2 s here: the voice-activity detector still
    hears it after that) changes nothing."""
    phrases = [(0.2, 1.75), (4.0, 5.55)]  # w0..w3, a pause, w4..w7
    backend = Steady(sentence(0, 0.2, 4) + sentence(4, 4.0, 4), early_end_s)
    recognizer = StreamingRecognizer(backend, make_commit_policy("la2"), vad=IntervalVad(phrases))  # type: ignore[arg-type]
    backend.recognizer = recognizer
    paused_at, times = [], []
    for now, step in feed(recognizer, 8.0):
        times.append(now)
        speaking = any(a < now < b + HANGOVER_S + PHRASE_END_QUIET_S for a, b in phrases)
        if speaking or step.tentative or not recognizer.committed:
            assert not step.paused, now
        if step.paused:
            paused_at.append(now)
    for _, end in phrases:  # each phrase's end is found within two steps of the quiet the detector hears after it
        quiet_from = end + HANGOVER_S + PHRASE_END_QUIET_S
        assert [t for t in paused_at if quiet_from <= t <= quiet_from + 2 * STEP_S], end
    last_end = phrases[-1][1] + HANGOVER_S + PHRASE_END_QUIET_S + 2 * STEP_S
    assert [t for t in times if t >= last_end] == [t for t in paused_at if t >= last_end]  # and at every step after


def test_no_pause_is_reported_before_anything_is_committed() -> None:
    backend = Steady([])
    recognizer = StreamingRecognizer(backend, make_commit_policy("la2"), vad=IntervalVad([]))  # type: ignore[arg-type]
    backend.recognizer = recognizer
    assert not any(s.paused for _, s in feed(recognizer, 2.0))
