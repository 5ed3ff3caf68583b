"""``zbench monitor`` and ``zbench doctor`` read in 80 columns, piped or not, and whole with --wide."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.fakes.fake_nvml import FakeNvml
from zbench.cli import app
from zbench.telemetry import doctor


def _check_80(out: str) -> None:
    assert out.strip()
    assert max(len(line) for line in out.splitlines()) <= 80, out
    assert "…" not in out.replace("...", "") or out.count("…") <= 2  # never every cell cut


def test_monitor_once_at_80_columns(fake: FakeNvml) -> None:
    res = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["monitor", "--once", "--interval", "0.1"])
    assert res.exit_code == 0, res.output
    _check_80(res.stdout)
    assert "0 H200" in res.stdout and "util" in res.stdout


def test_doctor_at_80_columns_and_wide(fake: FakeNvml, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each framework's line as a fresh import would give it (two imports took ~7 s a call), one of
    # them with an error as long as the doctor keeps: it must wrap inside the 80 columns too.
    status = {
        "torch": {"installed": True, "version": "2.11.0+cu130", "gpus": 8},
        "tensorflow": {
            "installed": True,
            "version": "2.21.0",
            "gpus": None,
            "error": "ImportError: " + "libcudart.so.12: cannot open shared object file " * 4,
        },
    }
    monkeypatch.setattr(doctor, "framework_status", lambda progress=None: status)
    res = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["doctor"])
    assert res.exit_code == 0, res.output
    _check_80(res.stdout)
    assert "FP32" in res.stdout and "0 H200" in res.stdout
    assert "2.11.0+cu130" in res.stdout and "libcudart.so.12" in res.stdout
    wide = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["doctor", "--wide"])
    assert "max SM/mem MHz" in wide.stdout and "FP16 TF" in wide.stdout


def test_piped_without_columns_is_whole(fake: FakeNvml) -> None:
    res = CliRunner(env={"COLUMNS": ""}).invoke(app, ["monitor", "--once", "--interval", "0.1"])
    assert res.exit_code == 0
    assert "NVLink TX GB/s" in res.stdout and "throttle" in res.stdout


def test_a_wide_header_names_the_unit_its_short_one_does(fake: FakeNvml) -> None:
    """Wide (a pipe, --wide), the columns read "memory", "power", "temp", "GPU mem" and "host
    mem" over bare numbers: only the narrow headers said GiB, W and C."""
    from zbench.telemetry.tables import GPU_COLUMNS, PROCESS_COLUMNS

    units = {"GiB", "W", "C", "GB/s", "MHz"}
    for col in (*GPU_COLUMNS, *PROCESS_COLUMNS):
        named = units & set((col.short or "").split())
        assert named <= set(col.header.split()), col
    res = CliRunner(env={"COLUMNS": ""}).invoke(app, ["monitor", "--once", "--interval", "0.1"])
    assert res.exit_code == 0, res.output
    assert "memory GiB" in res.stdout and "power W" in res.stdout and "temp C" in res.stdout


def test_the_host_line_names_swap_only_where_the_host_has_some() -> None:
    # It read "swap 0.0/0 GiB" on a host without swap; the TUI's host panel leaves swap out there.
    from zbench.telemetry.snapshot import HostSnapshot, Snapshot
    from zbench.telemetry.tables import host_line

    gib = 2**30
    host = HostSnapshot(cpu_pct=12.0, ram_used_bytes=4 * gib, ram_total_bytes=32 * gib)
    line = host_line(Snapshot(t=0.0, host=host))
    assert "swap" not in line and "RAM" in line and "load" in line
    swapped = Snapshot(
        t=0.0, host=HostSnapshot(swap_used_bytes=gib, swap_total_bytes=8 * gib, cpu_pct=12.0)
    )
    assert "swap 1.0/8 GiB" in host_line(swapped)
