"""Multi-node jobs with local "nodes": the same agents, streams and stops as over ssh, the fake runner
standing in for torchrun; a fake ``srun`` for the Slurm path; the ``--nodes`` parser."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import sys
import time
from pathlib import Path

import pytest
from jobkit import wait_for
from typer.testing import CliRunner

from zbench.cli import app
from zbench.contract.config import RunConfig
from zbench.contract.options import UsageError
from zbench.jobs import api, nodes
from zbench.jobs.liveness import pid_alive
from zbench.store import RunFilter, Store

CPU_RUN = RunConfig("resnet50", device="cpu", steps=40, batch_size=8, extra=())


def submit_nodes(
    db: Path, hosts: str, run: RunConfig = CPU_RUN, timeout: float | None = None
) -> int:
    cfg = nodes.parse_nodes(hosts, run)
    [job_id] = api.submit([api.JobSpec(cfg, None, timeout)], db=db)  # type: ignore[arg-type]
    return job_id


def submit_real_run_on_two_local_nodes(
    db: Path, monkeypatch: pytest.MonkeyPatch, steps: int
) -> int:
    """The real runner, not the fake, on a tiny resnet50 for ``steps`` steps, one node launcher for
    each of ``localhost,localhost``."""
    monkeypatch.delenv("ZBENCH_RUNNER_MODULE")
    run = RunConfig(
        "resnet50",
        device="cpu",
        image_size=32,
        batch_size=2,
        steps=steps,
        warmup=1,
        repeat=1,
        workers=0,
    )
    return submit_nodes(db, "localhost,localhost", run, timeout=240)


def log_of(job_id: int, db: Path, timeout: float = 20.0) -> Path:
    """The job's runner log, once the supervisor recorded where it is."""
    deadline = time.monotonic() + timeout
    while not api.get_job(job_id, db).log_path:
        assert time.monotonic() < deadline, "the job never recorded its log"
        time.sleep(0.05)
    return Path(api.get_job(job_id, db).log_path or "")


def agents(log: Path, count: int, timeout: float = 20.0) -> dict[int, tuple[int, int]]:
    """{node rank: (agent pid, launcher pgid)} from the job's log, once every node started."""
    pattern = re.compile(r"\[node (\d+) \(.*?\)\] agent pid (\d+) launcher pgid (\d+)")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        found = {int(m[1]): (int(m[2]), int(m[3])) for m in pattern.finditer(text)}
        if len(found) == count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"the nodes did not all start:\n{log.read_text() if log.exists() else ''}")


def gone(pids: list[int], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any(pid_alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


def test_two_local_nodes_run_as_one_job_with_per_node_figures(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Steps of 0.3 s: each node's agent samples every 0.5 s, and on a loaded machine the fake's
    # 0.02 s steps ended before an agent's first sample (no telemetry for that node).
    monkeypatch.setenv("FAKE_RUNNER_BEHAVE", "slow")
    run = RunConfig("resnet50", device="cpu", steps=5, batch_size=8)
    job_id = submit_nodes(jobenv, "localhost,127.0.0.1", run)
    info = wait_for(job_id, jobenv, ("done", "failed", "crashed"), timeout=60)
    assert info.state == "done", (info.reason, api.log_tail(job_id, jobenv))
    [run_row] = Store(jobenv).runs(RunFilter(job_ids=[job_id]))
    figures = run_row["result"]["nodes"]
    assert [(f["rank"], f["host"]) for f in figures] == [(0, "localhost"), (1, "127.0.0.1")]
    rate = run_row["result"]["samples_per_s"]
    assert sum(f["samples_per_s"] for f in figures) == pytest.approx(rate)
    assert all(f["telemetry"] for f in figures)  # each node's own samples, per phase
    log = Path(info.log_path or "").read_text()
    # Both nodes are this machine: they meet through a file store, nothing listens (case 8).
    assert "--nnodes 2 --node-rank 1 --rdzv-backend file --rdzv-endpoint" in log
    assert "c10d" not in log and "is_host" not in log
    samples = Path(info.events_path or "").with_name("node-samples.jsonl").read_text().splitlines()
    assert {json.loads(s)["node"] for s in samples} == {0, 1}


def test_a_node_that_dies_fails_the_job_naming_it_and_stops_the_others(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUNNER_BEHAVE", "slow")
    job_id = submit_nodes(jobenv, "localhost,localhost")
    info = wait_for(job_id, jobenv, ("running",))
    found = agents(log_of(job_id, jobenv), 2)
    agent1, group1 = found[1]
    os.killpg(group1, signal.SIGKILL)  # the whole machine: launcher and agent
    os.kill(agent1, signal.SIGKILL)
    info = wait_for(job_id, jobenv, ("failed", "crashed", "done"), timeout=30)
    assert info.state == "failed"
    assert info.reason is not None and "node 1 (localhost)" in info.reason
    assert "SIGKILL" in info.reason
    assert gone([found[0][0], found[0][1]]), "node 0 was left running"


def test_cancel_stops_every_node(jobenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_RUNNER_BEHAVE", "slow")
    job_id = submit_nodes(jobenv, "localhost,localhost")
    wait_for(job_id, jobenv, ("running",))
    found = agents(log_of(job_id, jobenv), 2)
    api.cancel(job_id, jobenv, grace=5.0)
    info = wait_for(job_id, jobenv, ("cancelled", "failed", "crashed", "done"), timeout=30)
    assert info.state == "cancelled"
    assert gone([pid for pair in found.values() for pid in pair])


FAKE_SRUN = """#!{python}
import json, os, subprocess, sys, threading
args = sys.argv[1:]
with open({record!r}, "w") as fh:
    json.dump(args, fh)
k = int(args[args.index("--nodes") + 1])
cmd = args[args.index("--unbuffered") + 1:]
procs = []
for i in range(k):
    env = dict(os.environ, SLURM_NODEID=str(i), SLURM_PROCID=str(i))
    procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL))
lock = threading.Lock()
def pump(i, p):
    for line in p.stdout:
        with lock:
            sys.stdout.write(f"{{i}}: " + line.decode())
            sys.stdout.flush()
threads = [threading.Thread(target=pump, args=(i, p)) for i, p in enumerate(procs)]
[t.start() for t in threads]
[t.join() for t in threads]
sys.exit(max(p.wait() for p in procs))
"""


def test_nodes_slurm_runs_one_srun_for_every_node(
    jobenv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "srun-args.json"
    srun = bin_dir / "srun"
    srun.write_text(FAKE_SRUN.format(python=sys.executable, record=str(record)))
    srun.chmod(srun.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_NODELIST", "localhost,localhost")
    monkeypatch.setenv("ZBENCH_RDZV_PORT", "29999")
    run = RunConfig("resnet50", device="cpu", steps=5, batch_size=8)
    cfg = nodes.parse_nodes("slurm", run)
    assert cfg.launcher == "srun" and len(cfg.nodes) == 2
    [job_id] = api.submit([api.JobSpec(cfg)], db=jobenv)  # type: ignore[arg-type]
    info = wait_for(job_id, jobenv, ("done", "failed", "crashed"), timeout=60)
    assert info.state == "done", (info.reason, api.log_tail(job_id, jobenv))
    args = json.loads(record.read_text())
    assert args[:6] == ["--nodes", "2", "--ntasks", "2", "--ntasks-per-node", "1"]
    assert "--no-watch-stdin" in args and "is_host={is_host}" in args
    log = Path(info.log_path or "").read_text()
    assert "--node-rank 1" in log and "is_host=0" in log  # each task filled in its own rank


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a,,b", "HOST[:GPUS] or HOST:PORT:[GPUS]"),
        ("a:x", "--nodes a: 'x' is not a GPU index (expected e.g. 0+1)"),
        ("a:0+-1", "--nodes a: '-1' is not a GPU index (expected e.g. 0+1)"),
        ("a:0,b:1+", "--nodes b: '' is not a GPU index (expected e.g. 0+1)"),
        ("a:0+0", "--nodes a: GPU 0 is named twice"),
        ("slurm", "Slurm allocation"),
    ],
)
def test_bad_nodes_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        nodes.parse_nodes(text, RunConfig("resnet50"), environ={})


@pytest.mark.parametrize("port", ["abc", "0", "65536", "-1", "29400.5"])
def test_a_bad_rendezvous_port_is_refused_before_queueing(port: str) -> None:
    """$ZBENCH_RDZV_PORT was read with int() as the job started: the job was queued, then
    crashed with a ValueError traceback in its log."""
    with pytest.raises(UsageError, match=re.escape(f"$ZBENCH_RDZV_PORT: {port!r} is not a port")):
        nodes.parse_nodes("localhost,gpu2", RunConfig("resnet50"), {"ZBENCH_RDZV_PORT": port})
    cfg = nodes.parse_nodes("localhost,gpu2", RunConfig("resnet50"), {})
    assert nodes.rendezvous(cfg, {"ZBENCH_RDZV_PORT": " 29999 "})[1] == 29999


def test_repeated_hosts_get_their_own_gpus_and_named_ids_must_match_gpus() -> None:
    cfg = nodes.parse_nodes("localhost,localhost,gpu2:4+5", RunConfig("resnet50", gpus=2), {})
    assert [n.gpu_ids for n in cfg.nodes] == [(0, 1), (2, 3), (4, 5)]
    assert cfg.local_gpu_ids() == (0, 1, 2, 3)
    with pytest.raises(UsageError, match="--gpus asks for 2"):
        nodes.parse_nodes("a:0", RunConfig("resnet50", gpus=2), {})


def test_tf_nodes_get_tf_config_workers() -> None:
    cfg = nodes.parse_nodes("localhost,localhost", RunConfig("resnet50", framework="tf"), {})
    args = nodes.agent_args(cfg, cfg.nodes[1], "127.0.0.1", 5000, "r")
    tf_config = json.loads(args[args.index("--tf-config") + 1])
    assert tf_config == {
        "cluster": {"worker": ["127.0.0.1:5000", "127.0.0.1:5001"]},
        "task": {"type": "worker", "index": 1},
    }


def test_cli_run_nodes_rejects_gpu_ids_and_launcher_options(jobenv: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["run", "resnet50", "--nodes", "a,b", "--gpu-ids", "0"])
    assert out.exit_code == 2 and "--gpu-ids is for one machine" in out.output
    out = runner.invoke(app, ["run", "resnet50", "--nodes", "a:x"])
    assert out.exit_code == 2 and "--nodes a: 'x' is not a GPU index" in out.output


@pytest.mark.slow
def test_real_torchrun_two_nodes_on_gloo(jobenv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torchrun's c10d rendezvous across two node launchers on loopback, DDP on gloo (the CPU)."""
    job_id = submit_real_run_on_two_local_nodes(jobenv, monkeypatch, steps=2)
    info = wait_for(job_id, jobenv, ("done", "failed", "crashed", "timeout"), timeout=260)
    assert info.state == "done", (info.reason, api.log_tail(job_id, jobenv, 40))
    [row] = Store(jobenv).runs(RunFilter(job_ids=[job_id]))
    assert row["result"]["scaling"]["world_size"] == 2  # one rank on each node
    assert len(row["result"]["nodes"]) == 2


@pytest.mark.slow
def test_two_nodes_on_this_machine_listen_on_loopback_only(
    jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--nodes localhost,localhost` used torchrun's c10d store, which listens on every interface;
    the nodes now meet through a file. Every process of the job is watched from outside."""
    psutil = pytest.importorskip("psutil")
    job_id = submit_real_run_on_two_local_nodes(jobenv, monkeypatch, steps=60)
    listening: set[tuple[str, int]] = set()
    deadline = time.monotonic() + 260
    while api.get_job(job_id, jobenv).state in ("queued", "running"):
        assert time.monotonic() < deadline, "the job did not end"
        events = api.get_job(job_id, jobenv).events_path
        for proc in psutil.process_iter():
            try:
                chain = [proc, *proc.parents()]
                if events and any(events in " ".join(p.cmdline()) for p in chain):
                    for conn in proc.net_connections(kind="inet"):
                        if conn.status == psutil.CONN_LISTEN:
                            listening.add((conn.laddr.ip, conn.laddr.port))
            except psutil.Error:
                continue
        time.sleep(0.05)
    info = api.get_job(job_id, jobenv)
    assert info.state == "done", (info.reason, api.log_tail(job_id, jobenv, 40))
    assert listening, "gloo's ranks listen while they run; the watch saw nothing"
    assert {ip for ip, _ in listening} <= {"127.0.0.1", "::1"}, listening


@pytest.mark.parametrize(
    ("extra", "multi"),
    [((), False), (("--nnodes", "2"), True), (("--nnodes=1",), False), (("--nnodes", "1:4"), True)],
)
def test_the_torch_launcher_knows_a_multi_node_run(extra: tuple[str, ...], multi: bool) -> None:
    from zbench.runners.torch.launch import multi_node

    assert multi_node(RunConfig("resnet50", extra=extra)) is multi


def test_nodes_all_on_this_machine_meet_through_a_file_not_a_tcp_store(tmp_path: Path) -> None:
    """torchrun's c10d store listens on every interface: `--nodes localhost,localhost` must not
    start it (issue 28, case 8); a remote node still gets torchrun's rendezvous."""
    store = tmp_path / "rendezvous.store"
    cfg = nodes.parse_nodes("localhost,127.0.0.1", CPU_RUN)
    launches = nodes.plan(cfg, "run-1", environ={}, store=store)
    for rank, launch in enumerate(launches):
        argv = " ".join(launch.argv)
        assert launch.via == "local" and "c10d" not in argv and "is_host" not in argv
        assert f"--node-rank {rank} --rdzv-backend file --rdzv-endpoint {store}" in argv
    mixed = nodes.parse_nodes("localhost,gpu2", CPU_RUN)
    [_, remote_node] = nodes.plan(
        mixed, "run-1", environ={"ZBENCH_RDZV_PORT": "29400"}, store=store
    )
    assert "--rdzv-backend c10d" in " ".join(remote_node.argv)


def test_the_torch_launcher_places_each_nodes_ranks_in_the_world(tmp_path: Path) -> None:
    from zbench.runners.torch.launch import ENV_INIT, file_rendezvous, rank_env

    store = tmp_path / "s"
    extra = (
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--rdzv-backend",
        "file",
        "--rdzv-endpoint",
        str(store),
    )
    assert file_rendezvous(RunConfig("resnet50", gpus=2, extra=extra)) == (2, 1, store)
    assert file_rendezvous(RunConfig("resnet50", extra=("--nnodes", "2"))) is None
    env = rank_env(3, 4, store, node=1, per_node=2)
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"]) == (
        "3",
        "1",
        "4",
        "2",
    )
    assert env["GROUP_RANK"] == "1" and env[ENV_INIT] == store.resolve().as_uri()
    assert env["GLOO_SOCKET_IFNAME"] == "lo"
