"""Several machines in one zbench, over real OpenSSH: two aliases of 127.0.0.1 with their own
ZBENCH_HOME are two hosts."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import threading
import time

from sshkit import Sshd
from typer.testing import CliRunner

from zbench.cli import app
from zbench.fleet.stream import HostStatus, HostStream
from zbench.jobs.remote import zbench_remote
from zbench.telemetry.snapshot import Snapshot


def run_job_on(host: str) -> None:
    argv = ["run", "resnet50", "--device", "cpu", "--steps", "3", "--json"]
    proc = subprocess.run(zbench_remote(host, argv), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_jobs_and_export_gather_every_host_keeping_each_rows_machine(sshd: Sshd) -> None:
    run_job_on("zb-a")
    run_job_on("zb-b")
    run_job_on("zb-b")
    runner = CliRunner()
    out = runner.invoke(app, ["jobs", "--hosts", "zb-a,zb-b", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert sorted((r["host"], r["id"], r["state"]) for r in rows) == [
        ("zb-a", 1, "done"),
        ("zb-b", 1, "done"),
        ("zb-b", 2, "done"),
    ]
    for argv, want in ((["--state", "done"], 3), (["--state", "failed"], 0)):  # each host filters
        out = runner.invoke(app, ["jobs", "--hosts", "zb-a,zb-b", "--json", *argv])
        assert out.exit_code == 0 and len(json.loads(out.stdout)) == want, out.output
    out = runner.invoke(app, ["export", "--hosts", "zb-a,zb-b", "-f", "csv"])
    assert out.exit_code == 0, out.output
    table = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["host"] for r in table].count("zb-b") == 2 and len(table) == 3
    assert all(float(r["samples_per_s"]) > 0 for r in table)


def test_an_unreachable_host_is_reported_and_the_others_still_answer(sshd: Sshd) -> None:
    run_job_on("zb-a")
    out = CliRunner().invoke(app, ["jobs", "--hosts", "zb-a,nowhere.invalid"])
    assert out.exit_code == 1
    assert "zb-a" in out.stdout and "nowhere.invalid:" in out.stderr


def test_bad_hosts_is_a_usage_error() -> None:
    out = CliRunner().invoke(app, ["jobs", "--hosts", "a,,b"])
    assert out.exit_code == 2 and "--hosts wants HOST[:PORT],HOST" in out.stderr


def test_a_host_cut_mid_stream_shows_lost_then_comes_back(sshd: Sshd) -> None:
    states: list[str] = []
    snaps: list[Snapshot] = []
    changed = threading.Condition()

    def on_status(status: HostStatus) -> None:
        with changed:
            states.append(status.state)
            changed.notify_all()

    def on_snapshot(host: str, snap: Snapshot) -> None:
        assert host == "zb-a"
        snaps.append(snap)

    def wait_until(pred: object, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        with changed:
            while not pred():  # type: ignore[operator]
                left = deadline - time.monotonic()
                assert left > 0, f"states so far: {states}"
                changed.wait(left)

    stream = HostStream("zb-a", on_snapshot, on_status, interval=0.2)
    stream.start()
    try:
        wait_until(lambda: "live" in states)
        assert snaps and snaps[-1].host is not None
        assert stream.proc is not None
        stream.proc.kill()  # the connection drops
        wait_until(lambda: "lost" in states)
        wait_until(lambda: states.count("live") >= 2)  # reconnected by itself
    finally:
        stream.stop()
    assert states[:2] == ["connecting", "live"] and "lost" in states
