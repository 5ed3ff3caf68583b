"""The results screen's throughput bars: unlike setups of one workload are apart and named apart."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from zbench.tui.widgets.charts import bar_values


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
