"""GPU processes: host figures from psutil, the container and the job they belong to, signalling,
and the process table of ``zbench monitor`` at 80 columns."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from tests.fakes.fake_nvml import FakeNvml
from zbench.cli import app
from zbench.cli.monitor_view import plain, render
from zbench.telemetry import signals
from zbench.telemetry.processes import ProcessReader, container_of, job_of
from zbench.telemetry.snapshot import NA, GpuProcess, GpuSnapshot, Snapshot
from zbench.telemetry.tables import elapsed, process_rows

DOCKER = "0::/system.slice/docker-4f1c2a9e8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f.scope\n"
K8S = (
    "12:memory:/kubepods/burstable/pod1234/"
    "cri-containerd-abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789\n"
)


def test_container_is_read_from_cgroup_lines() -> None:
    assert container_of(DOCKER) == "4f1c2a9e8b7d"
    assert container_of(K8S) == "abcdef012345"
    assert container_of("0::/user.slice/user-1000.slice/session-3.scope\n") is None


def test_reader_adds_user_command_cpu_memory_and_start() -> None:
    reader = ProcessReader()
    me = GpuProcess(pid=os.getpid(), name="python", used_memory_bytes=2**30)
    gone = GpuProcess(pid=2**22 + 12345, name="?")
    out = reader.enrich([me, gone])
    got = out[os.getpid()]
    assert got.user == getpass.getuser()
    assert "pytest" in got.command or "python" in got.command
    assert isinstance(got.host_mem_bytes, int) and got.host_mem_bytes > 10 * 2**20
    assert isinstance(got.started, float) and got.started <= time.time()
    assert got.pgid == os.getpgid(0)
    assert got.used_memory_bytes == 2**30  # NVML's figure kept
    assert out[gone.pid] == gone  # a process that left keeps NVML's figures only


def test_a_process_whose_host_figures_cannot_be_read_shows_n_a_in_every_one() -> None:
    """Its user read "?" where its CPU, memory and age read "n/a" (a replayed trace, another
    user's process the host hides)."""
    unread = GpuProcess(pid=4242, name="python3", used_memory_bytes=2**30)
    snap = Snapshot(t=0.0, gpus=(GpuSnapshot(index=0, processes=(unread,)),))
    [(_, _, cells)] = process_rows(snap, now=10.0)
    assert cells[:8] == ["0", "4242", "n/a", "1.0", "n/a", "n/a", "n/a", "n/a"]


def test_job_of_matches_the_runner_and_its_process_group() -> None:
    runners = {4000: 7}
    assert job_of(GpuProcess(pid=4000, name="python"), runners) == 7
    assert job_of(GpuProcess(pid=4012, name="python", pgid=4000), runners) == 7
    assert job_of(GpuProcess(pid=4012, name="python", pgid=4100), runners) is None
    assert job_of(GpuProcess(pid=4012, name="python", pgid=NA), runners) is None


def test_signal_refuses_what_may_not_be_signalled() -> None:
    with pytest.raises(signals.SignalRefused, match="system's"):
        signals.send(1, "TERM")
    with pytest.raises(signals.SignalRefused, match="zbench itself"):
        signals.send(os.getpid(), "TERM")
    with pytest.raises(signals.SignalRefused, match="already exited"):
        signals.send(2**22 + 12345, "TERM")
    if os.geteuid() != 0:
        with pytest.raises(signals.SignalRefused, match="only root may signal it"):
            signals.check(next(p for p in _pids() if p > 1 and _owner(p) == 0))


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def test_signal_terms_then_kills_an_own_process() -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)",
        ]
    )
    try:
        time.sleep(0.3)
        signals.send(child.pid, "TERM")
        time.sleep(0.2)
        assert child.poll() is None  # it ignores TERM
        signals.send(child.pid, "KILL")
        assert child.wait(5) == -9
    finally:
        child.kill()


def _snap() -> Snapshot:
    now = 1_760_000_000.0
    procs = (
        GpuProcess(
            pid=41230,
            name="python",
            used_memory_bytes=70 * 2**30,
            sm_util=88.0,
            user="alice",
            command="python -m zbench.runners resnet50 --framework torch --batch-size 256 --events 3",
            cpu_pct=103.0,
            host_mem_bytes=9 * 2**30,
            started=now - 754,
            pgid=41230,
            container=None,
        ),
        GpuProcess(
            pid=5120,
            name="python3",
            used_memory_bytes=2**30,
            user="bob",
            command="python3 train.py --config configs/a-very-long-experiment-name.yaml",
            cpu_pct=12.0,
            host_mem_bytes=2**30,
            started=now - 90000,
            pgid=5100,
            container="4f1c2a9e8b7d",
        ),
    )
    gpus = tuple(
        GpuSnapshot(
            index=i,
            name="NVIDIA H200",
            util_gpu=97.0,
            util_mem=40.0,
            mem_used_bytes=71 * 2**30,
            mem_total_bytes=141 * 2**30,
            power_w=650.0,
            power_limit_w=700.0,
            temperature_c=55.0,
            throttle_reasons=("sw_power_cap",),
            processes=procs[i : i + 1],
        )
        for i in range(2)
    )
    return Snapshot(t=now, seq=2, gpus=gpus)


def test_process_table_reads_in_80_columns() -> None:
    text = plain(render(_snap(), width=80, runners={41230: 12}, now=1_760_000_000.0))
    assert all(len(line) <= 80 for line in text), text
    head = next(line for line in text if line.lstrip().startswith("GPU") and "PID" in line)
    assert "command" in head and "job" in head
    rows = [line for line in text if "41230" in line or "5120" in line]
    assert "#12" in rows[0] and "12m34s" in rows[0] and "python -m zbench.runners" in rows[0]
    assert "1d01h" in rows[1]
    assert "Re…" not in "".join(text)


def test_process_table_is_whole_when_wide() -> None:
    text = plain(render(_snap(), width=None, runners={}, now=1_760_000_000.0))
    assert any("--events 3" in line for line in text)
    assert any("container" in line and "host mem" in line for line in text)
    assert any("4f1c2a9e8b7d" in line for line in text)


def test_monitor_once_gives_real_rates_and_fits_80_columns(fake: FakeNvml) -> None:
    fake.gpus[0].processes = [(os.getpid(), 3 * 2**30, 55)]
    res = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["monitor", "--once", "--interval", "0.2"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), res.stdout
    host = next(line for line in lines if line.startswith("host CPU"))
    assert "CPU n/a" not in host
    proc = next(line for line in lines if str(os.getpid()) in line)
    assert getpass.getuser() in proc and "55%" in proc
    assert sum(1 for line in lines if line.startswith("host CPU")) == 1  # one sample shown


def test_elapsed_reads_short() -> None:
    assert [elapsed(1000.0 - s, 1000.0) for s in (5, 754, 11280, 90000)] == [
        "5s",
        "12m34s",
        "3h08m",
        "1d01h",
    ]
    assert elapsed(NA, 1000.0) == "n/a"
