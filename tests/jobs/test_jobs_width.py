"""``zbench jobs`` in 80 columns: the reason is cut, the rest reads whole."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.store import Store


def test_jobs_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    now = time.time()
    base = {"framework": "torch", "mode": "train", "created": now, "started": now}
    Store(tmp_path / "zbench.db").add_jobs(
        [
            {
                **base,
                "workload": "resnet50",
                "config": {"workload": "resnet50"},
                "state": "oom",
                "ended": now,
                "reason": "oom: CUDA out of memory. Tried to allocate 2.00 GiB " * 3,
            },
            {
                **base,
                "workload": "fasterrcnn",
                "config": {"workload": "fasterrcnn"},
                "state": "running",
                "phase": "warmup",
                "step": 3,
                "total": 20,
                "samples_per_s": 61.2,
            },
        ]
    )
    res = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"}).invoke(app, ["jobs", "--all"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, res.stdout
    assert lines[0].split()[:3] == ["ID", "State", "Job"]
    assert any("fasterrcnn" in line and "3/20" in line for line in lines)
    assert any(line.rstrip().endswith("…") and "oom" in line for line in lines)
    wide = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"}).invoke(
        app, ["jobs", "--all", "--wide"]
    )
    assert "Tried to allocate 2.00 GiB oom" in wide.stdout
