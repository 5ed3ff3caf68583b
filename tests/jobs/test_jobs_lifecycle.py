"""Every way a job can end is recorded, with its reason and log tail; jobs outlive their launcher."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jobkit import fake_spec, wait_for

from tests.rows import job_row
from zbench.jobs import api, liveness
from zbench.store import RunFilter, Store

pytestmark = pytest.mark.timeout(90)


def _wait_running(job_id: int, db: Path) -> api.JobInfo:
    info = wait_for(job_id, db, ("running",))
    deadline = time.monotonic() + 10
    while info.phase not in ("warmup", "measure") and time.monotonic() < deadline:
        time.sleep(0.05)
        info = api.get_job(job_id, db)
    row = Store(db).get_job(job_id)
    assert row is not None and row["pid"]
    return info


def _wait_dead(pid: int, db: Path) -> None:
    """Until a killed supervisor is gone and its lock free (its other threads can hold the lock a
    moment after the main one is a zombie)."""
    deadline = time.monotonic() + 10
    while (liveness.pid_alive(pid) or liveness.lock_held(db)) and time.monotonic() < deadline:
        time.sleep(0.05)


def _pid(job_id: int, db: Path) -> int:
    row = Store(db).get_job(job_id)
    assert row is not None
    return int(row["pid"])


def test_successful_job_records_run_and_phase_aggregates(jobenv: Path) -> None:
    [jid] = api.submit([fake_spec("ok", steps=15, step_s=0.05)], db=jobenv)
    info = wait_for(jid, jobenv, ("done", "failed", "crashed"))
    assert info.state == "done", info.reason
    assert info.run_id is not None and info.step == 15 and info.total == 15
    assert info.precision == "fp32"  # the spec left it to the preset; the runner's start says fp32
    store = Store(jobenv)
    run = store.get_run(info.run_id)
    assert run is not None and run["samples_per_s"] > 0
    assert run["config"]["steps"] == 15 and run["env"]["framework"] == "fake 1.0"
    # The machine's description goes with every run, so a report can show it (here: no GPU).
    machine = run["env"]["machine"]
    assert machine["host"]["cpu_threads"] == os.cpu_count() and machine["gpus"] == []
    phases = store.phase_aggregates([jid])[jid]
    assert {"warmup", "measure"} <= set(phases)
    assert phases["measure"]["n_samples"] >= 1
    assert phases["measure"]["gpu_util_mean"] is None  # no GPU here: NA, not 0
    assert store.samples(jid), "raw samples are kept"
    assert Path(info.log_path or "").read_text().count("done") >= 1


@pytest.mark.parametrize(
    ("behave", "state", "reason"),
    [
        ("crash", "crashed", "exited with status 3"),
        ("oom", "oom", "out of memory: CUDA out of memory"),
        ("selfkill", "crashed", "killed by SIGKILL"),
        ("noresult", "failed", "without a result"),
    ],
)
def test_failures_end_in_a_recorded_state(
    jobenv: Path, behave: str, state: str, reason: str
) -> None:
    [jid] = api.submit([fake_spec(behave)], db=jobenv)
    info = wait_for(jid, jobenv, ("done", "failed", "crashed", "oom"))
    assert info.state == state
    assert reason in (info.reason or "")
    row = Store(jobenv).get_job(jid)
    assert row is not None and f"behave={behave}" in row["log_tail"]


def test_kill_9_of_the_runner(jobenv: Path) -> None:
    [jid] = api.submit([fake_spec("slow", steps=100)], db=jobenv)
    _wait_running(jid, jobenv)
    os.kill(_pid(jid, jobenv), signal.SIGKILL)
    info = wait_for(jid, jobenv, ("crashed", "failed", "done"))
    assert info.state == "crashed" and info.reason is not None
    assert info.reason.startswith("killed by SIGKILL") and "host memory" in info.reason
    assert "hanging" not in api.log_tail(jid, jobenv)


def test_hang_reaches_its_timeout(jobenv: Path) -> None:
    [jid] = api.submit([fake_spec("hang", timeout_s=1.5)], db=jobenv)
    info = wait_for(jid, jobenv, ("timeout", "crashed", "done"), timeout=30)
    assert info.state == "timeout" and info.reason == "timed out after 1.5 s"
    assert "hanging" in api.log_tail(jid, jobenv)
    assert info.ended is not None and info.started is not None
    assert info.ended - info.started < 10


def test_a_timeout_after_the_result_says_the_result_is_stored(jobenv: Path) -> None:
    """A runner that wrote its result and then hung on its way out reaches its --timeout: the
    run is stored, and the reason said only "timed out", as if nothing had been measured."""
    [jid] = api.submit([fake_spec("resulthang", steps=5, timeout_s=2.0)], db=jobenv)
    info = wait_for(jid, jobenv, ("timeout", "crashed", "done"), timeout=30)
    assert info.state == "timeout" and info.run_id is not None
    assert info.reason == "timed out after 2 s; its result was already written and is stored"
    [hung] = api.submit([fake_spec("hang", timeout_s=1.0)], db=jobenv)
    info = wait_for(hung, jobenv, ("timeout", "crashed", "done"), timeout=30)
    assert info.reason == "timed out after 1 s" and info.run_id is None


def test_cancel_running_and_queued(jobenv: Path) -> None:
    first, second = api.submit([fake_spec("hang"), fake_spec("ok")], db=jobenv)
    _wait_running(first, jobenv)
    assert api.get_job(second, jobenv).state == "queued"  # CPU jobs run one at a time
    assert api.cancel(second, jobenv).state == "cancelled"
    pid = _pid(first, jobenv)
    api.cancel(first, jobenv, grace=2.0)
    info = wait_for(first, jobenv, ("cancelled",))
    assert info.reason == "cancelled by the user"
    assert not liveness.pid_alive(pid)
    assert api.get_job(second, jobenv).started is None


def test_a_second_cancel_with_a_shorter_grace_kills_sooner(jobenv: Path) -> None:
    """A runner that ignores SIGTERM, cancelled with a long --grace, then again with --grace 0.5:
    the second was printed as "SIGKILL after 0.5 s" and ignored, the job ran out the first."""
    [jid] = api.submit([fake_spec("ignoreterm")], db=jobenv)
    wait_for(jid, jobenv, ("running",))
    deadline = time.monotonic() + 20
    while "ignoring SIGTERM" not in api.log_tail(jid, jobenv):
        assert time.monotonic() < deadline, "the runner never started"
        time.sleep(0.05)
    api.cancel(jid, jobenv, grace=120.0)
    log = jobenv.parent / "supervisor.log"
    while f"job {jid}: cancel requested" not in log.read_text():
        assert time.monotonic() < deadline, "the supervisor never saw the cancel"
        time.sleep(0.05)
    api.cancel(jid, jobenv, grace=0.5)
    info = wait_for(jid, jobenv, ("cancelled", "crashed", "done"), timeout=15)
    assert info.state == "cancelled" and info.reason == "cancelled by the user"


def test_cancel_of_a_job_started_as_it_was_cancelled_stops_it(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The supervisor starts a queued job between cancel's read and its write: the write for a
    queued job changed nothing, `zbench cancel` said "stopping", and the job ran to its end."""
    import dataclasses

    [jid] = api.submit([fake_spec("hang")], db=jobenv)
    _wait_running(jid, jobenv)
    real = api._row
    reads = []

    def stale_then_real(store: Store, job_id: int) -> object:
        row = real(store, job_id)
        reads.append(row)
        return dataclasses.replace(row, state="queued") if len(reads) == 1 else row

    monkeypatch.setattr(api, "_row", stale_then_real)
    api.cancel(jid, jobenv, grace=1.0)
    info = wait_for(jid, jobenv, ("cancelled", "timeout", "crashed", "done"), timeout=10)
    assert info.state == "cancelled" and info.reason == "cancelled by the user"


def test_killed_supervisor_is_detected_and_its_jobs_marked_lost(jobenv: Path) -> None:
    [jid] = api.submit([fake_spec("slow", steps=200)], db=jobenv)
    _wait_running(jid, jobenv)
    store = Store(jobenv)
    sup = store.supervisor()
    assert sup is not None
    runner = _pid(jid, jobenv)
    os.kill(int(sup["pid"]), signal.SIGKILL)
    _wait_dead(int(sup["pid"]), jobenv)
    assert api.get_job(jid, jobenv).state == "running", "reading jobs has no side effects"
    assert api.reconcile(jobenv) == [jid]  # the poll loop's explicit call notices
    info = api.get_job(jid, jobenv)
    assert info.state == "lost"
    assert f"supervisor (pid {sup['pid']}) died" in (info.reason or "")
    assert store.supervisor() is None
    deadline = time.monotonic() + 10
    while liveness.pid_alive(runner) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not liveness.pid_alive(runner), "the orphaned runner is stopped"


def test_stale_heartbeat_counts_as_dead(jobenv: Path) -> None:
    store = Store(jobenv)
    [jid] = store.add_jobs([job_row(state="running", created=time.time())])
    store.set_supervisor(os.getpid(), liveness.socket.gethostname(), time.time())
    store._write(lambda c: c.execute("UPDATE supervisor SET heartbeat = heartbeat - 120"))
    assert liveness.detect_lost(store) == [jid]
    assert "stopped answering" in (store.get_job(jid) or {})["reason"]


def test_job_survives_sighup_of_the_launching_terminal(jobenv: Path) -> None:
    """`zbench run` in its own session stands in for a terminal: SIGHUP to that session kills the
    CLI, but not the supervisor or the job. The CLI gets SIGHUP's default action, as under a
    terminal's shell, even when the tests run under ``nohup``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "zbench",
            "run",
            "resnet50",
            "--device",
            "cpu",
            "--steps",
            "100",
            "--",
            "behave=slow",
            "step_s=0.1",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        jobs = api.list_jobs(jobenv)
        if jobs and jobs[0].state == "running":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the job never started")
    os.killpg(cli.pid, signal.SIGHUP)
    assert cli.wait(timeout=10) != 0  # the CLI is gone
    info = wait_for(jobs[0].id, jobenv, ("done", "crashed", "failed", "lost"), timeout=60)
    assert info.state == "done", info.reason
    assert info.run_id is not None


def test_one_supervisor_at_a_time(jobenv: Path) -> None:
    [jid] = api.submit([fake_spec("slow", steps=40)], db=jobenv)
    _wait_running(jid, jobenv)
    assert liveness.lock_held(jobenv)
    assert liveness.ensure_supervisor(jobenv) is None
    second = subprocess.run(
        [sys.executable, "-m", "zbench.jobs.supervisor", "--db", str(jobenv)],
        env=liveness.child_env(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 0 and "another supervisor" in second.stdout


def test_gpus_are_not_shared(jobenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    specs = [fake_spec("slow", device="cuda", steps=12) for _ in range(3)]
    specs.append(fake_spec("ok", device="cuda", gpus=2))
    ids = api.submit(specs, db=jobenv)
    seen_overlap = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # One read of every row: separate reads per job could see a job that ended and the job
        # that took its GPU both as running.
        jobs = [j for j in api.list_jobs(jobenv) if j.id in ids]
        running = [j for j in jobs if j.state == "running"]
        used = [g for j in running for g in (j.gpu_ids or ())]
        seen_overlap |= len(used) != len(set(used))
        assert len(running) <= 2
        if all(j.finished for j in jobs):
            break
        time.sleep(0.05)
    assert not seen_overlap
    jobs = [api.get_job(i, jobenv) for i in ids]
    assert [j.state for j in jobs] == ["done"] * 4
    assert {j.gpu_ids for j in jobs[:2]} == {(0,), (1,)}
    assert jobs[3].gpu_ids == (0, 1)
    assert "CUDA_VISIBLE_DEVICES=0,1" in "\n".join(api.log_tail(ids[3], jobenv))


def test_job_needing_more_gpus_than_exist_fails_with_reason(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    [jid] = api.submit([fake_spec("ok", device="cuda", gpus=2)], db=jobenv)
    info = wait_for(jid, jobenv, ("failed", "done"))
    assert info.state == "failed" and "needs 2 GPUs" in (info.reason or "")


def test_gpu_telemetry_from_a_replayed_trace(jobenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = Path(__file__).parents[1] / "fixtures" / "traces" / "synthetic.jsonl"
    monkeypatch.setenv("ZBENCH_TELEMETRY_REPLAY", str(trace))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    [jid] = api.submit([fake_spec("slow", device="cuda", steps=8, step_s=0.1)], db=jobenv)
    info = wait_for(jid, jobenv, ("done", "crashed", "failed"))
    assert info.state == "done", info.reason
    store = Store(jobenv)
    run = store.get_run(info.run_id or 0)
    assert run is not None and run["gpu_name"] == "NVIDIA H200" and run["gpus"] == 1
    measure = store.phase_aggregates([jid])[jid]["measure"]
    assert measure["gpu_util_mean"] is not None and measure["gpu_mem_peak_bytes"] > 0
    samples = store.samples(jid)
    assert samples and all([g["i"] for g in s["gpus"]] == [0] for s in samples)


def test_sigterm_to_the_supervisor_cancels_its_jobs(jobenv: Path) -> None:
    first, second = api.submit([fake_spec("hang"), fake_spec("ok")], db=jobenv)
    _wait_running(first, jobenv)
    sup = Store(jobenv).supervisor()
    assert sup is not None
    os.kill(int(sup["pid"]), signal.SIGTERM)
    info = wait_for(first, jobenv, ("cancelled", "lost", "crashed"))
    assert (info.state, info.reason) == ("cancelled", "the supervisor was stopped")
    # Left queued by the stopped supervisor; the next look starts a new one that runs it.
    _wait_dead(int(sup["pid"]), jobenv)
    api.reconcile(jobenv)
    assert wait_for(second, jobenv, ("done", "cancelled")).state == "done"
    new = Store(jobenv).supervisor()
    assert new is None or new["pid"] != sup["pid"]


@pytest.mark.parametrize("look", ["reconcile", "jobs_command"])
def test_queued_jobs_left_without_a_supervisor_are_picked_up(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch, look: str
) -> None:
    """A supervisor that stopped (SIGTERM, reboot) leaves queued jobs; the next look starts one."""
    with monkeypatch.context() as m:
        m.setattr(liveness, "ensure_supervisor", lambda db: None)
        [jid] = api.submit([fake_spec("ok")], db=jobenv)
    store = Store(jobenv)
    assert not liveness.lock_held(jobenv) and (store.get_job(jid) or {})["state"] == "queued"
    api.list_jobs(jobenv)
    api.get_job(jid, jobenv)
    assert not liveness.lock_held(jobenv), "reading jobs starts no supervisor"
    if look == "reconcile":
        api.reconcile(jobenv)
    else:
        from zbench.cli.jobs_list import list_jobs

        list_jobs(all_jobs=True, db=jobenv, json_out=True)
    deadline = time.monotonic() + 30
    while (store.get_job(jid) or {})["state"] != "done" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (store.get_job(jid) or {})["state"] == "done"


def test_a_late_heartbeat_of_a_live_supervisor_is_not_death(jobenv: Path) -> None:
    [jid] = api.submit([fake_spec("slow", steps=200)], db=jobenv)
    _wait_running(jid, jobenv)
    store = Store(jobenv)
    sup = store.supervisor()
    assert sup is not None
    store._write(lambda c: c.execute("UPDATE supervisor SET heartbeat = heartbeat - 31"))
    assert liveness.detect_lost(store) == []
    assert api.get_job(jid, jobenv).state == "running"
    store.clear_supervisor()  # even a row deleted by mistake comes back with the next heartbeat
    deadline = time.monotonic() + 5
    while store.supervisor() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    again = store.supervisor()
    assert again is not None and again["pid"] == sup["pid"]
    assert time.time() - again["heartbeat"] < 5


def test_a_held_supervisor_lock_means_alive(jobenv: Path) -> None:
    store = Store(jobenv)
    [jid] = store.add_jobs([job_row(state="running", created=time.time())])
    lock = liveness.try_lock(jobenv)  # a supervisor starting up: the lock, no row yet
    assert lock is not None
    try:
        assert liveness.detect_lost(store) == []
    finally:
        lock.close()
    assert liveness.detect_lost(store) == [jid]


def test_a_result_written_before_the_supervisor_died_is_stored(jobenv: Path) -> None:
    from zbench.contract.protocol import read_events

    [jid] = api.submit([fake_spec("resulthang", steps=5)], db=jobenv)
    _wait_running(jid, jobenv)
    store = Store(jobenv)
    events = Path((store.get_job(jid) or {})["events_path"])
    deadline = time.monotonic() + 20
    while not any(e["type"] == "result" for e in read_events(events)):
        assert time.monotonic() < deadline, "the runner never wrote its result"
        time.sleep(0.05)
    sup = store.supervisor()
    assert sup is not None
    runner = _pid(jid, jobenv)
    os.kill(int(sup["pid"]), signal.SIGKILL)
    _wait_dead(int(sup["pid"]), jobenv)
    api.reconcile(jobenv)
    info = api.get_job(jid, jobenv)
    assert info.state == "done" and info.run_id is not None
    assert f"supervisor (pid {sup['pid']}) died" in (info.reason or "")
    run = store.get_run(info.run_id)
    assert run is not None and run["samples_per_s"] > 0 and run["job_id"] == jid
    assert run["env"]["framework"] == "fake 1.0"  # the same record the supervisor writes
    assert liveness.detect_lost(store) == [] and len(store.runs(RunFilter(job_ids=[jid]))) == 1
    deadline = time.monotonic() + 10
    while liveness.pid_alive(runner) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not liveness.pid_alive(runner)


def test_runner_pids_of_a_database_that_does_not_exist_is_empty_and_makes_none(
    tmp_path: Path,
) -> None:
    """`zbench monitor --db` asks which GPU processes are zbench's: a path with no database has
    no running job, and asking must not make one (folders and all)."""
    assert api.runner_pids(tmp_path / "none" / "zbench.db") == {}
    assert not (tmp_path / "none").exists()


def test_a_lock_probe_waits_while_another_thread_starts_a_supervisor(tmp_path: Path) -> None:
    """A supervisor started by one thread inherited, until its exec, the descriptor of another
    thread's momentary probe of a second database's lock; that database's try_lock then failed and
    no supervisor served it (a job stayed queued, seen under load). Probes and starts now take
    turns in a process."""
    import threading

    db = tmp_path / "z.db"
    said: list[bool] = []
    with liveness._PROBE_OR_SPAWN:  # as ensure_supervisor holds it around its fork
        probe = threading.Thread(target=lambda: said.append(liveness.lock_held(db)))
        probe.start()
        probe.join(0.3)
        assert probe.is_alive() and not said  # no probe descriptor open during the start
    probe.join(5)
    assert said == [False]
