"""`zbench jobs` prints runner errors verbatim: a reason is data, never Rich markup."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.rows import job_row
from zbench.cli import app
from zbench.store import Store


@pytest.mark.parametrize(
    "reason", ["crashed: [rank0]: RuntimeError: boom", "config: no dataset at [/data/voc]"]
)
def test_reasons_with_brackets_are_printed_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reason: str
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    store = Store(tmp_path / "zbench.db")
    now = time.time()
    store.add_jobs(
        [
            job_row(
                config={"workload": "resnet50"},
                state="crashed",
                reason=reason,
                created=now,
                ended=now,
            )
        ]
    )
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, ["jobs"])
    assert result.exit_code == 0, result.output
    assert reason in result.output
