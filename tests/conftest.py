"""Fixtures: Qt offscreen, private settings/cache/log folders, the real speech recordings, virtual audio devices."""

from __future__ import annotations

import gc
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# Before anything imports Qt or reads a folder: offscreen Qt, and no test touches the user's real files.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# the benchmarks' speed probe times 9 rounds of fixed work before and after each run; the tests check that it is
# there and reported, not the machine's speed, so one round does (about 20 s saved per benchmark run)
os.environ.setdefault("LIVESHADOW_PROBE_ROUNDS", "1")
# The same kernels on every CPU CI may run on: CTranslate2 and oneDNN choose theirs by the CPU (AVX-512 and MKL on
# the Intel Xeon, AVX2 and oneDNN on the AMD EPYC), and numpy's OpenBLAS too, and each rounds differently, so a
# decode that gives one word on one CPU gave another on the other. The tests' words are those of the AVX2 kernels,
# which every x86-64 CPU here has; the app keeps each CPU's own (the reports name any such setting).
for _key, _value in (
    ("CT2_FORCE_CPU_ISA", "AVX2"),
    ("CT2_USE_MKL", "0"),
    ("ONEDNN_MAX_CPU_ISA", "AVX2"),
    ("OPENBLAS_CORETYPE", "Haswell"),
):
    os.environ.setdefault(_key, _value)
_PRIVATE_ROOT = Path(tempfile.mkdtemp(prefix="liveshadow-tests-"))
for _name in ("CONFIG", "CACHE", "LOG", "DATA"):
    os.environ[f"LIVESHADOW_{_name}_DIR"] = str(_PRIVATE_ROOT / _name.lower())

from engine import paths  # noqa: E402
from tests import virtual_audio as va  # noqa: E402

IN_CI = bool(os.environ.get("CI"))
ARTIFACTS_DIR = Path(__file__).resolve().parent.parent / "test-artifacts"


def _unavailable(reason: str) -> None:
    """Skip on a developer machine that lacks something; in CI the same lack is a failure."""
    if IN_CI:
        pytest.fail(f"{reason} (CI must run this test)")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def private_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets empty settings in its own temporary folder."""
    config = tmp_path / "config"
    monkeypatch.setenv(paths.ENV_CONFIG_DIR, str(config))
    return config


@pytest.fixture(autouse=True)
def root_logger_restored() -> Iterator[None]:
    """A test that runs the CLI leaves the root logger as the CLI set it: a handler on the test's captured stderr,
    closed once the test ends, and the level at INFO. Restored here, so later tests do not log every recognizer step
    into a closed stream (one traceback per line, in the middle of timed work). Only the CLI's own handlers go
    (``logsetup.remove_handlers``); pytest's capture handlers change between a test's phases and stay."""
    from engine.logsetup import remove_handlers

    root = logging.getLogger()
    level = root.level
    yield
    remove_handlers()
    root.setLevel(level)


@pytest.fixture(autouse=True)
def collect_in_the_gui_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test with Qt widgets, its windows' reference cycles are collected here, in the GUI thread, not later
    in whichever engine thread next trips the collector (``app.gui_gc``)."""
    yield
    if "qtbot" in request.fixturenames:
        gc.collect()
        if not gc.isenabled():  # a window the test left open: the next test starts with the collector on
            from app import gui_gc

            gui_gc._open = 0
            gc.enable()


@pytest.fixture(scope="session")
def speech_dir() -> Path:
    """../shared/speech: real human recordings with reference transcripts."""
    directory = paths.shared_speech_dir()
    if not (directory / "manifest.jsonl").exists():
        _unavailable(f"the real-speech recordings are not at {directory} (set LIVESHADOW_SPEECH_DIR)")
    return directory


def _beside_speech(name: str, what: str) -> Path:
    """A set of recordings in a folder beside ../shared/speech, with its manifest (skipped or failed if missing)."""
    directory = paths.shared_speech_dir().parent / name
    if not (directory / "manifest.jsonl").exists():
        _unavailable(f"{what} are not at {directory}")
    return directory


@pytest.fixture(scope="session")
def speech_xx_dir() -> Path:
    """../shared/speech-xx: real recordings in six languages with English reference translations."""
    return _beside_speech("speech-xx", "the recordings in other languages")


@pytest.fixture(scope="session")
def speech_hard_dir() -> Path:
    """../shared/speech-hard: real spontaneous, accented, noisy English with human transcripts."""
    return _beside_speech("speech-hard", "the hard real-speech recordings")


@pytest.fixture(scope="session")
def speech_manifest(speech_dir: Path) -> list[dict]:
    lines = (speech_dir / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Files tests leave for people to look at (screenshots, recordings); kept after the run."""
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    return ARTIFACTS_DIR


@contextmanager
def _sound_server() -> Iterator[va.VirtualAudio]:
    """A private PulseAudio server with a virtual microphone (default source) and speaker (default sink).

    sounddevice is pointed at it and made to re-scan, and everything is restored afterwards.
    """
    missing = va.missing_tools()
    if missing:
        _unavailable(f"PulseAudio tools not installed: {', '.join(missing)} (run scripts/setup)")
    from engine.audio.devices import AudioDeviceError, rescan

    audio = va.start()
    saved = {key: os.environ.get(key) for key in ("PULSE_SERVER", "XDG_RUNTIME_DIR")}
    os.environ["PULSE_SERVER"] = audio.server
    os.environ["XDG_RUNTIME_DIR"] = str(audio.runtime_dir)
    try:
        try:
            rescan()
        except AudioDeviceError as exc:
            _unavailable(str(exc))
        yield audio
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        va.stop(audio)
        try:
            rescan()
        except AudioDeviceError:
            pass


@pytest.fixture(scope="session")
def shared_sound_server() -> Iterator[va.VirtualAudio]:
    """The one server of the run (``_sound_server``); tests take it through ``virtual_audio``."""
    with _sound_server() as audio:
        yield audio


@pytest.fixture
def virtual_audio(shared_sound_server: va.VirtualAudio) -> Iterator[va.VirtualAudio]:
    """The virtual microphone and speaker every audio test shares. A server that exits during a test fails that
    test, with what the server logged, and is started again so the tests after it run on a live one."""
    audio = shared_sound_server
    _fail_if_exited(audio, "had exited before this test")  # after the last test's check
    yield audio
    _fail_if_exited(audio, "exited during this test")


def _fail_if_exited(audio: va.VirtualAudio, when: str) -> None:
    """A server that exited is started again (the tests after run on a live one), and the test fails saying so."""
    from engine.audio.devices import rescan

    if audio.process.poll() is None:
        return
    code, tail = audio.process.returncode, va.log_tail(audio)
    va.restart(audio)
    rescan()
    pytest.fail(f"the shared PulseAudio server {when} ({code}); its log ends:\n{tail}")


@pytest.fixture
def disposable_audio() -> Iterator[va.VirtualAudio]:
    """A server of the test's own, whose devices it may remove; the shared one (if any) is used again after."""
    with _sound_server() as audio:
        yield audio


@pytest.fixture(scope="session")
def shadow_models():
    """The default session's models (whisper tiny.en, silero VAD, the bundled voice), loaded once."""
    from engine.pipeline.config import ShadowConfig
    from engine.pipeline.models import Models

    return Models.load(ShadowConfig())


@pytest.fixture(scope="session")
def passage_file_session(shadow_models, speech_dir: Path, speech_manifest: list[dict]) -> dict:
    """The default session shadowing the 11.7 s read passage ls_2412-153948-0000 from its file, on the compute-aware
    clock, once per run (about 10 s): the file session that the window's sessions on that recording, the same
    recording in other formats, at another tempo and on speakers are measured against."""
    from engine.pipeline.config import ShadowConfig
    from engine.pipeline.shadow import shadow_file

    entry = next(e for e in speech_manifest if e["id"] == "ls_2412-153948-0000")
    return shadow_file(speech_dir / entry["wav"], ShadowConfig(), shadow_models, entry=entry, speech_chain=False)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Session recordings of a test go to its own folder (``LIVESHADOW_DATA_DIR``)."""
    folder = tmp_path / "data"
    monkeypatch.setenv(paths.ENV_DATA_DIR, str(folder))
    return folder


QUICK = bool(os.environ.get("LIVESHADOW_QUICK_TESTS"))  # scripts/test --quick: the unit tests alone
_RUNNING = [""]  # the test being set up or run (the quick tier's refusal names it)


def pytest_runtest_setup(item: pytest.Item) -> None:
    _RUNNING[0] = item.nodeid


def pytest_configure(config: pytest.Config) -> None:
    """In the quick tier a test that loads a real model (itself, or through a fixture of any scope) fails and names
    the mark it lacks (``slow``): the tier stays quick, and the marks say which tests need the models."""
    if not QUICK:
        return
    from engine.asr.vad import SileroVad
    from engine.asr.whisper_backend import WhisperBackend
    from engine.tts.voice import TwoStageVoice

    def refuse(*_args: object, **_kwargs: object) -> None:
        pytest.fail(f"{_RUNNING[0]} loads a model: mark it slow (the quick tier runs no model)")

    vad_init = SileroVad.__init__

    def vad(self: SileroVad, model_path: Path | None = None) -> None:
        if model_path is None:
            refuse()  # the bundled model
        vad_init(self, model_path)  # a test's own file: a missing or broken model's error

    WhisperBackend.__init__ = refuse  # type: ignore[method-assign]
    TwoStageVoice.__init__ = refuse  # type: ignore[method-assign]
    SileroVad.__init__ = vad  # type: ignore[method-assign]
