from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes.fake_nvml import FakeNvml
from zbench.cli import app
from zbench.telemetry import doctor
from zbench.telemetry.snapshot import NA
from zbench.telemetry.specs import compute

runner = CliRunner(env={"COLUMNS": "120"})


@pytest.fixture(autouse=True)
def _no_framework_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    status: dict[str, Any] = {
        "torch": {"installed": True, "version": "2.11.0", "gpus": 2},
        "tensorflow": {"installed": False, "version": None, "gpus": None},
    }
    monkeypatch.setattr(doctor, "framework_status", lambda progress=None: status)


def test_h200_peaks_match_the_datasheet() -> None:
    s = compute(
        (9, 0), cores=16896, max_sm_clock_mhz=1980, max_mem_clock_mhz=3201, bus_width_bits=6144
    )
    assert s.architecture == "Hopper" and s.sm_count == 132
    assert s.fp32_tflops == pytest.approx(67, rel=0.01)
    assert s.bf16_tflops == pytest.approx(989, rel=0.01)
    assert s.mem_bw_bytes_s == pytest.approx(4.8e12, rel=0.03)


def test_turing_has_no_bf16_and_unknown_arch_is_na() -> None:
    rtx8000 = compute((7, 5), 4608, 1770, 7001, 384)
    assert rtx8000.fp16_tflops == pytest.approx(130.5, rel=0.01) and rtx8000.bf16_tflops is NA
    assert rtx8000.mem_bw_bytes_s == pytest.approx(672e9, rel=0.01)
    odd = compute((99, 0), 1000, 1000, None, None)
    assert odd.fp32_tflops is NA and odd.mem_bw_bytes_s is NA and "unknown" in odd.architecture


def test_doctor_json_with_fake_gpus(fake: FakeNvml) -> None:
    fake.gpus[1].persistence = 0
    fake.gpus[1].power_limit_mw = 500_000
    fake.gpus[0].throttle = 0x40
    fake.gpus[0].ecc = 3
    res = runner.invoke(app, ["doctor", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["nvml"] == {"driver": "550.54.15", "cuda_driver": "12.4", "nvml": "12.550.54.15"}
    assert rep["gpus"][0]["architecture"] == "Hopper" and rep["gpus"][0]["nvlink_links"] == 18
    assert rep["topology"]["matrix"] == [["X", "NV18"], ["NV18", "X"]]
    assert rep["errors"] == []  # warnings about the GPUs: exit 0, no errors
    text = " ".join(rep["warnings"])
    for needle in (
        "GPU 1: persistence mode is off",
        "power cap 500 W",
        "3 uncorrected ECC",
        "hw_thermal",
    ):
        assert needle in text
    assert rep["frameworks"]["torch"]["gpus"] == 2


def test_topology_pcie_path_without_nvlink(fake: FakeNvml) -> None:
    for g in fake.gpus:
        g.nvlinks = 0
    rep = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert rep["topology"]["matrix"] == [["X", "NODE"], ["NODE", "X"]]
    assert rep["gpus"][0]["nvlink_links"] is None


def test_doctor_table(fake: FakeNvml) -> None:
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 0
    for needle in (
        "Hopper",
        "989",
        "NV18",
        "torch 2.11.0, sees 2 GPUs",
        "tensorflow not installed",
    ):
        assert needle in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= 120


def test_doctor_without_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules, "pynvml", FakeNvml(init_error=FakeNvml.LIBRARY_NOT_FOUND).module
    )
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 0
    assert "host information only" in res.stdout and "RAM" in res.stdout
    rep = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert rep["gpus"] == [] and "no NVIDIA driver" in rep["notice"]


def test_framework_status_checks_in_a_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real function, on a stand-in "framework" that is always importable
    monkeypatch.setattr(
        doctor, "FRAMEWORK_PROBES", {"json": "print(3)", "nosuchpkg_zb": "print(1)"}
    )
    out = doctor.framework_status()
    assert out["json"]["installed"] and out["json"]["gpus"] == 3
    assert out["nosuchpkg_zb"] == {"installed": False, "version": None, "gpus": None}


def test_topology_through_nvswitch_counts_links_from_p2p_status(fake: FakeNvml) -> None:
    # HGX boards (as on the H200 machine): every link ends at an NVSwitch, so no remote bus id is a
    # peer GPU; nvidia-smi still says NV18 because NVML reports NVLink P2P between the pair.
    for g in fake.gpus:
        g.remote_bus_id = "00000000:c5:00.0"
        g.nvswitch = True
    rep = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert rep["topology"]["matrix"] == [["X", "NV18"], ["NV18", "X"]]
    for g in fake.gpus:
        g.nvswitch = False
    rep = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert rep["topology"]["matrix"] == [["X", "NODE"], ["NODE", "X"]]


def test_gpu_lost_while_opening_is_reported_not_a_crash(fake: FakeNvml) -> None:
    fake.fail("nvmlDeviceGetHandleByIndex", FakeNvml.GPU_IS_LOST, gpu=1)
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 0, res.output
    assert "lost: not answering NVML" in res.stdout and "GPU 1: not answering NVML" in res.stdout
    rep = json.loads(runner.invoke(app, ["doctor", "--json"]).stdout)
    assert rep["gpus"][1] == {"index": 1, "name": "", "lost": True}
    assert rep["topology"]["labels"] == ["GPU0"]
