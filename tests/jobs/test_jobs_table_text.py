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
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, ["jobs", "--all"])
    assert result.exit_code == 0, result.output
    assert reason in result.output


def test_jobs_lists_today_and_what_still_runs_and_all_lists_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --all, a job that ended before today's midnight is left out; one still queued from
    then is not. Times are two days back, so the test reads the same at any hour (an end-to-end
    test that ran across midnight once listed 2 of its 3 jobs)."""
    from zbench.jobs import liveness

    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    # `zbench jobs` starts a supervisor for a queued job: it would run (and end) the one here.
    monkeypatch.setattr(liveness, "ensure_supervisor", lambda db: None)
    old = time.time() - 2 * 86400
    Store(tmp_path / "zbench.db").add_jobs(
        [
            job_row(workload="vgg16", state="done", created=old, ended=old),
            job_row(workload="unet2d", created=old),  # queued since: not finished
        ]
    )
    cli = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"})
    today = cli.invoke(app, ["jobs"])
    assert today.exit_code == 0, today.output
    assert "unet2d" in today.output and "vgg16" not in today.output
    every = cli.invoke(app, ["jobs", "--all"])
    assert "unet2d" in every.output and "vgg16" in every.output
    only_old = cli.invoke(app, ["jobs", "--workload", "vgg16"])
    assert only_old.output == "No jobs match (workload vgg16) today (--all shows every job).\n"
