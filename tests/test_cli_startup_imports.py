"""Start-up: `zbench jobs`, `zbench results` and `zbench monitor --once` import only what they
need (issue 28, case 15). Guarded by the set of modules each command leaves loaded, not by a
timer (the machine running the gate may be busy); benchmarks/startup.py measures the time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, sys
from zbench.cli import main
out, sys.argv = sys.argv[1], ["zbench", *sys.argv[2:]]
try:
    main()
except SystemExit:
    pass
with open(out, "w") as fh:
    json.dump(sorted(sys.modules), fh)
"""
# Never for any of the three: the UI toolkit, plotting, arrays, frameworks, runners, progress bars.
EVERYWHERE = {
    "textual",
    "matplotlib",
    "numpy",
    "torch",
    "tensorflow",
    "zbench.tui",
    "zbench.runners",
    "rich.progress",
    "rich.live",
    "markdown_it",
}
NOT_FOR = {
    # An empty job list needs the store and the job states, not aggregation nor telemetry.
    "jobs": EVERYWHERE | {"psutil", "zbench.results", "zbench.telemetry", "zbench.jobs.records"},
    "results": EVERYWHERE | {"psutil", "zbench.telemetry", "zbench.jobs.liveness"},
    "monitor --once": EVERYWHERE | {"zbench.results", "zbench.jobs.records"},
}


def _loaded(command: str, tmp_path: Path) -> set[str]:
    out = tmp_path / "modules.json"
    env = {**os.environ, "ZBENCH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("ZBENCH_DB", None)
    argv = [sys.executable, "-c", CHILD, str(out), *command.split()]
    subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, timeout=120, check=False)
    return set(json.loads(out.read_text()))


@pytest.mark.parametrize("command", sorted(NOT_FOR))
def test_the_command_imports_only_what_it_needs(command: str, tmp_path: Path) -> None:
    loaded = _loaded(command, tmp_path)
    assert "zbench.cli" in loaded  # the command ran
    found = sorted(
        m
        for m in loaded
        if m in NOT_FOR[command]
        or m.split(".")[0] in NOT_FOR[command]
        or any(m.startswith(p + ".") for p in NOT_FOR[command])
    )
    assert not found, f"`zbench {command}` imports {found}"
