"""The incremental synthesizer on the real voice: quality against the baselines, exact seams, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from engine.tts.policies import LookaheadPolicy, make_policy
from engine.tts.quality import snr_db, word_distances_db
from engine.tts.synthesizer import IncrementalSynthesizer, synthesize_text
from engine.tts.voice import TwoStageVoice

pytestmark = pytest.mark.slow

TEXT = (
    "Prefix to prefix synthesis lets the voice start speaking long before the speaker has finished "
    "the whole sentence, which matters a great deal for live shadowing."
)


@pytest.fixture(scope="module")
def voice(tmp_path_factory: pytest.TempPathFactory) -> TwoStageVoice:
    return TwoStageVoice(cache_root=tmp_path_factory.mktemp("voices"))


@pytest.fixture(scope="module")
def reference(voice: TwoStageVoice):
    return synthesize_text(IncrementalSynthesizer(voice, make_policy("full")), TEXT)


def run(voice: TwoStageVoice, policy: str, text: str = TEXT):
    synthesizer = IncrementalSynthesizer(voice, make_policy(policy))
    audio, pieces = synthesize_text(synthesizer, text)
    return synthesizer, audio, pieces


def test_every_word_is_spoken_once_in_order(voice: TwoStageVoice) -> None:
    for policy in ("full", "naive", "lookahead-1"):
        _, audio, pieces = run(voice, policy)
        spoken = [w.text for p in pieces for w in p.words]
        assert spoken == TEXT.split(), policy
        assert audio.size > 0 and np.isfinite(audio).all()


def test_lookahead_1_is_closer_to_full_sentence_than_naive(voice: TwoStageVoice, reference) -> None:
    full_audio, full_pieces = reference
    means = {}
    for policy in ("naive", "lookahead-1"):
        _, audio, pieces = run(voice, policy)
        distances = word_distances_db(audio, pieces, full_audio, full_pieces, voice.sample_rate)
        assert len(distances) == len(TEXT.split())
        means[policy] = float(np.mean(distances))
    assert means["lookahead-1"] < 0.75 * means["naive"], means


def test_lookahead_with_the_whole_sentence_equals_full_synthesis(voice: TwoStageVoice, reference) -> None:
    """Noise fixed by absolute position: with all context, the incremental path is the full synthesis."""
    synthesizer = IncrementalSynthesizer(voice, LookaheadPolicy(k=100, left_context=10_000))
    audio, pieces = synthesize_text(synthesizer, TEXT)
    assert len(pieces) > 3
    np.testing.assert_array_equal(audio, reference[0])


def test_seams_equal_a_one_shot_decode(voice: TwoStageVoice) -> None:
    synthesizer, audio, pieces = run(voice, "lookahead-1")
    assert len(pieces) > 3
    one_shot = voice.stage2(synthesizer.last_sentence_latent)
    assert snr_db(audio, one_shot) >= 60


def test_without_overlap_the_seams_are_not_exact(voice: TwoStageVoice) -> None:
    """The seam check can fail: with δ = 0 the slices click."""
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"), delta=0)
    audio, _ = synthesize_text(synthesizer, TEXT)
    assert snr_db(audio, voice.stage2(synthesizer.last_sentence_latent)) < 40


def test_reproducible_with_a_seed(voice: TwoStageVoice) -> None:
    first = run(voice, "lookahead-1")[1]
    assert np.array_equal(first, run(voice, "lookahead-1")[1])


def test_words_arriving_one_by_one_give_the_same_audio(voice: TwoStageVoice) -> None:
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    pieces = []
    for word in TEXT.split():
        pieces.extend(synthesizer.feed([word]))
    pieces.extend(synthesizer.flush())
    streamed = np.concatenate([p.samples for p in pieces])
    assert np.array_equal(streamed, run(voice, "lookahead-1")[1])


def test_first_piece_comes_before_the_sentence_ends(voice: TwoStageVoice) -> None:
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    early = synthesizer.feed(TEXT.split()[:12])
    assert early and early[0].words and early[0].chunk == 0


def test_cancel_drops_the_pending_sentence(voice: TwoStageVoice) -> None:
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    synthesizer.feed("this sentence will never be finished because the user")
    synthesizer.cancel()
    assert synthesizer.pending_words == 0
    pieces = synthesizer.feed("Hello.")
    assert [w.text for p in pieces for w in p.words] == ["Hello."]


@pytest.mark.parametrize("text", ["", "   ", "🙂🎉", "\u200b\u200b"])
def test_empty_or_unspeakable_input_is_a_no_op(voice: TwoStageVoice, text: str) -> None:
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    assert synthesizer.feed(text) == [] and synthesizer.flush() == []


def test_very_long_token_is_spoken_without_crashing(voice: TwoStageVoice) -> None:
    _, audio, pieces = run(voice, "lookahead-1", "x" * 500 + " done.")
    assert audio.size > 0 and pieces[-1].sentence_end


def test_sentences_are_split_at_their_ends(voice: TwoStageVoice) -> None:
    _, _, pieces = run(voice, "lookahead-1", "First one here. And the second one follows it now.")
    assert {p.sentence for p in pieces} == {0, 1}
    assert sum(p.sentence_end for p in pieces) == 2


HINTED = "the king of the castle stood in the rain at the end of the long day and waited for news of the war."


def test_a_hint_lets_a_chunk_go_before_its_lookahead_is_final(voice: TwoStageVoice) -> None:
    words = HINTED.split()

    def first_piece_after(hint_words: int) -> tuple[int, list]:
        synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
        for i in range(1, len(words) + 1):
            pieces = synthesizer.feed([words[i - 1]], hint=words[i : i + hint_words])
            if pieces:
                return i, pieces + synthesizer.feed(words[i:]) + synthesizer.flush()
        raise AssertionError("no piece before the end")

    plain, _ = first_piece_after(0)
    hinted, pieces = first_piece_after(6)
    assert hinted < plain  # the lookahead came from the hint, not from final words
    assert [w.text for p in pieces for w in p.words] == words  # hint words are context only, never spoken


def test_wrong_hints_never_lose_or_repeat_a_word(voice: TwoStageVoice) -> None:
    rng = np.random.default_rng(7)
    words = HINTED.split()
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    wrong = ["of", "the", "a", "course", "in", "banana", "news"]
    pieces = []
    for i, word in enumerate(words):
        hint = list(rng.choice(wrong, size=int(rng.integers(0, 4)))) if rng.random() < 0.7 else words[i + 1 : i + 4]
        pieces.extend(synthesizer.feed([word], hint=hint))
    pieces.extend(synthesizer.flush())
    spoken = [(w.index, w.text) for p in pieces for w in p.words]
    assert spoken == list(enumerate(words))  # each word once, in order; hint words never spoken
    audio = np.concatenate([p.samples for p in pieces])
    assert np.isfinite(audio).all() and audio.size > voice.sample_rate


def test_hurry_speaks_final_chunks_without_their_lookahead(voice: TwoStageVoice) -> None:
    words = HINTED.split()
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    assert synthesizer.hurry() == []  # nothing fed: nothing to do
    pieces, hurried_at = [], None
    for i, word in enumerate(words):
        pieces.extend(synthesizer.feed([word]))
        if pieces and hurried_at is None:
            made = synthesizer.hurry()  # the first chunk has played: the next goes without waiting
            if made:
                hurried_at = i
                assert all(p.hurried for p in made) and not any(p.hurried for p in pieces)
                pieces.extend(made)
                spoken = [w.text for p in pieces for w in p.words]
                assert spoken[:i] == words[:i] and len(spoken) <= i + 1  # the last word's end may be held (δ frames)
                assert synthesizer.hurry() == []  # every word fed has been synthesized
    pieces.extend(synthesizer.flush())
    assert hurried_at is not None
    assert [(w.index, w.text) for p in pieces for w in p.words] == list(enumerate(words))  # once each, in order
    assert sum(p.hurried for p in pieces) >= 1 and not pieces[0].hurried


def test_hurry_never_starts_a_sentence(voice: TwoStageVoice) -> None:
    synthesizer = IncrementalSynthesizer(voice, make_policy("lookahead-1"))
    synthesizer.feed(HINTED.split()[:8])  # enough for a first chunk, not for its lookahead
    assert synthesizer.hurry() == []  # the silence before a sentence's first chunk is a pause, not a gap
