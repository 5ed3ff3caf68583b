"""Round 3, cases 5 and 14: a following `zbench run` notices a dead supervisor; a closed pipe, a
FIFO for a config file, a runner's bad input, a killed launcher's scratch folder and the
supervisor's last line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.faults.conftest import ROOT, one_line_error, zbench
from tests.jobs.jobkit import fake_spec, wait_for
from zbench.jobs import api, liveness
from zbench.store import Store

FINAL = ("done", "failed", "crashed", "oom", "timeout", "cancelled", "lost")


def test_following_jobs_notices_a_dead_supervisor_and_the_queued_job_runs(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zbench.cli import follow as follow_mod

    monkeypatch.setattr(follow_mod, "RECONCILE_S", 0.5)
    monkeypatch.setattr(liveness, "LOST_GRACE_S", 1.0)
    db = home / "zbench.db"
    first, second = api.submit([fake_spec("hang"), fake_spec("ok", steps=2)], db=db)
    deadline = time.monotonic() + 20
    while not (Store.reader(db).get_job(first) or {}).get("pid"):  # its runner is known
        assert time.monotonic() < deadline
        time.sleep(0.05)
    sup = Store.reader(db).supervisor()
    assert sup is not None
    os.kill(int(sup["pid"]), signal.SIGKILL)
    done: list[object] = []
    thread = threading.Thread(
        target=lambda: done.append(follow_mod.follow([first, second], db, follow_mod._console())),
        daemon=True,
    )
    thread.start()
    thread.join(40)
    assert done, "the follow loop never noticed the supervisor had died"
    assert api.get_job(first, db).state == "lost"
    assert api.get_job(second, db).state == "done"


def test_a_closed_pipe_ends_quietly_with_status_0(home: Path) -> None:
    db = home / "zbench.db"
    Store(db).add_jobs(
        [
            {
                "workload": "resnet50",
                "framework": "torch",
                "mode": "train",
                "state": "done",
                "config": {"note": "x" * 400},
                "created": float(i),
            }
            for i in range(400)
        ]
    )
    assert _head_1(["jobs", "--all", "--json", "--db", str(db)]) == (0, "")


def _head_1(args: list[str], **env: str) -> tuple[int, str]:
    """``zbench ARGS | head -1``: the exit status and what it said on stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "zbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(60), err


def test_a_closed_pipe_under_a_rich_view_ends_quietly_with_status_0(home: Path) -> None:
    """Rich's own broken-pipe handling exits 1: `zbench monitor | head -3` read as a failure."""
    trace = ROOT / "tests" / "fixtures" / "traces" / "synthetic.jsonl"  # 10 s of samples
    args = ["monitor", "--replay", str(trace), "--interval", "0.05"]
    assert _head_1(args, COLUMNS="120") == (0, "")


def test_a_fifo_as_the_config_file_is_refused_in_one_line(tmp_path: Path) -> None:
    from zbench.settings import SettingsError, load_config

    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    outcome: list[BaseException | object] = []

    def load() -> None:
        try:
            outcome.append(load_config(fifo))
        except SettingsError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(5)
    if not outcome:  # before the fix: blocked in open(); a writer lets it go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO config blocked start-up")
    assert isinstance(outcome[0], SettingsError)
    assert str(outcome[0]) == f"{fifo}: not a regular file"


def test_a_dataset_the_runner_refuses_is_exit_2_in_one_line(home: Path) -> None:
    db = home / "zbench.db"
    code, _, err = zbench(
        "run", "resnet50", "--device", "cpu", "--db", str(db), "--", "behave=badinput"
    )
    line = one_line_error(err)
    assert (
        code == 2 and "not a Flowers-102 folder" in line and line.startswith("zbench: run: job 1")
    )


def test_a_killed_launchers_scratch_folder_is_removed(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("scratchkill")], db=db)
    info = wait_for(jid, db, FINAL)
    assert info.state == "crashed"
    log = Path(info.log_path or "").read_text()
    scratch = Path(
        next(ln for ln in log.splitlines() if ln.startswith("scratch=")).split("=", 1)[1]
    )
    assert scratch.name.startswith("zbench-ddp-")
    assert Path(info.events_path or "").parent in scratch.parents, "in the job's own folder"
    assert not scratch.exists() and not scratch.parent.exists(), "removed once the job ended"


def test_the_launcher_puts_its_rendezvous_in_the_jobs_scratch_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zbench.contract.config import RunConfig
    from zbench.contract.protocol import ENV_JOB_TMP, EventWriter
    from zbench.runners.torch import launch

    seen: list[Path] = []

    class Ranks:
        def __init__(self, cfg: RunConfig, events: str, store: Path, **_: object) -> None:
            seen.append(store)

        def wait(self) -> int:
            return 0

    monkeypatch.setenv(ENV_JOB_TMP, str(tmp_path))
    monkeypatch.setattr(launch, "LocalRanks", Ranks)
    launch.launch(RunConfig(workload="resnet50", gpus=2), EventWriter(tmp_path / "events.jsonl"))
    assert seen and seen[0].parent.parent == tmp_path


def test_a_stopped_supervisor_does_not_say_nothing_is_left_while_jobs_wait(home: Path) -> None:
    db = home / "zbench.db"
    first, _ = api.submit([fake_spec("hang"), fake_spec("ok")], db=db)
    wait_for(first, db, ("running",))
    sup = Store.reader(db).supervisor()
    assert sup is not None
    os.kill(int(sup["pid"]), signal.SIGTERM)
    deadline = time.monotonic() + 30
    while liveness.pid_alive(int(sup["pid"])):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    last = (home / "supervisor.log").read_text().splitlines()[-1]
    assert "nothing left to run" not in last
    assert "1 queued job waits" in last
