"""`zbench probe` as a job: submitted to the one supervisor, listed with the jobs, its figures
stored as a run that reports read (and plain result tables leave out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.rows import job_row
from zbench.cli import app
from zbench.jobs import api
from zbench.results.api import Filters, query_results
from zbench.results.selection import select
from zbench.store import Store

FAKE_PROBE = Path(__file__).with_name("fake_probe_runner.py")


@pytest.fixture
def cli(jobenv: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("ZBENCH_PROBE_RUNNER_MODULE", str(FAKE_PROBE))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # what the supervisor may hand out
    monkeypatch.setenv("ZBENCH_PROBE_P2P_SECONDS", "0.1")
    return CliRunner(env={"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"})


def test_probe_runs_as_a_job_and_stores_its_figures(cli: CliRunner, jobenv: Path) -> None:
    res = cli.invoke(app, ["probe", "--gpu-ids", "1", "--quick", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    # The runner counts its one GPU as 0; the figures name the machine's GPU 1.
    assert [(r["name"], r["gpu"]) for r in out["rows"]] == [
        ("matmul bf16", 1),
        ("device memory copy", 1),
    ]
    [job] = api.list_jobs(jobenv)
    assert (job.id, job.workload, job.mode, job.state) == (out["job_id"], "probe", "probe", "done")
    assert job.gpu_ids == (1,) and job.run_id == out["run_id"]
    run = Store(jobenv).get_run(out["run_id"])
    assert run is not None and run["workload"] == "probe" and run["gpus"] == 1
    assert run["config"]["quick"] is True and run["result"]["rows"] == out["rows"]
    assert [t["test"] for t in run["result"]["tests"]] == ["matmul", "memcpy"]
    assert Store(jobenv).samples(job.id)  # the supervisor sampled it like any job
    assert query_results(jobenv) == []  # not a benchmark row
    assert [r.run_id for r in select(jobenv, Filters()).probes] == [out["run_id"]]


def test_probe_takes_every_offered_gpu_and_names_the_copy(cli: CliRunner, jobenv: Path) -> None:
    res = cli.invoke(app, ["probe", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    assert [r["gpu"] for r in rows] == [0, 0, 1, 1, 0]
    p2p = rows[-1]
    assert p2p["name"] == "GPU 0 -> GPU 1" and p2p["value"] == pytest.approx(300)
    assert "nvlink_tx_gb_s" in p2p and p2p["peak"] is None  # host-only telemetry: no peaks
    assert api.list_jobs(jobenv)[0].gpu_ids == (0, 1)


def test_a_failing_probe_is_one_line_and_a_failed_job(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PROBE_FAIL", "1")
    res = cli.invoke(app, ["probe"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines()[-1] == "zbench: probe: PyTorch sees no CUDA GPU"
    [job] = api.list_jobs(jobenv)
    assert job.state == "failed" and job.run_id is None


def test_a_gpu_the_machine_does_not_offer_is_exit_2(cli: CliRunner, jobenv: Path) -> None:
    res = cli.invoke(app, ["probe", "--gpu-ids", "7"])
    assert res.exit_code == 2
    assert res.output == "zbench: probe: --gpu-ids: no GPU 7 on this machine (it offers GPUs 0,1)\n"
    assert not jobenv.exists() or api.list_jobs(jobenv) == []


def test_a_machine_without_gpus_is_one_line_and_no_job(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 1 before: asking GPU work of a machine with none is bad input (2), as for `zbench run`;
    GPUs named by index are the ones the machine lacks."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    for args, says in (
        (
            ["probe"],
            "no GPU on this machine (CUDA_VISIBLE_DEVICES='' hides every GPU): "
            "the probe measures GPUs",
        ),
        (
            ["probe", "--gpu-ids", "0"],
            (
                "--gpu-ids: no GPU 0 on this machine"
                " (it offers no GPU: CUDA_VISIBLE_DEVICES='' hides every GPU)"
            ),
        ),
    ):
        res = cli.invoke(app, args)
        assert res.exit_code == 2
        assert res.output == f"zbench: probe: {says}\n"
    assert not jobenv.exists() or api.list_jobs(jobenv) == []


def test_a_probe_whose_supervisor_died_keeps_its_figures(tmp_path: Path) -> None:
    from zbench.contract.probe_options import ProbeConfig
    from zbench.contract.protocol import EventWriter
    from zbench.jobs.records import stored_result

    events = tmp_path / "events.jsonl"
    with EventWriter(str(events)) as w:
        w.emit("start", config={}, env={"gpus": ["Fake GPU"]})
        w.phase("measure")
        w.emit("result", test="matmul", dtype="fp16", gpu=0, tflops=10.0)
        w.emit("result", test="memcpy", gpu=0, bytes_s=1e12)
    store = Store(tmp_path / "z.db")
    [jid] = store.add_jobs(
        [
            job_row(
                workload="probe",
                mode="probe",
                config=ProbeConfig().as_dict(),
                kind="probe",
                state="lost",
                gpu_ids=[3],
                events_path=str(events),
            )
        ]
    )
    run_id = stored_result(store, store.get_job(jid) or {})
    run = store.get_run(run_id or 0)
    assert run is not None and run["workload"] == "probe"
    assert [(r["name"], r["gpu"]) for r in run["result"]["rows"]] == [
        ("matmul fp16", 3),
        ("device memory copy", 3),
    ]
