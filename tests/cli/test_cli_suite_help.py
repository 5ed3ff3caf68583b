"""`zbench suite -h` lists every key a suite file takes: those the loader checks a file against."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.contract.demos import demos
from zbench.jobs import suites
from zbench.jobs.suite_keys import ALSO


def _help(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    out = CliRunner(env={"COLUMNS": "120", "NO_COLOR": "1"}).invoke(app, ["suite", "-h"])
    assert out.exit_code == 0, out.output
    return out.output


def _accepted() -> set[str]:
    """Every key the loader takes: a file's top keys, a benchmark job's, each demo job's."""
    return suites.TOP_KEYS | suites.JOB_KEYS | suites._demo_keys(demos().values())


def test_every_key_a_suite_file_takes_is_in_suite_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """timeout_s, gpu_ids, share_gpus and extra were taken and never listed."""
    text = _help(tmp_path, monkeypatch)
    missing = [k for k in sorted(_accepted()) if not re.search(rf"(?<![\w-]){k}(?![\w-])", text)]
    assert not missing, missing


def test_the_values_only_a_suite_takes_are_in_suite_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = " ".join(_help(tmp_path, monkeypatch).split())
    assert "cuda|cpu|auto" in text and "or all" in text
    assert all(f"{a.value}: " in text for a in ALSO)


def test_a_key_the_help_does_not_list_is_refused(tmp_path: Path) -> None:
    """The help and the loader read one table: a key outside it is an error, not ignored."""
    suite = tmp_path / "s.toml"
    suite.write_text('[[job]]\nworkload = "resnet50"\ntimeout = 5\n')
    with pytest.raises(suites.SuiteError, match="unknown key 'timeout'"):
        suites.load_suite(suite, gpu_count=0, frameworks=["torch"])
