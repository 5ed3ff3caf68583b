"""The results screen's charts: unlike setups of one workload are apart and named apart."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from zbench.tui.widgets.charts import bar_values, scaling_series


def _row(created: float, samples: float, **fields: Any) -> SimpleNamespace:
    base: dict[str, Any] = {
        "workload": "resnet50",
        "framework": "torch",
        "mode": "train",
        "precision": "fp32",
        "batch_size": 128,
        "gpus": 1,
        "gpu_name": "NVIDIA H200",
        "config": {},
        "env": {},
        "result": {},
    }
    return SimpleNamespace(**{**base, **fields}, created=created, samples_per_s=samples)


def test_fp32_and_bf16_of_one_workload_are_two_bars() -> None:
    # Both bars were keyed "resnet50/torch/train": the newer run's figure stood for both.
    rows = [_row(1, 884.2), _row(2, 6822.0, precision="bf16", batch_size=256)]
    assert bar_values(rows) == {
        "resnet50/torch/train fp32": 884.2,
        "resnet50/torch/train bf16": 6822.0,
    }


def test_the_gpu_model_is_named_when_runs_span_several() -> None:
    rows = [_row(1, 884.2), _row(2, 700.0, gpu_name="NVIDIA H100 80GB HBM3"), _row(3, 9.0, gpus=2)]
    assert bar_values(rows) == {
        "resnet50/torch/train fp32 NVIDIA H200": 884.2,
        "resnet50/torch/train fp32 NVIDIA H100 80GB HBM3": 700.0,
    }


def test_every_setup_of_a_workload_is_a_bar_and_repeats_are_one() -> None:
    # Only the newest setup of a workload, framework, mode and precision had a bar: a batch-256
    # run hid the batch-128 runs shown in the table beside it. Repeats of one setup stay one bar.
    from zbench.results.identity import setup_id

    rows = [_row(1, 880.0), _row(2, 884.2), _row(3, 950.0, batch_size=256)]
    bars = bar_values(rows)
    assert bars == {
        f"resnet50/torch/train fp32 {setup_id(rows[1])}": 884.2,
        f"resnet50/torch/train fp32 {setup_id(rows[2])}": 950.0,
    }
    assert setup_id(rows[1]) != setup_id(rows[2])


def test_scaling_lines_of_unlike_setups_keep_apart() -> None:
    # Two groups (FP32 and BF16, batch 128 each) were both named "resnet50/torch/train b128": one
    # line overwrote the other. Two groups differing only in compile add their setup ids.
    rows = [
        _row(1, 100.0),
        _row(2, 190.0, gpus=2),
        _row(3, 300.0, precision="bf16"),
        _row(4, 580.0, precision="bf16", gpus=2),
        _row(5, 400.0, precision="bf16", config={"compile": True}),
        _row(6, 790.0, precision="bf16", gpus=2, config={"compile": True}),
    ]
    series = scaling_series(rows)
    assert series["resnet50/torch/train fp32 b128"] == {1: 100.0, 2: 190.0}
    bf16 = {k: v for k, v in series.items() if k.startswith("resnet50/torch/train bf16 b128 ")}
    assert sorted(bf16.values(), key=lambda v: v[1]) == [{1: 300.0, 2: 580.0}, {1: 400.0, 2: 790.0}]
    assert len(series) == 3
