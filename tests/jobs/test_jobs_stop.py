"""Stopping a job reaches every process it started, even those in a session of their own (as
torchrun starts its workers), and the multi-GPU launcher lets torchrun stop its workers."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jobkit import fake_spec, wait_for

from zbench.jobs import api, liveness
from zbench.runners.torch.launch import stop_torchrun, terminate

pytestmark = pytest.mark.timeout(60)


def _session_child(job_id: int, db: Path) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = re.search(r"session child pid=(\d+)", "\n".join(api.log_tail(job_id, db)))
        if found:
            time.sleep(0.5)  # a few sampling ticks: the supervisor has seen it
            return int(found.group(1))
        time.sleep(0.1)
    raise AssertionError("the runner never started its child")


@pytest.mark.parametrize("how", ["cancel", "timeout"])
def test_stopping_a_job_ends_its_children_in_other_sessions(jobenv: Path, how: str) -> None:
    spec = fake_spec("sessionchild", timeout_s=2.0 if how == "timeout" else None)
    [jid] = api.submit([spec], db=jobenv)
    wait_for(jid, jobenv, ("running",))
    child = _session_child(jid, jobenv)
    try:
        if how == "cancel":
            api.cancel(jid, jobenv, grace=1.0)
        info = wait_for(jid, jobenv, ("cancelled", "timeout", "crashed"))
        assert info.state == ("cancelled" if how == "cancel" else "timeout")
        # The job ends (and its GPUs are free) only once its children are gone.
        assert not liveness.pid_alive(child)
    finally:
        liveness.signal_tree(child, 9)


_TRAPS_TERM = """
import signal, sys, time
def bye(*_):
    sys.exit(0)
signal.signal(signal.SIGTERM, bye if sys.argv[1] == "polite" else signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize(("kind", "rc"), [("polite", 0), ("stubborn", -9)])
def test_stop_torchrun_terms_and_waits_then_kills(kind: str, rc: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _TRAPS_TERM, kind], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    assert stop_torchrun(proc, grace=0.5) == rc  # type: ignore[arg-type]


def test_terminate_stops_every_rank_and_kills_only_the_stubborn_one() -> None:
    """The local launcher's ranks: one leaves on SIGTERM, one ignores it and is killed after the
    grace; one that has already ended is left as it is."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _TRAPS_TERM, kind], stdout=subprocess.PIPE, text=True
        )
        for kind in ("polite", "stubborn")
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    done = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    done.wait()
    assert terminate([*procs, done], grace=0.5) == [0, -9, 3]  # type: ignore[list-item]
