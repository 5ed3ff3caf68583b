"""The probe runner's plan (runners/microbench.py), built on the CPU: which figures run, in which
order, and what each result event carries; the measurements themselves need a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from zbench.contract.protocol import EventWriter
from zbench.runners import microbench


def test_the_plan_runs_each_gpus_figures_then_every_ordered_pair(tmp_path: Path) -> None:
    ev = EventWriter(str(tmp_path / "events.jsonl"))
    steps = microbench.plan([0, 1], microbench.Sizes.of(True, 1.0), ev)
    labels = [label for label, _ in steps]
    per_gpu = [
        *(f"matmul {dt} GPU {{g}}" for dt in ("fp32", "tf32", "fp16", "bf16")),
        "memory copy GPU {g}",
        "pinned h2d GPU {g}",
        "pinned d2h GPU {g}",
    ]
    want = [f.format(g=g) for g in (0, 1) for f in per_gpu]
    assert labels == [*want, "GPU 0 -> GPU 1", "GPU 1 -> GPU 0"]
    one = microbench.plan([3], microbench.Sizes.of(False, 3.0), ev)
    assert len(one) == len(per_gpu) and not any("->" in label for label, _ in one)
    ev.close()


def test_each_step_reports_its_test_and_sizes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(microbench, "matmul_tflops", lambda g, dt, n, r: 100.0 + g)
    monkeypatch.setattr(microbench, "memcpy_bytes_s", lambda g, b, r: 2e12)
    monkeypatch.setattr(microbench, "host_copy_bytes_s", lambda g, b, r, to_device: 5e10)
    z = microbench.Sizes.of(True, 1.0)
    ev = EventWriter(str(tmp_path / "events.jsonl"))
    results = [step() for _, step in microbench.plan([1], z, ev)]
    ev.close()
    assert results[0] == {"test": "matmul", "dtype": "fp32", "gpu": 1, "n": 4096, "tflops": 101.0}
    assert results[4] == {"test": "memcpy", "gpu": 1, "bytes": z.nbytes, "bytes_s": 2e12}
    assert [r["test"] for r in results[5:]] == ["h2d", "d2h"]
    assert z.nbytes == 256 * 2**20 and microbench.Sizes.of(False, 3.0).nbytes == 2**30
