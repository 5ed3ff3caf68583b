"""benchmarks/start_split.py: its medians, its variants' environments and data folders, and the
timers it records of each warm start."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_start_split_medians_take_each_runs_rounds_and_count_failures() -> None:
    from benchmarks import start_split

    out: dict[str, object] = {
        "cold": {"to_measure_s": 260.0, "samples_per_s": 7100.0},
        "warm#1": {"to_measure_s": 12.0, "samples_per_s": 7200.0},
        "warm#2": {"to_measure_s": 14.0, "samples_per_s": 7150.0},
        "warm#3": {"to_measure_s": 11.0, "samples_per_s": 7190.0},
        "variant:prewarm#1": {"to_measure_s": 9.5, "samples_per_s": 7180.0},
        "variant:prewarm#2": {"to_measure_s": None, "samples_per_s": None, "error": "x"},
        "variant:prewarm#3": {"to_measure_s": 10.5, "samples_per_s": 7210.0},
    }
    rows = start_split.medians(out, ("warm", "variant:prewarm"))
    assert rows["warm"] == {
        "to_measure_s": 12.0,
        "start_range_s": [11.0, 14.0],
        "samples_per_s": 7190.0,
        "failed": 0,
    }
    assert rows["variant:prewarm"]["to_measure_s"] == 10.0
    assert rows["variant:prewarm"]["failed"] == 1


def test_start_split_prewarm_variant_sets_the_runners_switch(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from benchmarks import start_split
    from zbench.runners.torch import prewarm

    env = start_split.variant_env("prewarm", {"PATH": "/bin"}, tmp_path)
    assert env == {"PATH": "/bin", prewarm.ENV: "1"}


def test_start_split_resave_copies_the_folder_without_its_compiled_graphs(tmp_path: Path) -> None:
    """The `resaved` variant's folder keeps the kernels, their tuned block sizes and Triton's
    binaries, and loses only the FX-graph and AOTAutograd entries; its runs use it."""
    from benchmarks import start_split

    home = tmp_path / "train"
    inductor = home / "cache" / "torchinductor"
    for rel in (
        "fxgraph/ab/entry",
        "aotautograd/cd/entry",
        "ab/kernel.py",
        "ab/kernel.best_config",
    ):
        (inductor / rel).parent.mkdir(parents=True, exist_ok=True)
        (inductor / rel).write_text("x")
    (home / "cache" / "triton" / "h").mkdir(parents=True)
    (home / "cache" / "triton" / "h" / "k.cubin").write_text("x")
    (home / "runs.log").write_text("log")

    copy = start_split.resave(home)
    kept = sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file())
    assert kept == [
        "cache/torchinductor/ab/kernel.best_config",
        "cache/torchinductor/ab/kernel.py",
        "cache/triton/h/k.cubin",
    ]
    assert (inductor / "fxgraph" / "ab" / "entry").exists()  # the original is untouched
    env = start_split.variant_env("resaved", {"ZBENCH_HOME": str(home)}, home)
    assert env["ZBENCH_HOME"] == str(copy)


def test_start_split_metrics_site_writes_inductors_timers_at_exit(tmp_path: Path) -> None:
    """The sitecustomize imports nothing at start and, at exit, writes the timers of a process
    that loaded torch._dynamo.utils; the sums pick METRICS."""
    import subprocess
    import sys

    from benchmarks import start_split

    site = start_split.metrics_site(tmp_path)
    dump = tmp_path / "m.json"
    code = (
        "import sys, types\n"
        "assert 'torch' not in sys.modules\n"
        "m = types.ModuleType('torch._dynamo.utils')\n"
        "m.compilation_time_metrics = {'inductor_import': [0.5, 0.25], 'other': [9.0]}\n"
        "sys.modules['torch._dynamo.utils'] = m\n"
    )
    env = {"PYTHONPATH": str(site), "ZBENCH_START_METRICS": str(dump), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert start_split.metric_sums(dump) == {"inductor_import": [0.75, 2]}
    assert start_split.metric_sums(tmp_path / "missing.json") == {}
