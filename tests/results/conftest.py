"""Fixtures for results tests: a private data dir and a store filled with known runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.rows import job_row, run_config, run_row
from zbench.store import Store

GIB = 1024**3
T0 = 1_780_000_000.0  # fixed creation times keep the golden files stable

# workload, framework, mode, gpus, gpu, precision, batch, samples/s, gpu util, mem util, gpu mem
RUNS = [
    ("resnet50", "torch", "train", 1, "NVIDIA H200", "fp32", 128, 2101.4, 97.0, 61.5, 40.2 * GIB),
    ("resnet50", "torch", "infer", 1, "NVIDIA H200", "fp32", 128, 6512.9, 99.0, 70.0, 12.0 * GIB),
    ("resnet50", "tf", "train", 1, "NVIDIA H200", "fp32", 128, 1890.0, 92.0, None, 38.0 * GIB),
    ("resnet50", "torch", "train", 2, "NVIDIA H200", "fp32", 128, 4050.2, 96.0, 60.0, 40.5 * GIB),
    ("resnet50", "tf", "train", 2, "NVIDIA H200", "fp32", 128, 2010.0, 55.0, 30.0, 38.5 * GIB),
    ("resnet50", "torch", "train", 1, "NVIDIA H200", "fp16", 128, 3998.0, 95.0, 50.0, 25.0 * GIB),
    ("resnet50", "torch", "train", 1, "NVIDIA H200", "bf16", 128, 3901.0, 95.0, 50.0, 25.0 * GIB),
    ("vgg16", "torch", "train", 1, "NVIDIA H200", "fp32", 128, 1020.0, 99.0, 80.0, 60.0 * GIB),
    ("fasterrcnn", "torch", "train", 1, "NVIDIA H200", "fp32", 16, 48.3, 88.0, 35.0, 30.0 * GIB),
    ("unet2d", "tf", "infer", 1, "Quadro RTX 8000 | rev\nB", "fp32", 32, 310.0, None, None, None),
]


def fill(store: Store) -> list[int]:
    run_ids = []
    for n, (wl, fw, mode, gpus, gpu, prec, batch, sps, util, mutil, mem) in enumerate(RUNS):
        config = run_config(
            workload=wl, framework=fw, mode=mode, precision=prec, batch_size=batch, gpus=gpus
        )
        [job_id] = store.add_jobs(
            [
                job_row(
                    workload=wl,
                    framework=fw,
                    mode=mode,
                    precision=prec,
                    config=config,
                    state="done",
                    created=T0 + n,
                )
            ]
        )
        run_id = store.add_run(
            run_row(
                **config,  # the run's columns are its config's
                job_id=job_id,
                created=T0 + n,
                gpu_name=gpu,
                samples_per_s=sps,
                config=config,
                env={"torch": "2.11"},
                result={"samples_per_s": sps},
            )
        )
        measure = {
            "gpu_util_mean": util,
            "mem_util_mean": mutil,
            "gpu_mem_mean_bytes": mem,
            "gpu_mem_peak_bytes": None if mem is None else mem * 1.1,
            "cpu_util_mean": 100.0 + n,
            "rss_mean_bytes": 3.5 * GIB,
        }
        warmup = {**measure, "gpu_util_mean": None if util is None else util / 2}
        store.set_phase_aggregates(job_id, run_id, {"warmup": warmup, "measure": measure})
        run_ids.append(run_id)
    return run_ids


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    yield tmp_path / "home"


@pytest.fixture
def filled(home: Path) -> Path:
    """The database path, holding ``RUNS``."""
    db = home / "zbench.db"
    fill(Store(db))
    return db


@pytest.fixture
def h200_db(home: Path) -> Path:
    """A fresh store loaded from the checked-in dump of the recorded H200 runs (report tests)."""
    import importlib.util

    builder_path = Path(__file__).parents[1] / "fixtures" / "make_report_db.py"
    spec = importlib.util.spec_from_file_location("make_report_db", builder_path)
    assert spec and spec.loader
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    db = home / "h200.db"
    builder.load(builder.DUMP, db)
    return db
