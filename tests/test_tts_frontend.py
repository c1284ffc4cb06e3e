"""Words → phoneme units with the real espeak-ng front end, and chunking."""

from __future__ import annotations

import pytest

from engine.tts import espeak
from engine.tts.chunker import ChunkSizes, chunk_units
from engine.tts.frontend import FrontEnd, Unit, ends_sentence, split_words
from engine.tts.voice import VoiceConfig, bundled_voice_paths


@pytest.fixture(scope="module")
def frontend() -> FrontEnd:
    return FrontEnd(VoiceConfig.load(bundled_voice_paths()[1]))


def check_exact(frontend: FrontEnd, text: str) -> list[Unit]:
    words = split_words(text)
    units = frontend.units(words)
    assert [w for u in units for w in u.words] == words
    assert sum((u.phonemes for u in units), ()) == frontend.phonemize(" ".join(words))
    for unit in units:
        assert list(unit.word_indices) == list(range(unit.first_word, unit.first_word + len(unit.words)))
        assert len(unit.ids) == 2 * len(unit.phonemes)
    return units


def test_merged_words_become_one_unit(frontend: FrontEnd) -> None:
    units = check_exact(frontend, "He walked out of the room.")
    assert ("out", "of") in [u.words for u in units]


@pytest.mark.parametrize(
    "text",
    [
        "He walked out of the room at 10:30, didn't he?",
        "Dr. Smith paid $5.50 for the café crème.",
        "The U.S.A. and NATO met in 2024; naïve résumé!",
        "Hello, world",
        "one",
    ],
)
def test_every_word_and_phoneme_is_accounted_for(frontend: FrontEnd, text: str) -> None:
    assert check_exact(frontend, text)


def test_numbers_expand_inside_their_word(frontend: FrontEnd) -> None:
    units = check_exact(frontend, "at 10:30 sharp")
    (clock,) = [u for u in units if "10:30" in u.words]
    assert clock.n_phonemes > 6 and " " in clock.phonemes[:-1]  # "ten thirty": two groups, one unit


def test_empty_and_emoji_only_input_give_no_units(frontend: FrontEnd) -> None:
    assert frontend.units([]) == []
    assert split_words("  \n\t ") == []
    assert split_words("🙂 🎉 ™") == []
    assert frontend.units(split_words("🙂 hello 🎉")) == frontend.units(["hello"])


def test_punctuation_alone_at_a_sentence_start_is_not_read_aloud(frontend: FrontEnd) -> None:
    """espeak reads "!" alone as "exclamation" and "***" as three asterisks; after a word it reads them as
    punctuation. Such words join the next word's unit, silent, and nothing else changes."""
    bye = frontend.units(["bye"])
    for lead in ("!!!", "!", "***", "..."):
        (unit,) = frontend.units([lead, "bye"])
        assert unit.words == (lead, "bye") and unit.phonemes == bye[0].phonemes, lead
        assert frontend.units([lead]) == []
    assert frontend.units(["wow", "!!!"])[0].phonemes == frontend.units(["wow!!!"])[0].phonemes  # after a word
    assert frontend.units(["¿Qué?"])[0].n_phonemes > 0  # a word with punctuation in it is a word


def test_very_long_token_is_cut(frontend: FrontEnd) -> None:
    words = split_words("a" * 500 + " end")
    assert len(words[0]) <= 48
    assert check_exact(frontend, " ".join(words))


def test_sentence_ids_frame_the_units(frontend: FrontEnd) -> None:
    units = frontend.units(["Hi", "there."])
    ids = frontend.sentence_ids(units)
    assert ids[: len(frontend.prefix_ids)] == frontend.prefix_ids
    assert ids[-len(frontend.suffix_ids) :] == frontend.suffix_ids
    assert len(ids) == len(frontend.prefix_ids) + sum(len(u.ids) for u in units) + len(frontend.suffix_ids)


def test_ends_sentence() -> None:
    assert ends_sentence("end.") and ends_sentence("why?!") and ends_sentence('so."')
    assert not ends_sentence("Dr") and not ends_sentence("well,")


def test_chunks_are_minimal_runs_of_whole_units(frontend: FrontEnd) -> None:
    words = split_words("The quick brown fox jumps over the lazy dog and then runs far away into the woods.")
    units = frontend.units(words)
    sizes = ChunkSizes(first=18, later=12)
    chunks = chunk_units(units, sizes, sentence_complete=True)
    assert [u for c in chunks for u in c] == units
    for index, chunk in enumerate(chunks[:-1]):
        need = sizes.first if index == 0 else sizes.later
        count = sum(u.n_phonemes for u in chunk)
        assert count >= need and count - chunk[-1].n_phonemes < need  # minimal
    partial = chunk_units(units, sizes, sentence_complete=False)
    assert len(partial) in (len(chunks), len(chunks) - 1)
    assert all(sum(u.n_phonemes for u in c) >= 12 for c in partial)
    with pytest.raises(ValueError):
        ChunkSizes(first=0)


ODD_TEXTS = (
    "He walked out of the room.",
    "At 10:30, Dr. Smith paid $5; the café's résumé was naïve: über-cool!",
    "What? Well... (quietly) one, two, three.",
    "Zürich, señor, e.g. the U.S.A.",
    "",
)


def test_espeak_gives_what_pipers_phonemizer_gives() -> None:
    from piper.phonemize_espeak import EspeakPhonemizer

    pipers = [EspeakPhonemizer().phonemize("en-us", text) for text in ODD_TEXTS]
    assert [espeak.phonemize("en-us", text) for text in ODD_TEXTS] == pipers


def test_espeak_selects_the_voice_only_when_it_changes(frontend: FrontEnd, monkeypatch: pytest.MonkeyPatch) -> None:
    """espeak-ng keeps ~1.4 kB each time a voice is selected; piper's phonemizer selects it on every call."""
    from piper import espeakbridge

    selected: list[str] = []
    set_voice = espeakbridge.set_voice
    monkeypatch.setattr(espeakbridge, "set_voice", lambda voice: (selected.append(voice), set_voice(voice))[1])
    monkeypatch.setattr(espeak, "_selected_voice", None)
    for count in range(20):
        assert frontend.phonemize(f"the words of call number {count}")
    espeak.phonemize("de", "the same words again")
    espeak.phonemize("en-us", "the same words again")
    assert selected == ["en-us", "de", "en-us"]


def test_espeak_keeps_nothing_of_what_it_phonemized() -> None:
    """piper's bridge keeps a reference to every clause it returns (~0.4 kB of Python objects a call)."""
    import gc
    import tracemalloc

    espeak.phonemize("en-us", "warm up, once.")
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for count in range(2000):
            espeak.phonemize("en-us", f"the words of call number {count}, and then a few more.")
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 2000 * 40, f"{kept / 2000:.0f} bytes kept per call"
