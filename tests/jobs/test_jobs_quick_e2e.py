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
    export = cli.invoke(app, ["export", "--format", "json"])
    assert export.exit_code == 0
    results = json.loads(export.output)["results"]
    assert len(results) == len(jobs)
    assert any(
        (r["workload"], r["framework"], r["mode"]) == ("resnet50", "torch", "train")
        for r in results
    )
    for r in results:
        assert r["samples_per_s"] > 0
