"""Every workload in both modes on the CPU with tiny shapes, and on tiny real datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.datasets_fixtures import make_flowers102, make_imagefolder, make_kits19, make_voc
from tests.runners.events import check_stream, run_in_process, the_error

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TINY = {
    "resnet50": ["--image-size", "32", "--batch-size", "2"],
    "vgg16": ["--image-size", "32", "--batch-size", "2"],
    "fasterrcnn": ["--image-size", "128", "--batch-size", "1"],
    "unet2d": ["--image-size", "32", "--batch-size", "1"],
    "unet3d": ["--image-size", "64", "--batch-size", "1"],
}
FAST = ["--device", "cpu", "--steps", "1", "--warmup", "0"]


# One tiny run stays in the fast gate; the others are the slow tier.
CASES = [
    pytest.param(w, m, marks=[] if (w, m) == ("resnet50", "train") else [pytest.mark.slow])
    for w in sorted(TINY)
    for m in ("train", "infer")
]


@pytest.mark.parametrize(("workload", "mode"), CASES)
def test_workload_mode_synthetic_device(workload: str, mode: str, tmp_path: Path) -> None:
    rc, events = run_in_process([workload, "--mode", mode, *TINY[workload], *FAST], tmp_path / "e")
    assert rc == 0, events
    result = check_stream(events)
    assert result["data"] == "synthetic-device"
    assert result["unit"] == ("volumes" if workload == "unet3d" else "images")
    assert events[0]["config"]["mode"] == mode
    assert result["peak_mem_allocated_bytes"] is None  # no device memory on the CPU


def _real(workload: str, root: Path) -> tuple[str, str]:
    if workload == "resnet50":
        return str(make_flowers102(root, n=9)), "real:flowers102"
    if workload == "vgg16":
        return str(make_imagefolder(root, per_class=2)), "real:imagenet"
    if workload == "fasterrcnn":
        return str(make_voc(root, n=4)), "real:voc"
    return str(make_kits19(root, cases=2, shape=(20, 40, 40))), "real:kits19"


@pytest.mark.slow
@pytest.mark.parametrize("workload", sorted(TINY))
def test_workload_on_real_dataset(workload: str, tmp_path: Path) -> None:
    data, label = _real(workload, tmp_path / "data")
    argv = [workload, *TINY[workload], *FAST, "--data", data, "--workers", "1"]
    rc, events = run_in_process(argv, tmp_path / "e")
    assert rc == 0, events
    result = check_stream(events)
    assert result["data"] == events[0]["data"] == label
    if workload in ("resnet50", "vgg16"):
        assert events[0]["num_classes"] == (102 if workload == "resnet50" else 3)


@pytest.mark.slow
def test_synthetic_host_repeats_and_fp16(tmp_path: Path) -> None:
    argv = ["unet2d", *TINY["unet2d"], "--device", "cpu", "--steps", "2", "--warmup", "1"]
    argv += ["--data-source", "synthetic-host", "--workers", "1", "--repeat", "2"]
    argv += ["--precision", "fp16"]
    rc, events = run_in_process(argv, tmp_path / "e")
    assert rc == 0
    result = check_stream(events)
    assert result["data"] == "synthetic-host"
    assert result["repeats"] == 2 and len(result["samples_per_s_all"]) == 2
    assert result["samples_per_s_min"] <= result["samples_per_s"] <= result["samples_per_s_max"]
    assert [p["step"] for p in events if p["type"] == "progress"][-1] == 4
    assert result["precision_detail"].startswith("fp16 autocast + GradScaler")


def test_missing_dataset_is_a_config_error(tmp_path: Path) -> None:
    root = make_voc(tmp_path / "voc", n=2)
    (root / "VOCdevkit" / "VOC2007" / "JPEGImages" / "2007_000000.jpg").unlink()
    rc, events = run_in_process(
        ["fasterrcnn", *TINY["fasterrcnn"], *FAST, "--data", str(root)], tmp_path / "e"
    )
    assert rc == 2
    error = the_error(events)
    assert error["kind"] == "config" and "2007_000000.jpg" in error["message"]


def test_dice_loss_matches_its_one_hot_definition() -> None:
    import torch

    from zbench.runners.torch.tasks import _soft_dice_loss

    g = torch.Generator().manual_seed(0)
    probs = torch.rand(2, 3, 4, 5, 6, generator=g).softmax(dim=1)
    target = torch.randint(0, 3, (2, 4, 5, 6), generator=g)
    onehot = torch.nn.functional.one_hot(target, 3).movedim(-1, 1).float()
    inter, union = (probs * onehot).sum((2, 3, 4)), probs.sum((2, 3, 4)) + onehot.sum((2, 3, 4))
    expected = 1.0 - ((2 * inter + 1e-6) / (union + 1e-6)).mean()
    assert _soft_dice_loss(probs, target).item() == pytest.approx(expected.item(), rel=1e-5)


def test_damaged_image_found_by_a_loader_worker_is_one_line_exit_2(tmp_path: Path) -> None:
    root = make_flowers102(tmp_path / "data", n=9)
    for image in sorted(root.rglob("*.jpg")):
        image.write_bytes(b"not a jpeg")
    argv = ["resnet50", *TINY["resnet50"], *FAST, "--data", str(root), "--workers", "1"]
    rc, events = run_in_process(argv, tmp_path / "e")
    assert rc == 2
    error = the_error(events)  # one line, not the worker's traceback
    assert error["kind"] == "config" and error["message"].startswith("cannot decode image")


@pytest.mark.parametrize(
    ("workload", "fmt_name"), [("unet2d", "channels_last"), ("unet3d", "channels_last_3d")]
)
def test_one_channel_batch_is_channels_last_in_its_strides(workload: str, fmt_name: str) -> None:
    # `.contiguous(memory_format=...)` left the U-Nets' one-channel input with NCHW strides (they
    # pass the channels-last check), PyTorch read it as NCHW, and cuDNN added layout copies: U-Net
    # (2D) bf16 training ran at 0.966 of a plain loop on an H200.
    import torch

    from zbench.contract.workloads import WORKLOADS
    from zbench.runners.torch.tasks import Shape, Task

    fmt = getattr(torch, fmt_name)
    shape = Shape(workload, 2, 32, WORKLOADS[workload].num_classes, fmt, torch.device("cpu"))
    x, _ = Task(shape, None, "synthetic-device", "train", 0).batches(True, 0).__next__()
    assert x.stride(1) == 1 and x.is_contiguous(memory_format=fmt)
