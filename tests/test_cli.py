from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import cli, paths


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_help_lists_every_subcommand() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for name in ("gui", "speak", "transcribe", "shadow", "eval", "bench"):
        assert f"    {name}" in result.stdout


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("liveshadow ")


def test_unknown_subcommand_is_a_usage_error() -> None:
    result = run_cli("frobnicate")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_no_display_gives_a_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "engine"], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 1
    assert "no display found" in result.stderr


def test_verbose_logging_and_rotating_log_file(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    result = run_cli("-vv", "shadow", "x", env={paths.ENV_LOG_DIR: str(log_dir)})
    assert "DEBUG" in result.stderr and "engine.cli" in result.stderr
    log_file = log_dir / "liveshadow.log"
    assert log_file.exists() and "command shadow" in log_file.read_text()
    quiet = run_cli("shadow", "x", env={paths.ENV_LOG_DIR: str(log_dir)})
    assert "DEBUG" not in quiet.stderr


def test_verbose_after_the_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["shadow", "-v"]) == 2
    assert logging.getLogger().level <= logging.INFO


def test_unwritable_log_dir_is_only_a_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run_cli("shadow", "x.wav", env={paths.ENV_LOG_DIR: str(blocker / "logs")})
    assert "cannot write the log file" in result.stderr
    assert result.returncode == 1 and "audio file not found: x.wav" in result.stderr  # the command still ran


def test_bench_asr_options_are_checked_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model bench asr does not know, a commit policy that does not exist, an option on a bench it is not for: a usage
    error that names them, before any model loads (in this process: the quick tier fails a test that loads one)."""
    for args, said in (
        (("asr", "--model", "small"), "knows the models tiny.en and base"),
        (("asr", "--commit-policies", "la2,la3"), "unknown commit policy: la3"),
        (("asr", "--commit-policies", "hold2", "--second-pass"), "include la2"),
        (("tts", "--second-pass"), "is for bench asr"),
        (("interpret", "--commit-policies", "la2,waitk"), "unknown commit policy: waitk (la2, hold2, offline)"),
        (("shadow", "--commit-policies", "la2"), "for bench asr and bench interpret"),
        (("tts", "--ablate"), "for bench asr and bench echo"),
    ):
        manifest = tmp_path / "manifest.jsonl"
        manifest.write_text("")
        code = cli.main(["bench", *args, *(("--manifest", str(manifest)) if args[0] in ("asr", "interpret") else ())])
        err = capsys.readouterr().err
        assert code == cli.EXIT_USAGE and said in err, (args, err)


def test_a_comma_separated_option_gives_its_names_stripped_without_empty_ones() -> None:
    from engine.cli.common import comma_list

    assert comma_list(" la2, hold2,,offline ") == ["la2", "hold2", "offline"]
    assert comma_list("") == [] and comma_list(None) == [] and comma_list(" , ") == []
