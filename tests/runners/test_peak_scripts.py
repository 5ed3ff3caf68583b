"""benchmarks/peak.py and peak_table.py call zbench with options its own parser takes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peak, peak_table
from zbench.contract.config import parse_args

REPO = Path(__file__).resolve().parents[2]


def test_peak_measures_torch_compiles_graphs_as_a_named_setting() -> None:
    a = peak.parser().parse_args([])
    assert ("zbench-graphs-compile", "train", 256) in peak.plan(a, gpus=1)
    cfg, _ = parse_args(peak.command(a, "zbench-graphs-compile", "train", 256, 1))
    assert (cfg.preset, cfg.graphs, cfg.batch_size) == ("max", "compile", 256)
    default, _ = parse_args(peak.command(a, "zbench", "train", 256, 1))
    assert default.graphs is None  # the preset's own choice: the whole step in one graph


def test_peak_table_sides_parse_and_compare_at_the_max_batch() -> None:
    a = peak_table.parser().parse_args([])
    review, _ = parse_args(peak_table.command(a, "vgg16", "train", "review"))
    assert review.preset == "review" and review.batch_size is None
    bf16, _ = parse_args(peak_table.command(a, "vgg16", "train", "bf16-eager"))
    assert bf16.precision == "bf16" and not bf16.compile
    best, _ = parse_args(peak_table.command(a, "unet3d", "infer", "max"))
    assert best.preset == "max" and best.batch_size == 8
    ref = peak_table.command(a, "unet3d", "infer", "compiled-ref")
    assert ref[ref.index("--batch-size") + 1] == "8"


def test_peak_table_reference_freezes_inference_only_where_inductor_compiles() -> None:
    # zbench's max inference freezes; a reference that does not would be a different compile.
    assert peak_table.freezes("inductor", "infer")
    assert not peak_table.freezes("inductor", "train")
    assert not peak_table.freezes("eager", "infer")  # Faster R-CNN, and the CPU smoke test
    ref = peak_table.command(peak_table.parser().parse_args([]), "unet3d", "infer", "compiled-ref")
    assert ref[ref.index("--backend") + 1] == "inductor"


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--workloads", "alexnet"], "alexnet"), (["--sides", "max,fastest"], "fastest")],
)
def test_peak_table_bad_input_is_one_line_and_status_2(args: list[str], named: str) -> None:
    out = subprocess.run(
        [sys.executable, "benchmarks/peak_table.py", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and named in out.stderr


def test_profile_sorts_kernels_by_kind_and_shares_add_up() -> None:
    from benchmarks import peak_profile

    names = {
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_nhwc": "convolution (cuDNN)",
        "triton_per_fused__native_batch_norm_legit_functional_relu_3": "triton (inductor fusions)",
        "void at::native::(anonymous)::fused_sgd_kernel<float>": "optimizer",
        "nvjet_tst_128x64_64x4_h_bz_NNT": "matmul",
        "Memcpy DtoD (Device -> Device)": "copy / fill",
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float>": "batch norm (not fused)",
        "some_other_kernel": "other",
    }
    for name, kind in names.items():
        assert peak_profile.kind(name) == kind, name
    # 2 steps; 30 ms of kernels per step in a 40 ms step.
    got = peak_profile.summarize({"conv_a": 40_000.0, "triton_b": 20_000.0}, 2, 40.0, top=1)
    assert got["kernel_ms_per_step"] == 30.0 and got["gpu_busy_pct"] == 75.0
    assert got["by_kind"]["convolution (cuDNN)"] == {"ms": 20.0, "pct": 200 / 3}
    assert [k["kernel"] for k in got["longest"]] == ["conv_a"]


@pytest.mark.slow  # runs benchmarks/peak_profile.py in its own process (~17 s on 2 cores)
@pytest.mark.torch
def test_profile_cpu_smoke_writes_its_summary(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    out = tmp_path / "p.json"
    argv = ["--device", "cpu", "--variant", "eager", "--batch-size", "2", "--image-size", "32"]
    done = subprocess.run(
        [sys.executable, "benchmarks/peak_profile.py", *argv, "--steps", "2", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["img_per_s"] > 0 and doc["by_kind"] and doc["longest"]
    assert "ResNet-50 train bf16 eager" in done.stdout
