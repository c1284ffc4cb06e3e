"""The multilingual Whisper base model joined from its two packages into the cache, checked, and joined again when
the join is damaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.asr import whisper_base_model as wbm
from engine.asr.backend import AsrError
from engine.hashing import file_sha256

pytestmark = [pytest.mark.slow, pytest.mark.untimed]


def test_the_parts_join_into_the_pinned_model_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = wbm.model_dir(tmp_path)
    assert folder.is_relative_to(tmp_path)
    assert file_sha256(folder / "model.bin") == wbm.MODEL_SHA256
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.bin", "tokenizer.json", "vocabulary.txt"]
    assert sum(p.stat().st_size for p in wbm.part_files()) == (folder / "model.bin").stat().st_size

    def no_join(folder: Path) -> None:
        raise AssertionError("joined again although the join was sound")

    monkeypatch.setattr(wbm, "join_into", no_join)
    assert wbm.model_dir(tmp_path) == folder


@pytest.mark.parametrize("damage", ["flipped byte", "cut short"])
def test_a_damaged_join_is_detected_and_redone(tmp_path: Path, damage: str) -> None:
    model = wbm.model_dir(tmp_path) / "model.bin"
    if damage == "flipped byte":
        with model.open("r+b") as handle:
            handle.seek(1000)
            byte = handle.read(1)
            handle.seek(1000)
            handle.write(bytes([byte[0] ^ 0xFF]))
    else:
        with model.open("r+b") as handle:
            handle.truncate(model.stat().st_size // 3)
    assert file_sha256(model) != wbm.MODEL_SHA256
    wbm.model_dir(tmp_path)
    assert file_sha256(model) == wbm.MODEL_SHA256


def test_parts_that_do_not_match_the_checksum_leave_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wbm, "MODEL_SHA256", "0" * 64)
    with pytest.raises(AsrError, match="do not join into the expected file"):
        wbm.model_dir(tmp_path)
    folder = next((tmp_path / "models").iterdir())
    assert not (folder / "model.bin").exists()
    assert not [p for p in folder.iterdir() if p.name.startswith(".model.bin")]  # no temporary file left


def test_the_joined_model_loads_and_recognizes_real_speech(tmp_path: Path, speech_dir: Path) -> None:
    from engine.asr.whisper_backend import WhisperBackend
    from engine.audio.io import load_audio

    backend = WhisperBackend(wbm.model_dir(tmp_path), threads=1)
    audio = load_audio(speech_dir / "wav" / "ljspeech_LJ001-0001.wav")[: 5 * 16000]
    words = [w.text.strip(",.").lower() for w in backend.transcribe_offline(audio)]
    assert "printing" in words and "sense" in words, words


def _entry(folder: Path, lang: str) -> dict:
    entries = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    return next(e for e in entries if e["lang"] == lang)


def test_base_detects_french_and_translates_spanish_into_english(tmp_path: Path, speech_xx_dir: Path) -> None:
    from engine.asr.whisper_backend import WhisperBackend
    from engine.audio.io import load_audio
    from engine.metrics.translation import bleu

    backend = WhisperBackend(wbm.model_dir(tmp_path), threads=1, language=None, task="translate")
    assert backend.multilingual and "es" in backend.languages()
    assert backend.min_avg_logprob is None  # a correct translation often scores under Whisper's failed-decode mark
    french = _entry(speech_xx_dir, "fr")
    language, probability = backend.detect_language(load_audio(speech_xx_dir / french["wav"]))
    assert language == "fr" and probability > 0.5
    spanish = _entry(speech_xx_dir, "es")
    backend.language = "es"
    audio = load_audio(speech_xx_dir / spanish["wav"])
    english = " ".join(w.text for w in backend.transcribe_offline(audio))
    assert bleu([spanish["translation"]], [english]) > 30, english
    backend.beam_size = 2  # interpreting's default: the same sentence through a beam, in the streaming short window
    beams: list[int] = []
    decode = backend._model.transcribe
    backend._model.transcribe = lambda *args, **kwargs: (beams.append(kwargs["beam_size"]), decode(*args, **kwargs))[1]
    beamed = backend.transcribe(audio)
    assert beams and set(beams) == {2}  # the beam reached the decoder
    assert bleu([spanish["translation"]], [" ".join(w.text for w in beamed)]) > 30, beamed
    assert all(0 <= w.start_s <= w.end_s <= audio.size / 16000 + 0.05 for w in beamed)  # aligned in the audio


def test_interpreting_decodes_with_a_beam_and_shadowing_greedily() -> None:
    from engine.asr.whisper_backend import WhisperBackend
    from engine.pipeline.config import ShadowConfig
    from engine.pipeline.models import load_backend

    assert load_backend(ShadowConfig()).beam_size == 1
    assert load_backend(ShadowConfig(model="base")).beam_size == 1
    interpreting = ShadowConfig(translate_from="es")
    assert load_backend(interpreting).beam_size == interpreting.interpret_beam_size == 2
    assert load_backend(ShadowConfig(translate_from="es", interpret_beam_size=1)).beam_size == 1
    assert interpreting.models_key() != ShadowConfig(translate_from="es", interpret_beam_size=5).models_key()
    with pytest.raises(ValueError, match="beam size"):
        ShadowConfig(translate_from="es", interpret_beam_size=0)
    with pytest.raises(AsrError, match="beam size"):
        WhisperBackend(threads=1, beam_size=0)


def test_an_english_only_model_refuses_to_translate() -> None:
    from engine.asr.whisper_backend import WhisperBackend

    with pytest.raises(AsrError, match="English only"):
        WhisperBackend(threads=1, task="translate", language="es")
    with pytest.raises(AsrError, match="unknown Whisper task"):
        WhisperBackend(threads=1, task="summarize")


@pytest.fixture(scope="module")
def installed_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A joined model folder as the packaged app's model package installs it."""
    folder = tmp_path_factory.mktemp("app") / "models" / wbm.MODEL_NAME
    folder.mkdir(parents=True)
    wbm.join_into(folder)
    return folder


def test_an_installed_model_is_used_where_it_is_without_joining(
    installed_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(wbm.ENV_MODEL_DIR, str(installed_model))
    monkeypatch.setattr(wbm, "join_into", lambda folder: pytest.fail("joined although a model is installed"))
    assert wbm.model_dir(tmp_path / "cache") == installed_model
    assert wbm.available_folder() == installed_model
    assert not (tmp_path / "cache").exists()


def test_the_packaged_app_finds_the_model_package_beside_it(
    installed_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(wbm.ENV_MODEL_DIR, raising=False)
    monkeypatch.setattr(wbm.sys, "frozen", True, raising=False)
    monkeypatch.setattr(wbm.sys, "executable", str(installed_model.parent.parent / "liveshadow"))
    assert wbm.model_dir() == installed_model


def test_the_packaged_app_without_the_model_package_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(wbm.ENV_MODEL_DIR, raising=False)
    monkeypatch.setattr(wbm.sys, "frozen", True, raising=False)
    monkeypatch.setattr(wbm.sys, "executable", str(tmp_path / "liveshadow"))
    monkeypatch.setattr(wbm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(AsrError, match=f"install the {wbm.ADDON_PACKAGE} package"):
        wbm.model_dir(tmp_path / "cache")


@pytest.mark.parametrize("damage", ["flipped byte", "missing tokenizer"])
def test_a_damaged_installed_model_is_named_not_used(
    installed_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    import shutil

    copy = tmp_path / wbm.MODEL_NAME
    shutil.copytree(installed_model, copy)
    if damage == "flipped byte":
        with (copy / "model.bin").open("r+b") as handle:
            handle.seek(5000)
            byte = handle.read(1)
            handle.seek(5000)
            handle.write(bytes([byte[0] ^ 0xFF]))
        expected = "damaged"
    else:
        (copy / "tokenizer.json").unlink()
        expected = "incomplete \\(tokenizer.json missing\\)"
    monkeypatch.setenv(wbm.ENV_MODEL_DIR, str(copy))
    with pytest.raises(AsrError, match=f"{expected}.*reinstall {wbm.ADDON_PACKAGE}"):
        wbm.model_dir(tmp_path / "cache")
