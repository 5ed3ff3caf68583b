"""`zbench suite quick` end to end on the CPU with the real runners, then its Markdown export."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app

pytestmark = [pytest.mark.slow, pytest.mark.torch, pytest.mark.timeout(900)]


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _missing_runner() -> str | None:
    """Why the real runners cannot run the quick suite here, or None."""
    if not _found("zbench.runners.__main__") or not _found("zbench.runners.torch.main"):
        return "the PyTorch runner (zbench.runners.torch.main) is not there yet"
    if not _found("torch"):
        return "PyTorch is not installed"
    if _found("tensorflow") and not _found("zbench.runners.tf.main"):
        return "TensorFlow is installed but its runner (zbench.runners.tf.main) is not there yet"
    return None


@pytest.mark.skipif(_missing_runner() is not None, reason=str(_missing_runner()))
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
