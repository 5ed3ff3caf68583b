"""Every TensorFlow workload in both modes on the CPU with tiny shapes, the precision / XLA /
several-replica paths, tiny real datasets in their published layouts, and the error paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.datasets_fixtures import make_flowers102, make_imagefolder, make_kits19, make_voc
from tests.runners.events import the_error
from tests.runners.tf.helpers import FAST, TINY, check_stream, needs_tf, run_tf

pytestmark = [pytest.mark.tf, needs_tf]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["train", "infer"])
@pytest.mark.parametrize("workload", sorted(TINY))
def test_workload_mode(workload: str, mode: str, tmp_path: Path) -> None:
    rc, events = run_tf([workload, "--mode", mode, *TINY[workload], *FAST], tmp_path / "e")
    assert rc == 0, events
    result = check_stream(events)
    assert (result["workload"], result["mode"]) == (workload, mode)
    assert result["data"] == "synthetic-device"
    assert result["unit"] == ("volumes" if workload == "unet3d" else "images")
    assert result["precision"] == "fp32" and "TF32 off" in result["precision_detail"]
    assert result["peak_mem_allocated_bytes"] is None  # no device memory on the CPU
    assert events[0]["strategy"] == "OneDeviceStrategy"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "detail"),
    [
        (["resnet50", "--precision", "fp16"], "loss scaling"),
        (["resnet50", "--precision", "bf16", "--mode", "infer"], "mixed_bfloat16"),
        (["unet2d", "--precision", "tf32", "--xla"], "TF32 on"),
    ],
)
def test_precision_and_xla(argv: list[str], detail: str, tmp_path: Path) -> None:
    rc, events = run_tf([*argv, *TINY[argv[0]], *FAST], tmp_path / "e")
    assert rc == 0, events
    result = check_stream(events)
    assert detail in result["precision_detail"]
    assert result["xla"] == ("--xla" in argv)


@pytest.mark.slow
def test_two_replicas_host_data(tmp_path: Path) -> None:
    """--gpus 2 on the CPU: two logical devices under MirroredStrategy, weak scaling."""
    argv = ["resnet50", *TINY["resnet50"], *FAST, "--gpus", "2", "--data-source", "synthetic-host"]
    rc, events = run_tf(argv, tmp_path / "e")
    assert rc == 0, events
    result = check_stream(events)
    assert events[0]["strategy"] == "MirroredStrategy"
    assert (result["gpus"], result["batch_size"], result["global_batch"]) == (2, 2, 4)
    assert result["data"] == "synthetic-host"
    assert result["samples_per_s_per_gpu"] == pytest.approx(result["samples_per_s"] / 2)


def _real(workload: str, root: Path) -> tuple[str, str]:
    if workload == "resnet50":
        return str(make_flowers102(root, n=9)), "real:flowers102"
    if workload == "vgg16":
        return str(make_imagefolder(root)), "real:imagenet"
    if workload == "fasterrcnn":
        return str(make_voc(root)), "real:voc"
    return str(make_kits19(root)), "real:kits19"


@pytest.mark.slow
@pytest.mark.parametrize("workload", sorted(TINY))
def test_real_dataset(workload: str, tmp_path: Path) -> None:
    path, label = _real(workload, tmp_path / "data")
    argv = [workload, *TINY[workload], *FAST, "--data", path, "--workers", "2"]
    rc, events = run_tf(argv, tmp_path / "e")
    assert rc == 0, events
    result = check_stream(events)
    assert result["data"] == label
    if workload == "resnet50":
        assert events[0]["num_classes"] == 102


def test_missing_dataset_is_a_config_error(tmp_path: Path) -> None:
    rc, events = run_tf(["resnet50", *FAST, "--data", str(tmp_path / "nope")], tmp_path / "e")
    assert rc == 2
    error = the_error(events)
    assert error["kind"] == "config" and "nope" in error["message"]


def test_bad_shape_is_a_config_error(tmp_path: Path) -> None:
    rc, events = run_tf(["unet2d", "--image-size", "40", *FAST], tmp_path / "e")
    assert rc == 2
    assert "multiple of 16" in the_error(events)["message"]


@pytest.mark.slow
def test_no_gpu_is_unavailable(tmp_path: Path) -> None:
    argv = ["resnet50", *TINY["resnet50"], "--framework", "tf", "--device", "cuda"]
    rc, events = run_tf(argv, tmp_path / "e")
    assert rc == 1
    error = the_error(events)
    assert error["kind"] == "unavailable" and "--device cpu" in error["message"]


@pytest.mark.slow
def test_damaged_image_found_by_tf_data_is_one_line_exit_2(tmp_path: Path) -> None:
    root = make_flowers102(tmp_path / "data", n=9)
    for image in sorted(root.rglob("*.jpg")):
        image.write_bytes(b"not a jpeg")
    argv = ["resnet50", *TINY["resnet50"], *FAST, "--data", str(root), "--workers", "1"]
    rc, events = run_tf(argv, tmp_path / "e")
    assert rc == 2
    error = the_error(events)  # no {{function_node ...}} prefix, no traceback
    assert error["kind"] == "config" and error["message"].startswith("cannot decode image")
