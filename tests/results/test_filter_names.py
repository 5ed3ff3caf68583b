"""Filters take a name as the tables print it, in any case, and still name a typo."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from zbench.cli import app

CLI = CliRunner(env={"COLUMNS": "220", "TERM": "dumb", "NO_COLOR": "1"})


def test_filters_take_the_names_the_tables_print_in_any_case(filled: Path) -> None:
    """``--workload ResNet-50``, ``--framework PyTorch`` and ``--precision FP32``, as the results
    table prints them, were refused as typos ("must be one of ..."); ``--device Cpu`` worked."""

    def runs(*argv: str) -> list[Any]:
        result = CLI.invoke(app, ["results", *argv, "--json"])
        assert result.exit_code == 0, result.output
        return [r["run_id"] for r in json.loads(result.output)["results"]]

    plain = runs("--workload", "resnet50", "--framework", "torch", "--precision", "fp32")
    assert (
        plain
        and runs("--workload", "ResNet-50", "--framework", "PyTorch", "--precision", "FP32")
        == plain
    )
    assert runs("--workload", "RESNET50", "--framework", "pytorch") == runs(
        "--workload", "resnet50", "--framework", "torch"
    )
    jobs = CLI.invoke(app, ["jobs", "--all", "--framework", "PyTorch", "--workload", "ResNet-50"])
    assert jobs.exit_code == 0, jobs.output
    typo = CLI.invoke(app, ["results", "--workload", "ResNet-5"])
    assert typo.exit_code == 2 and "got 'ResNet-5'" in typo.output
