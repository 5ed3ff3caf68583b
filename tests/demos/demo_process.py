"""A demo run as its job runs it: ``python -m zbench.demos DEMO ... --events FILE`` in a child."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_demo_process(
    demo: str, *args: str, events: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``demo`` with ``args`` run from the repository root, writing ``events``; its output kept."""
    cmd = [sys.executable, "-m", "zbench.demos", demo, *args, "--events", str(events)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
