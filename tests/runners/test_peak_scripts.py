"""benchmarks/peak.py and peak_table.py call zbench with options its own parser takes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_peak_table_bad_workload_is_one_line_and_status_2() -> None:
    out = subprocess.run(
        [sys.executable, "benchmarks/peak_table.py", "--workloads", "alexnet"],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "alexnet" in out.stderr
