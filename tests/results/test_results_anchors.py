"""Published figures match by GPU model, GPU count, workload, framework, mode and precision."""

from __future__ import annotations

from zbench.results.anchors import find_anchor, load_anchors


def test_every_anchor_has_source_and_settings() -> None:
    anchors = load_anchors()
    assert len(anchors) > 20
    assert all(a.source and a.settings and a.samples_per_s > 0 for a in anchors)


def test_h200_resnet50_training() -> None:
    fp32 = find_anchor("NVIDIA H200", 1, "resnet50", "torch", "train", "fp32")
    assert fp32 is not None and fp32.samples_per_s == 2259 and fp32.precision == "tf32"
    assert "TF32" in fp32.settings
    fp16 = find_anchor("NVIDIA H200 NVL", 1, "resnet50", "torch", "train", "fp16")
    assert fp16 is not None and fp16.samples_per_s == 3079
    eight = find_anchor("NVIDIA H200", 8, "resnet50", "torch", "train", "fp32")
    assert eight is not None and eight.samples_per_s == 17947


def test_no_match_for_other_setups() -> None:
    assert find_anchor("NVIDIA H200", 2, "resnet50", "torch", "train", "fp32") is None
    assert find_anchor("NVIDIA H200", 1, "resnet50", "tf", "train", "fp32") is None
    assert find_anchor("NVIDIA H200", 1, "resnet50", "torch", "infer", "fp32") is None
    assert find_anchor("NVIDIA H200", 1, "resnet50", "torch", "train", "bf16") is None
    assert find_anchor("NVIDIA GeForce RTX 4090", 1, "resnet50", "torch", "train", "fp32") is None
    assert find_anchor(None, 1, "resnet50", "torch", "train", "fp32") is None
    # Turing has no TF32: its FP32 figure is not offered for a TF32 run
    assert find_anchor("Quadro RTX 8000", 1, "resnet50", "torch", "train", "tf32") is None


def test_exact_precision_wins_and_memory_size_matters() -> None:
    a100 = find_anchor("NVIDIA A100-SXM4-80GB", 1, "resnet50", "torch", "train", "tf32")
    assert a100 is not None and a100.samples_per_s == 1066
    tf = find_anchor("NVIDIA A100-SXM4-40GB", 1, "resnet50", "tf", "train", None)
    assert tf is not None and tf.samples_per_s == 909
    assert find_anchor("NVIDIA A100-SXM4-40GB", 1, "resnet50", "torch", "train", "fp32") is None
    rtx = find_anchor("Quadro RTX 8000", 1, "resnet50", "tf", "infer", "fp16")
    assert rtx is not None and rtx.samples_per_s == 3596
