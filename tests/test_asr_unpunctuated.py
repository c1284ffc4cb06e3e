"""The streaming recognizer on scripted hypotheses: the hold bound, trims at pauses and words, words nobody said."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from engine.asr.backend import SAMPLE_RATE
from engine.asr.commit import make_commit_policy
from engine.asr.speech_filter import UNALIGNED_RUN_WORDS, SpeechFrames, drop_unspoken, without_unaligned_runs
from engine.asr.stream_values import StreamConfig
from engine.asr.streaming import FINISH_TAIL_S, PAUSE_S, StreamingRecognizer
from engine.asr.vad import FRAME, FRAME_S
from engine.asr.words import Word

WORD_S = 0.3  # each scripted word lasts this long
WORD_END_S = WORD_S - 0.02013  # where its sound ends (like a recognizer's times, not on a sample)


class ScriptedBackend:
    """Fast speech without punctuation: one word every ``WORD_S`` (a pause after the words in ``pauses_after``); each
    hypothesis reads the words heard so far, but with the first word not yet committed changed at every call, so
    consecutive hypotheses never agree and local agreement alone would commit nothing."""

    name = "scripted"

    def __init__(
        self, pauses_after: tuple[int, ...] = (), sentence_ends: tuple[int, ...] = (), flip: bool = True
    ) -> None:
        self.calls = 0
        self.flip = flip  # False: every hypothesis reads the words the same (local agreement commits them)
        self.sentence_ends = sentence_ends
        self.starts: list[float] = []
        t = 0.0
        for i in range(400):
            self.starts.append(t)
            t += WORD_S + (0.6 if i in pauses_after else 0.0)
        self.recognizer: StreamingRecognizer | None = None

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        self.calls += 1
        assert self.recognizer is not None
        offset = self.recognizer._offset_s
        end = offset + audio.size / SAMPLE_RATE
        words = [
            Word(f"w{i}{'.' if i in self.sentence_ends else ''}", s - offset, s + WORD_END_S - offset)
            for i, s in enumerate(self.starts)
            if s >= offset - 1e-6 and s + WORD_S <= end
        ]
        done = self.recognizer._last_committed_end - offset
        first = next((i for i, w in enumerate(words) if w.start_s > done - 0.05), None)
        if first is not None and self.flip:  # flips at every call
            w = words[first]
            stem, end = (w.text[:-1], ".") if w.text.endswith(".") else (w.text, "")
            words[first] = Word(f"{stem}{'ab'[self.calls % 2]}{end}", w.start_s, w.end_s)
        return words


def run(recognizer: StreamingRecognizer, seconds: float, step_s: float = 0.3) -> list[tuple[float, list]]:
    """Feed silence-free audio in steps; returns (time, committed words) per step."""
    out = []
    for n in range(int(seconds / step_s)):
        recognizer.insert_audio(np.zeros(int(step_s * SAMPLE_RATE), np.float32))
        now = (n + 1) * step_s
        out.append((now, recognizer.step(now).committed))
    return out


def make(
    pauses_after: tuple[int, ...] = (),
    config: StreamConfig | None = None,
    sentence_ends: tuple[int, ...] = (),
    flip: bool = True,
    backend: ScriptedBackend | None = None,
) -> StreamingRecognizer:
    """A la2 recognizer on a scripted backend (``backend``, else one made from the other arguments)."""
    backend = backend or ScriptedBackend(pauses_after, sentence_ends, flip)
    recognizer = StreamingRecognizer(backend, make_commit_policy("la2"), vad=None, config=config)  # type: ignore[arg-type]
    backend.recognizer = recognizer
    return recognizer


def test_words_the_hypotheses_never_agree_on_are_committed_within_the_bound() -> None:
    recognizer = make()
    steps = run(recognizer, 30.0)
    committed = [(now, w) for now, words in steps for w in words]
    assert len(committed) > 60  # ~100 words said; all but the last few seconds committed before the end
    for now, word in committed:
        assert now - word.end_s <= recognizer.config.max_hold_s + 0.3 + 1e-6  # the bound, plus one step
    assert recognizer.forced_words == len(committed)
    assert all(word.forced for _, word in committed)  # each marked, so a gap it causes can say so
    assert recognizer.dropped_audio_s == 0.0  # the 25 s cap never fired
    assert max(recognizer.buffer_s for _ in [0]) <= recognizer.config.trim_s + 1.0


def test_forced_words_can_be_taken_as_the_hypothesis_before_had_them() -> None:
    """``force_previous``: the words the bound commits read as the previous step's tentative words did (those a voice
    made ahead), not as the newest hypothesis flipped its first one; no word is lost or committed twice; the bound
    holds. Without it, each forcing step commits the newest reading, which never matches the one before."""
    for force_previous in (True, False):
        recognizer = make(config=StreamConfig(force_previous=force_previous))
        committed, forcing_steps, as_before, tentative = [], 0, 0, []
        for n in range(100):
            recognizer.insert_audio(np.zeros(int(0.3 * SAMPLE_RATE), np.float32))
            now = (n + 1) * 0.3
            step = recognizer.step(now)
            if step.committed:
                forcing_steps += 1
                assert step.forced == len(step.committed)  # the flipped first word: local agreement never agrees
                as_before += [w.text for w in step.committed] == [w.text for w in tentative[: len(step.committed)]]
            assert all(now - w.end_s <= recognizer.config.max_hold_s + 0.3 + 1e-6 for w in step.committed)
            committed += step.committed
            tentative = step.tentative
        assert len(committed) > 60 and forcing_steps > 20
        assert [w.text.rstrip("ab") for w in committed] == [f"w{i}" for i in range(len(committed))]
        assert as_before == (forcing_steps if force_previous else 0)


def test_words_the_hypotheses_agree_on_are_not_marked_forced() -> None:
    recognizer = make(flip=False)
    committed = [w for _, words in run(recognizer, 10.0) for w in words]
    assert len(committed) > 20
    assert recognizer.forced_words == 0
    assert not any(word.forced for word in committed)


def test_without_the_bound_nothing_is_committed_until_the_buffer_cap() -> None:
    """The failure the bound removes: the same stream with no bound commits nothing for 20 s and drops audio."""
    recognizer = make(config=StreamConfig(max_hold_s=1e9))
    steps = run(recognizer, 30.0)
    first = next((now for now, words in steps if words), None)
    assert first is None or first > 15.0
    assert recognizer.dropped_audio_s > 0


def test_the_buffer_is_cut_at_a_pause_after_a_committed_word() -> None:
    recognizer = make(pauses_after=(10,), config=StreamConfig(trim_s=8.0))
    run(recognizer, 8.4)  # the first trim: at 8.1 s, with committed words up to ~5 s and one pause at ~3.3 s
    pause_start = recognizer.backend.starts[10] + WORD_END_S  # type: ignore[attr-defined]
    assert recognizer._offset_s == pytest.approx(pause_start + 0.05, abs=1e-3)
    flagged = [w for w in recognizer.committed if w.pause_after]
    assert [w.text.rstrip("ab") for w in flagged] == ["w10"]


def test_the_buffer_is_cut_after_a_committed_word_when_there_is_no_pause() -> None:
    recognizer = make(config=StreamConfig(trim_s=8.0))
    run(recognizer, 12.0)
    assert 0 < recognizer._offset_s
    ends = [w.end_s for w in recognizer.committed]
    assert any(
        abs(recognizer._offset_s - (e + 0.02)) < 0.03 or abs(recognizer._offset_s - (e + 0.05)) < 1e-3 for e in ends
    )
    assert recognizer.buffer_s <= 8.0 + 1.0


def frames(speech: list[tuple[float, float]], total_s: float) -> SpeechFrames:
    t = np.arange(int(total_s / FRAME_S)) * FRAME_S
    flags = np.zeros(t.size, bool)
    for a, b in speech:
        flags |= (t + FRAME_S > a) & (t < b)
    return SpeechFrames(flags, 0.0)


def test_words_aligned_outside_speech_are_dropped() -> None:
    heard = frames([(0.0, 2.0)], 6.0)
    words = [Word("the", 0.2, 0.4), Word("cat.", 1.6, 2.05), Word("Bird", 4.0, 4.4)]
    assert [w.text for w in drop_unspoken(words, heard)] == ["the", "cat."]


def test_words_timed_to_the_buffers_first_instant_are_dropped_from_a_transcript() -> None:
    """After a cut in a pause Whisper wrote "And else..." at the start of the buffer, both words timed to that
    instant, inside the detector's hangover after the last word (librivox_ss_0880 with a pause, on an Intel Xeon)."""
    heard = frames([(0.0, 1.35), (4.0, 4.6)], 6.0)
    unaligned = [Word("And", 1.23, 1.23), Word("else...", 1.23, 1.23)]
    spoken = [Word("an", 4.1, 4.3), Word("ill", 4.3, 4.5)]
    assert drop_unspoken([*unaligned, *spoken], heard, buffer_start_s=1.23) == spoken
    # such a run elsewhere, or one such word at the start, is kept (real words squeezed together: "words words")
    squeezed = [Word("words", 1.0, 1.0), Word("words", 1.0, 1.0), Word("and", 1.0, 1.2)]
    assert drop_unspoken(squeezed, heard, buffer_start_s=0.5) == squeezed
    assert drop_unspoken(squeezed[1:], heard, buffer_start_s=1.0) == squeezed[1:]
    # a translation's words are often timed to no frame: left alone
    assert drop_unspoken(unaligned, heard) == unaligned


def test_a_translations_run_of_words_timed_to_one_instant_is_dropped() -> None:
    """Whisper base "translating" Japanese (fleurs_ja_1837, phase 0, AMD EPYC) wrote a clause at one instant. Its
    translations of the European recordings of ../shared/speech-xx, as the backend hands them over, had at most two
    words in a row timed that way (the backend cuts longer runs unless the decode looped): those are left alone."""
    clause = [Word(t, 1.31, 1.31) for t in "the evening of the day of the".split()]
    heard = [Word("In", 0.94, 1.26), *clause, Word("North", 1.31, 1.43), Word("Coast,", 1.43, 1.79)]
    assert [w.text for w in without_unaligned_runs(heard)] == ["In", "North", "Coast,"]
    # at the limit, and just under it
    assert without_unaligned_runs(clause[:UNALIGNED_RUN_WORDS]) == []
    assert without_unaligned_runs(clause[: UNALIGNED_RUN_WORDS - 1]) == clause[: UNALIGNED_RUN_WORDS - 1]
    pair = [Word("to", 2.0, 2.0), Word("be", 2.0, 2.0), Word("able", 2.0, 2.2)]  # fleurs_fr_1690's pair
    assert without_unaligned_runs(pair) == pair
    # words with no duration at different instants are not a run
    spread = [Word(t, 3.0 + 0.1 * i, 3.0 + 0.1 * i) for i, t in enumerate("one two three four five".split())]
    assert without_unaligned_runs(spread) == spread


def test_a_trailing_thank_you_over_silence_is_dropped_but_a_spoken_one_is_kept() -> None:
    heard = frames([(0.0, 2.1)], 6.0)
    words = [Word("It", 0.2, 0.4), Word("ended.", 1.5, 2.0), Word("Thank", 2.0, 2.3), Word("you.", 2.3, 3.2)]
    assert [w.text for w in drop_unspoken(words, heard)] == ["It", "ended."]
    said = frames([(0.0, 3.3)], 6.0)
    assert len(drop_unspoken(words, said)) == 4
    thanks = [Word("Thanks", 2.0, 2.5), Word("for", 2.5, 2.7), Word("watching!", 2.7, 3.5)]
    assert drop_unspoken([*words[:2], *thanks], heard) == words[:2]


def test_quiet_time_after_a_word() -> None:
    heard = frames([(0.0, 1.0), (1.5, 2.0)], 3.0)
    assert heard.quiet_from(1.0, 3.0) == pytest.approx(0.5, abs=FRAME_S)
    assert heard.quiet_from(2.0, 3.0) == pytest.approx(1.0, abs=FRAME_S)
    assert PAUSE_S < 0.5


def test_the_hold_bound_does_not_apply_to_the_offline_policy() -> None:
    backend = ScriptedBackend()
    recognizer = StreamingRecognizer(backend, make_commit_policy("offline"), vad=None)  # type: ignore[arg-type]
    backend.recognizer = recognizer
    steps = run(recognizer, 10.0)
    assert not any(words for _, words in steps)


class UnsureBackend(ScriptedBackend):
    """The decodes ``fails(call)`` picks fall under Whisper's confidence mark: no words, and it says so
    (``WhisperBackend.failed``)."""

    failed = False

    def __init__(self, fails: Callable[[int], bool]) -> None:
        super().__init__(flip=False)
        self.fails = fails

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        words = super().transcribe(audio, prompt)
        self.failed = self.fails(self.calls)
        return [] if self.failed else words


def test_a_failed_decode_commits_nothing_and_its_words_come_with_later_steps() -> None:
    recognizer = make(backend=UnsureBackend(lambda call: call % 3 == 0))
    steps = run(recognizer, 9.0)
    assert recognizer.backend.calls == len(steps)  # type: ignore[attr-defined]  # one decode a step
    assert all(not words for n, (_, words) in enumerate(steps, 1) if n % 3 == 0)
    assert recognizer.failed_decodes == len(steps) // 3
    committed = [w.text for _, words in steps for w in words] + [w.text for w in recognizer.finish(9.0).committed]
    assert committed == [f"w{i}" for i in range(len(committed))] and len(committed) >= 28  # none lost, in order


def test_after_failed_decodes_the_last_usable_hypothesis_is_kept_and_committed_at_the_end() -> None:
    recognizer = make(backend=UnsureBackend(lambda call: call > 20))  # from 6 s on every decode fails, the last too
    steps = run(recognizer, 9.0)
    heard = [w.text for w in recognizer._tail]
    assert heard and not steps[-1][1]
    committed = [w.text for _, words in steps for w in words]
    final = recognizer.finish(9.0)
    assert final.failed_decode and [w.text for w in final.committed] == heard
    said = committed + heard
    assert said == [f"w{i}" for i in range(len(said))] and len(said) >= 19  # what 6 s held, none lost
    assert recognizer.failed_decodes == len(steps) - 20 + 1


class WordlessBackend:
    """Speech the model makes nothing of (babble, another language): no words for ``silent_s``, then words."""

    name = "wordless"

    def __init__(self, silent_s: float) -> None:
        self.silent_s = silent_s
        self.recognizer: StreamingRecognizer | None = None

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        assert self.recognizer is not None
        offset = self.recognizer._offset_s
        end = offset + audio.size / SAMPLE_RATE
        starts = np.arange(self.silent_s, end - WORD_S, WORD_S)
        return [Word(f"w{i}", s - offset, s + WORD_S - 0.02 - offset) for i, s in enumerate(starts) if s >= offset]


def test_audio_no_word_comes_from_is_cut_at_the_trim_length_not_dropped_at_the_cap() -> None:
    backend = WordlessBackend(silent_s=40.0)
    recognizer = StreamingRecognizer(backend, make_commit_policy("la2"), vad=None)  # type: ignore[arg-type]
    backend.recognizer = recognizer
    sizes = []
    committed = []
    for n in range(int(50.0 / 0.3)):
        recognizer.insert_audio(np.zeros(int(0.3 * SAMPLE_RATE), np.float32))
        committed += recognizer.step((n + 1) * 0.3).committed
        sizes.append(recognizer.buffer_s)
    assert max(sizes) <= recognizer.trim_s + 0.3 + 1e-6  # never decoded up to the cap
    assert recognizer.dropped_audio_s == 0.0
    assert 40.0 - recognizer.trim_s <= recognizer.unrecognized_audio_s <= 40.0
    assert committed and committed[0].start_s == pytest.approx(40.0)  # the words after it are all there


def test_a_cut_at_a_sentence_end_is_not_chosen_again_while_the_buffer_grows() -> None:
    """One sentence end, then none (fast speech): the first cut is made there; the next cuts must go past it."""
    recognizer = make(sentence_ends=(30,), config=StreamConfig(trim_s=6.0))
    sizes = []
    for n in range(int(40.0 / 0.3)):
        recognizer.insert_audio(np.zeros(int(0.3 * SAMPLE_RATE), np.float32))
        recognizer.step((n + 1) * 0.3)
        sizes.append(recognizer.buffer_s)
    assert max(sizes[int(15.0 / 0.3) :]) <= 6.0 + 1.0  # after the sentence end (w30, ~9 s) too
    assert recognizer.dropped_audio_s == 0.0


class SpeechThenQuietVad:
    """A detector that hears speech for the first ``speech_s`` seconds and nothing after."""

    def __init__(self, speech_s: float) -> None:
        self.speech_frames = int(speech_s / FRAME_S)
        self.frames = 0
        self.pending = 0

    def probabilities(self, samples: np.ndarray) -> np.ndarray:
        self.pending += samples.size
        n, self.pending = divmod(self.pending, FRAME)
        frames = np.arange(self.frames, self.frames + n)
        self.frames += n
        return np.where(frames < self.speech_frames, 0.9, 0.0).astype(np.float32)


class BufferLengths:
    """Words over the first two seconds; records how much audio each decode was given."""

    name = "lengths"

    def __init__(self) -> None:
        self.lengths: list[float] = []

    def transcribe(self, audio: np.ndarray, prompt: str | None = None, decode: object = None) -> list[Word]:
        self.lengths.append(audio.size / SAMPLE_RATE)
        return [
            Word(f"w{i}", i * WORD_S, i * WORD_S + WORD_END_S)
            for i in range(6)
            if i * WORD_S < audio.size / SAMPLE_RATE
        ]


def test_the_last_decode_leaves_out_the_quiet_after_the_speech() -> None:
    """Whisper writes words over a trailing silence; the decode at the end hears the speech and a short tail only."""
    backend = BufferLengths()
    recognizer = StreamingRecognizer(backend, make_commit_policy("la2"), vad=SpeechThenQuietVad(2.0))  # type: ignore[arg-type]
    for n in range(20):  # 6 s: 2 s of speech, then 4 s of quiet
        recognizer.insert_audio(np.zeros(int(0.3 * SAMPLE_RATE), np.float32))
        recognizer.step((n + 1) * 0.3)
    start, heard = recognizer._offset_s, recognizer.buffer_s
    assert backend.lengths[-1] == pytest.approx(heard)  # a step decodes all it heard, quiet included
    recognizer.finish(6.0)
    hangover = 0.3  # the gate's (GateConfig.hangover_s): speech "ends" that long after the last speech frame
    assert backend.lengths[-1] == pytest.approx(2.0 + hangover + FINISH_TAIL_S - start, abs=2 * FRAME_S)
    assert backend.lengths[-1] < heard - 3.0 and recognizer.buffer_s == 0.0


def test_a_word_written_on_the_quiet_after_the_last_word_is_dropped_but_a_soft_word_is_kept() -> None:
    """A live capture's end (ls_2412-153948-0000 on the speakers): "myself." at −20 dBFS, then the room at −50 dBFS,
    on which Whisper wrote "of". A word 12 dB under the speech is still speech; a word inside the speech is never
    dropped, however quiet, and neither is anything but the tail."""
    from engine.asr.speech_filter import QUIET_TAIL_DB, SpeechLevel, without_quiet_tail

    rng = np.random.default_rng(3)
    speech = 0.1 * rng.standard_normal(SAMPLE_RATE)  # −20 dBFS: 0.0-1.0 s
    soft = 0.025 * rng.standard_normal(SAMPLE_RATE // 2)  # −32 dBFS: 1.0-1.5 s
    room = 0.003 * rng.standard_normal(SAMPLE_RATE)  # −50 dBFS: 1.5-2.5 s
    audio = np.concatenate([speech, soft, room]).astype(np.float32)
    words = [Word("painful", 0.2, 0.6), Word("myself.", 0.6, 1.0), Word("to", 1.05, 1.4), Word("of", 1.6, 1.9)]
    assert QUIET_TAIL_DB <= 25
    assert [w.text for w in without_quiet_tail(words, audio, 0.0)] == ["painful", "myself.", "to"]
    moved = [Word(w.text, w.start_s + 10.0, w.end_s + 10.0) for w in words]  # a buffer that starts 10 s in
    assert [w.text for w in without_quiet_tail(moved, audio, 10.0)] == ["painful", "myself.", "to"]
    inside = [Word("of", 1.6, 1.9), Word("myself.", 0.6, 1.0)]  # only the tail goes
    assert [w.text for w in without_quiet_tail(inside, audio, 0.0)] == ["of", "myself."]
    assert without_quiet_tail([], audio, 0.0) == [] and without_quiet_tail(words, audio[:100], 0.0) == words
    # a buffer cut after the sentence holds only the quiet: the level is the speech heard before it
    level = SpeechLevel()
    for i in range(0, audio.size, 1600):
        level.add(audio[i : i + 1600])
    assert level.db() == pytest.approx(-20, abs=1.5)
    quiet = [Word("Okay.", 1.6, 1.9)]
    assert without_quiet_tail(quiet, room, 1.5) == quiet  # on its own level, the room is "speech"
    assert without_quiet_tail(quiet, room, 1.5, level.db()) == []
