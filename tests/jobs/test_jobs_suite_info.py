"""What a suite runs, and how long it took here: from finished jobs of the suite, never guessed."""

from __future__ import annotations

from pathlib import Path

from zbench.jobs.suite_info import past_seconds, summary, what_it_runs
from zbench.jobs.suites import load_suite
from zbench.store import Store


def _job(suite: str, workload: str, framework: str, mode: str, took: float) -> dict[str, object]:
    return {
        "suite": suite,
        "workload": workload,
        "framework": framework,
        "mode": mode,
        "config": "{}",
        "state": "done",
        "created": 0.0,
        "started": 100.0,
        "ended": 100.0 + took,
    }


def test_what_the_quick_suite_runs() -> None:
    quick = load_suite("quick", gpu_count=0, frameworks={"torch", "tf"})
    text = what_it_runs(quick)
    assert text.startswith(f"{len(quick.specs)} jobs: resnet50 (torch, tf; train, infer)")
    assert "unet2d (torch, tf; train)" in text
    no_tf = what_it_runs(load_suite("quick", gpu_count=0, frameworks={"torch"}))
    assert "skipped here" in no_tf and "tf" not in no_tf.split(";")[0].split(":")[1]


def test_time_comes_from_past_runs_of_every_job_or_not_at_all(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    quick = load_suite("quick", gpu_count=0, frameworks={"torch", "tf"})
    assert past_seconds(quick, db) is None
    keys = sorted({(s.config.workload, s.config.framework, s.config.mode) for s in quick.specs})
    store = Store(db)
    store.add_jobs([_job("quick", *k, 20.0) for k in keys[:-1]])
    assert past_seconds(quick, db) is None  # one job never finished here
    store.add_jobs([_job("quick", *keys[-1], 20.0), _job("quick", *keys[-1], 40.0)])
    store.add_jobs([_job("quick", *keys[-1], 60.0)])  # median of 20, 40, 60
    expected = 20.0 * (len(quick.specs) - 1) + 40.0
    assert past_seconds(quick, db) == expected
    assert "here last time" in summary("quick", db) and "not timed" not in summary("quick", db)
    assert "no suite 'nope'" in summary("nope", db)
