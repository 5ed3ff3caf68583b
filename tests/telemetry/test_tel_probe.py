"""``zbench probe``'s stored figures: peaks beside figures, NVLink counters during copies (read
from the job's samples), and the command's own errors."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes.fake_nvml import FakeNvml
from zbench.cli import app
from zbench.jobs import probe_record as probe
from zbench.results.aggregate import compact_sample
from zbench.telemetry.nvml import NvmlBackend
from zbench.telemetry.snapshot import GpuSnapshot, NvLinkSnapshot, Snapshot

runner = CliRunner(env={"COLUMNS": "120"})


def _snap(t: float, tx: float) -> dict[str, Any]:
    """A probe job's sample: what the supervisor stores of one snapshot."""
    snap = Snapshot(t=t, gpus=(GpuSnapshot(index=0, nvlink=NvLinkSnapshot(tx_bytes_s=tx)),))
    return compact_sample(snap, [0], None, "measure")


def test_nvlink_tx_only_from_samples_inside_the_copy() -> None:
    snaps = [
        _snap(9.95, 0.0),
        _snap(10.05, 100e9),
        _snap(10.15, 260e9),
        _snap(10.25, 270e9),
        _snap(10.35, 250e9),
        _snap(10.45, 0.0),
    ]
    # 10.05's interval began before the copy; 10.45 is after it ended.
    assert probe.nvlink_tx_during(snaps, 0, 10.0, 10.4, 0.1) == pytest.approx(260e9)
    assert probe.nvlink_tx_during(snaps, 1, 10.0, 10.4, 0.1) is None


def test_rows_put_each_figure_beside_its_peak(fake: FakeNvml) -> None:
    backend = NvmlBackend(fake.module)
    peaks = probe.read_peaks(backend)
    backend.close()
    results = [
        {"test": "matmul", "dtype": "bf16", "gpu": 0, "tflops": 700.0},
        {"test": "matmul", "dtype": "fp32", "gpu": 0, "tflops": 50.0},
        {"test": "memcpy", "gpu": 0, "bytes_s": 4.0e12},
        {"test": "h2d", "gpu": 0, "bytes_s": 50e9},
        {"test": "p2p", "src": 0, "dst": 1, "bytes_s": 267e9, "t_start": 10.0, "t_end": 10.4},
    ]
    snaps = [_snap(10.15, 265e9), _snap(10.25, 269e9)]
    rows = {r["name"]: r for r in probe.build_rows(results, peaks, snaps, 0.1)}
    assert rows["matmul bf16"]["peak"] == pytest.approx(989.4, rel=1e-3)
    assert rows["matmul bf16"]["ratio"] == pytest.approx(700 / 989.4, rel=1e-3)
    assert rows["matmul fp32"]["peak"] == pytest.approx(66.9, rel=1e-3)
    assert rows["device memory copy"]["peak"] == pytest.approx(4916.7, rel=1e-3)
    assert rows["pinned host -> device"]["peak"] is None  # the fake reports no PCIe link
    p2p = rows["GPU 0 -> GPU 1"]
    assert p2p["value"] == pytest.approx(267) and p2p["peak"] == pytest.approx(18 * 26.562)
    assert p2p["nvlink_tx_gb_s"] == pytest.approx(267)


def test_without_torch_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a)
    )
    res = runner.invoke(app, ["probe"])
    assert res.exit_code == 1
    assert "pip install 'zbench[torch]'" in res.output


def test_bad_gpus_is_exit_2(fake: FakeNvml) -> None:
    res = runner.invoke(app, ["probe", "--gpu-ids", "a"])
    assert res.exit_code == 2 and "not a GPU index" in res.output


def test_no_driver_is_one_line_before_a_job_is_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules, "pynvml", FakeNvml(init_error=FakeNvml.DRIVER_NOT_LOADED).module
    )
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    res = runner.invoke(app, ["probe", "--quick"])
    assert res.exit_code == 2  # GPU work asked of a machine with none: bad input, as `zbench run`
    assert res.output == (  # and why: the driver's own words, as `zbench monitor` says them
        "zbench: probe: no GPU on this machine (no NVIDIA driver (Driver Not Loaded)): "
        "the probe measures GPUs\n"
    )


@pytest.mark.torch
@pytest.mark.slow  # the probe's real runner process imports torch
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_the_runner_without_cuda_fails_with_one_error_event(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    events = tmp_path / "events.jsonl"
    cmd = [sys.executable, "-m", "zbench.runners.microbench", "--events", str(events), "--quick"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    [error] = [json.loads(line) for line in events.read_text().splitlines()]
    assert error["type"] == "error" and error["kind"] == "unavailable"
    assert error["message"] == "PyTorch sees no CUDA GPU"
