"""`zbench suite quick` end to end on the CPU with the real runners, then its Markdown export."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.torch, pytest.mark.timeout(900)]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
def test_quick_suite_on_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobenv: Path) -> None:
    monkeypatch.delenv("ZBENCH_RUNNER_MODULE")  # the real runners
    monkeypatch.setenv("ZBENCH_SAMPLE_INTERVAL_S", "0.5")
    cli = CliRunner(env={"COLUMNS": "160", "NO_COLOR": "1"})
    result = cli.invoke(app, ["suite", "quick"])
    jobs = json.loads(cli.invoke(app, ["jobs", "--json"]).output)
    logs = {j["id"]: (j["state"], j["reason"]) for j in jobs}
    assert result.exit_code == 0, f"{result.output}\n{logs}"
    assert jobs and all(j["state"] == "done" for j in jobs), logs
    export = cli.invoke(app, ["export", "--format", "md"])
    assert export.exit_code == 0
    rows = [line for line in export.output.splitlines() if line.startswith("| ")][1:]
    assert len(rows) == len(jobs)
    assert any(row.startswith("| ResNet-50 | PyTorch | train |") for row in rows)
    for row in rows:
        samples_per_s = row.split(" | ")[7]
        assert float(samples_per_s.replace(",", "")) > 0
