"""The fidelity and tracking scripts: their reference models match zbench's, their zbench command lines
parse with the runner's own parser, bad input exits 2, and (slow) one CPU cell runs end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import runner_fidelity
from benchmarks.reference import runs
from zbench.contract.config import parse_args

REPO = Path(__file__).resolve().parents[2]


def _shapes(model: object) -> list[tuple[int, ...]]:
    return sorted(tuple(p.shape) for p in model.parameters())  # type: ignore[attr-defined]


@pytest.mark.parametrize("workload", ["unet2d", "unet3d"])
def test_reference_unets_have_zbench_layout(workload: str) -> None:
    pytest.importorskip("torch")
    from benchmarks.reference import models as ref
    from zbench.runners.torch.models import build_model

    ours = ref.build(workload, 64)
    theirs = build_model(workload, ref.NUM_CLASSES[workload], 64)
    assert _shapes(ours) == _shapes(theirs)
    assert sum(p.numel() for p in ours.parameters()) > 1_000_000


def test_every_planned_cell_parses_with_the_runner_parser_and_matches_the_reference() -> None:
    a = runner_fidelity.parser().parse_args([])
    cells = runner_fidelity.cells(a)
    assert len(cells) == 5 * 2 * 3 - len(runner_fidelity.SKIP)
    for cell in cells:
        cfg, _ = parse_args(cell.zbench_argv())
        ref = cell.reference_cmd()
        assert ref[2] == "--ref" and ref[ref.index("--workload") + 1] == cfg.workload
        for flag, value in (
            ("--batch-size", cfg.batch_size),
            ("--image-size", cfg.image_size),
            ("--steps", cfg.steps),
            ("--warmup", cfg.warmup),
            ("--precision", cfg.precision),
            ("--mode", cfg.mode),
            # Both sides time the same back-to-back windows and keep the median (the U-Net 2D tf32
            # inference cell compared zbench's median of 3 with the reference's first window).
            ("--windows", cfg.repeat),
        ):
            assert ref[ref.index(flag) + 1] == str(value), (cell.name, flag)
        assert ("--channels-last" in ref) == bool(cfg.channels_last)
        assert cfg.repeat == 3
        assert cell.estimate_s() > 0


def test_ddp_cells_run_one_and_two_gpus_under_torchrun() -> None:
    cells = runner_fidelity.cells(runner_fidelity.parser().parse_args(["--gpus", "2"]))
    assert [(c.workload, c.mode, c.precision, c.batch, c.gpus) for c in cells] == [
        ("resnet50", "train", "bf16", 256, 1),
        ("resnet50", "train", "bf16", 256, 2),
    ]
    assert parse_args(cells[1].zbench_argv())[0].gpus == 2
    ref = cells[1].reference_cmd()
    assert (
        ref[1:3] == ["-m", "torch.distributed.run"]
        and ref[ref.index("--nproc-per-node") + 1] == "2"
    )
    assert ref[ref.index("--nproc-per-node") + 2].endswith("reference/ddp.py")


def test_fidelity_flags_a_round_whose_windows_spread_beyond_2_percent() -> None:
    # Recorded on the H200 (ResNet-50 train bf16, batch 128): a disturbed zbench round read
    # [4164, 3967, 4276] img/s and gave the cell 0.971; the clean rounds were 4346-4372.
    sides = {
        "zbench": [{"samples_per_s": 4164.0, "samples_per_s_all": [4164.0, 3967.0, 4276.0]}],
        "reference": [{"samples_per_s": 4288.0, "window_rates": [4304.0, 4278.0, 4288.0]}],
    }
    assert runner_fidelity.window_spread(sides["reference"][0]) == pytest.approx(26 / 4288)
    assert runner_fidelity.noisy_rounds(sides) == ["zbench round 1 (spread 7.4%)"]
    sides["zbench"][0]["samples_per_s_all"] = [4372.0, 4346.0, 4346.0]
    assert runner_fidelity.noisy_rounds(sides) == []
    assert runner_fidelity.window_spread({"samples_per_s": 1.0}) is None


@pytest.mark.parametrize("workload", ["unet2d", "unet3d"])
def test_reference_one_channel_input_is_channels_last_in_its_strides(workload: str) -> None:
    # As an expert converts it (`.to(memory_format=...)`); `.contiguous(...)` kept NCHW strides,
    # the same cost zbench had, so the fidelity benchmark read 0.997+ where a plain loop saw 0.966.
    torch = pytest.importorskip("torch")
    from benchmarks.reference import models

    fmt = models.memory_format(workload, True)
    x, _ = models.batch(workload, 32, 2, torch.device("cpu"), fmt)
    assert x.stride(1) == 1


@pytest.mark.parametrize(
    ("script", "args"),
    [
        ("runner_fidelity.py", ["--workloads", "resnet5"]),
        ("runner_fidelity.py", ["--rounds", "0"]),
        ("peak.py", ["--train-batches", "x"]),
        ("peak.py", ["--modes", "eval"]),
        ("peak.py", ["--warm-runs", "0"]),
        ("start_split.py", ["--out", "x.json", "--skip-cold"]),
        ("start_split.py", ["--out", "x.json", "--variants", "warm,hot"]),
        ("start_split.py", ["--out", "x.json", "--rounds", "0"]),
        ("peak_candidates.py", ["--only", "cdt,nope"]),
        ("embedder_shapes.py", ["--out", "x.json", "--variants", "as-is,padx"]),
        ("embedder_shapes.py", ["--out", "x.json", "--crops", "800,600"]),
        ("embedder_shapes.py", ["--out", "x.json", "--chunks", "0"]),
        ("tracking_demo_calls.py", ["--out", "x.json", "--videos", "on,maybe"]),
        ("tracking_demo_calls.py", ["--out", "x.json", "--frames", "0"]),
        ("tracking_demo_calls.py", ["--out", "x.json", "--pad", "-1"]),
    ],
)
def test_bad_input_is_one_line_and_status_2(script: str, args: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and script in out.stderr


@pytest.mark.slow
@pytest.mark.torch
def test_cpu_smoke_cell_runs_both_sides_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    out = tmp_path / "fidelity.json"
    argv = [
        "--device",
        "cpu",
        "--workloads",
        "resnet50",
        "--modes",
        "train",
        "--precisions",
        "fp32",
    ]
    argv += ["--rounds", "1", "--out", str(out), "--logs", str(tmp_path / "logs")]
    done = subprocess.run(
        [sys.executable, "benchmarks/runner_fidelity.py", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=540,
    )
    doc = json.loads(out.read_text())
    (cell,) = doc["cells"]
    z, ref = cell["rounds"]["zbench"][0], cell["rounds"]["reference"][0]
    assert z["samples"] == cell["batch"] * cell["steps"] == 2 * 2
    assert z["samples_per_s"] > 0 and ref["samples_per_s"] > 0
    assert cell["ratio"] == pytest.approx(z["samples_per_s"] / ref["samples_per_s"])
    assert done.returncode == (0 if cell["ratio"] >= 0.99 else 1)
    assert "ratio" in done.stdout and "resnet50" in done.stdout
    log = (tmp_path / "logs" / "resnet50-train-fp32-x1.log").read_text()
    assert "-m zbench.runners resnet50" in log and "--ref --workload resnet50" in log


def test_benchmark_children_get_a_private_zbench_home_unless_one_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The peak runs on a bare H200 failed with "No module named 'platformdirs'": without
    # ZBENCH_HOME the runner asked platformdirs for the user's data folder.

    monkeypatch.delenv("ZBENCH_HOME", raising=False)
    home = Path(runs.child_env()["ZBENCH_HOME"])
    assert home.is_dir() and "zbench-bench-home-" in home.name
    assert runs.child_env()["ZBENCH_HOME"] == str(home)  # one per invocation, not per child
    monkeypatch.setenv("ZBENCH_HOME", "/srv/zbench-home")
    assert runs.child_env()["ZBENCH_HOME"] == "/srv/zbench-home"


@pytest.mark.slow  # runs benchmarks/embedder_shapes.py in its own process (~12 s on 2 cores)
@pytest.mark.torch
def test_embedder_shapes_pads_without_changing_a_feature(tmp_path: Path) -> None:
    """benchmarks/embedder_shapes.py on the CPU: both variants' passes are timed, and the padded
    embedder's features equal the plain one's (zeros appended to the crops, cut from the output)."""
    pytest.importorskip("torchvision")
    out = tmp_path / "e.json"
    argv = ["--device", "cpu", "--chunks", "2", "--crops", "9,13", "--variants", "as-is,pad8"]
    run = subprocess.run(
        [sys.executable, "benchmarks/embedder_shapes.py", *argv, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(out.read_text())["results"]
    assert [r["variant"] for r in got] == ["as-is", "pad8"]
    assert all(r[p]["total_ms"] > 0 for r in got for p in ("first", "second"))
    assert "max_feature_diff" not in got[0] and got[1]["max_feature_diff"] < 1e-5


@pytest.mark.slow
@pytest.mark.torch
def test_tracking_demo_calls_runs_the_demo_once_per_listed_video(tmp_path: Path) -> None:
    """benchmarks/tracking_demo_calls.py on the CPU: two calls in one process, the video's figures
    only where it was on, and the module measured named (another checkout's, with PYTHONPATH)."""
    pytest.importorskip("cv2")
    out = tmp_path / "c.json"
    argv = ["--device", "cpu", "--smoke", "--videos", "on,off", "--pad", "16", "--out", str(out)]
    run = subprocess.run(
        [sys.executable, "benchmarks/tracking_demo_calls.py", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "ZBENCH_HOME": str(tmp_path / "home")},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(out.read_text())
    assert [(c["call"], c["video"]) for c in got["calls"]] == [(1, "on"), (2, "off")]
    on, off = got["calls"]
    assert on["fps"]["end_to_end"] > 0 and on["output_fps"] > 0 and on["video_tail_s"] >= 0
    assert off["output_fps"] is None and off["video_wait_s"] is None
    assert got["code"]["module"].endswith("zbench/demos/tracking/demo.py")
    assert got["code"]["embedder_pad"] == 16
