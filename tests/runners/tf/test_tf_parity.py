"""The TensorFlow models against the PyTorch ones: parameter counts within 1 %, and the same
config giving comparable result records."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.runners.tf.helpers import TINY, needs_tf, run_tf

pytestmark = [pytest.mark.tf, pytest.mark.torch, needs_tf]
torch = pytest.importorskip("torch")


def _torch_params(workload: str) -> int:
    from zbench.runners.torch.models import build_model

    classes = 3 if workload.startswith("unet") else 1000
    size = {"unet2d": 256, "unet3d": 128}.get(workload, 224)
    return sum(p.numel() for p in build_model(workload, classes, size).parameters())


def _tf_params(workload: str) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from zbench.runners.tf import models

    if workload.startswith("unet"):
        size = 256 if workload == "unet2d" else 128
        return int(getattr(models, workload)(3, size).count_params())
    return int(getattr(models, workload)(1000, 224).count_params())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workload", "exact"),
    [("resnet50", False), ("vgg16", True), ("unet2d", True), ("unet3d", True)],
)
def test_parameter_counts_match(workload: str, exact: bool) -> None:
    tp, kp = _torch_params(workload), _tf_params(workload)
    if workload == "resnet50":
        assert tp == 25_557_032  # torchvision's published count
    assert abs(kp - tp) / tp < 0.01, (workload, tp, kp)
    if exact:
        assert kp == tp


@pytest.mark.slow  # a PyTorch and a TensorFlow run end to end (~28 s on 2 cores)
def test_same_config_same_result_fields(tmp_path: Path) -> None:
    from tests.runners.events import RESULT_FIELDS, run_in_process
    from zbench.contract.protocol import read_events

    argv = ["resnet50", *TINY["resnet50"], "--device", "cpu", "--steps", "2", "--warmup", "1"]
    rc, torch_events = run_in_process([*argv, "--framework", "torch"], tmp_path / "torch")
    assert rc == 0, torch_events
    rc, tf_events = run_tf([*argv, "--framework", "tf"], tmp_path / "tf")
    assert rc == 0, tf_events
    torch_result = next(e for e in read_events(tmp_path / "torch") if e["type"] == "result")
    tf_result = next(e for e in tf_events if e["type"] == "result")
    assert set(RESULT_FIELDS) <= tf_result.keys()
    assert torch_result.keys() <= tf_result.keys()
    assert torch_result.keys() == tf_result.keys()  # both built by contract.measure.build_result
    assert torch_result["settings"].keys() == tf_result["settings"].keys()
    assert torch_events[0].keys() - {"strategy"} == tf_events[0].keys() - {"strategy"}
    for key in ("batch_size", "global_batch", "gpus", "unit", "precision", "data", "steps"):
        assert torch_result[key] == tf_result[key], key
    assert {e["type"] for e in torch_events} == {e["type"] for e in tf_events}
