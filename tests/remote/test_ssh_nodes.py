"""Multi-node jobs over real OpenSSH (sshd on 127.0.0.1, two aliases as two hosts)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from sshkit import Sshd

from tests.jobs.jobkit import wait_for
from zbench.contract.config import RunConfig
from zbench.jobs import api, nodes
from zbench.jobs.liveness import pid_alive


def remote_agents(log: Path, timeout: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.findall(r"agent pid (\d+) launcher pgid (\d+)", log.read_text())
        pids = [int(p) for pair in found for p in pair]
        if len(pids) == 4:
            return pids
        time.sleep(0.2)
    raise AssertionError(log.read_text())


def test_two_nodes_over_ssh_run_as_one_job(sshd: Sshd, launcher_home: Path) -> None:
    run = RunConfig("resnet50", device="cpu", steps=5, batch_size=8)
    cfg = nodes.parse_nodes("zb-a,zb-b", run)
    assert [launch.via for launch in nodes.plan(cfg, "t")] == ["ssh", "ssh"]
    [job_id] = api.submit([api.JobSpec(cfg)], db=launcher_home)  # type: ignore[arg-type]
    info = wait_for(job_id, launcher_home, ("done", "failed", "crashed"), timeout=60)
    log = Path(info.log_path or "").read_text()
    assert info.state == "done", (info.reason, log[-3000:])
    assert "ssh -F" in log and "--rdzv-endpoint 127.0.0.1:" in log  # ssh -G resolved the alias


def test_cancel_over_ssh_stops_the_remote_processes(sshd: Sshd, launcher_home: Path) -> None:
    run = RunConfig("resnet50", device="cpu", steps=3000, batch_size=8)
    cfg = nodes.parse_nodes("zb-a,zb-b", run)
    [job_id] = api.submit([api.JobSpec(cfg)], db=launcher_home)  # type: ignore[arg-type]
    info = wait_for(job_id, launcher_home, ("running",), timeout=60)
    deadline = time.monotonic() + 30
    while info.log_path is None and time.monotonic() < deadline:  # set just after "running"
        time.sleep(0.1)
        info = api.get_job(job_id, launcher_home)
    assert info.log_path is not None
    pids = remote_agents(Path(info.log_path))
    api.cancel(job_id, launcher_home, grace=5.0)
    info = wait_for(job_id, launcher_home, ("cancelled", "failed", "crashed", "done"), timeout=60)
    assert info.state == "cancelled", info.reason
    deadline = time.monotonic() + 15
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(p) for p in pids), "remote processes outlived the cancel"
