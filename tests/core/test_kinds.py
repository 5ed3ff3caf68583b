"""The kinds table drives behaviour: the runner a job starts, its stored row, where results show it,
and the TUI's view; events come back typed at one read point."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from tests.rows import run_row
from zbench.contract import events, kinds
from zbench.contract.config import RunConfig
from zbench.contract.demo_options import DemoConfig
from zbench.contract.probe_options import ProbeConfig
from zbench.jobs import records
from zbench.jobs.nodes import Node, NodesConfig
from zbench.jobs.runjob import command_for
from zbench.results.api import Filters, query_results
from zbench.results.selection import Selection, select
from zbench.store import Store

CONFIGS = {
    kinds.BENCHMARK: RunConfig("resnet50", batch_size=8, device="cpu"),
    kinds.DEMO: DemoConfig.of("snake", board=8, device="cpu"),
    kinds.PROBE: ProbeConfig(quick=True),
    kinds.NODES: NodesConfig(RunConfig("resnet50"), (Node(0, "localhost"), Node(1, "localhost"))),
}


def test_every_kind_has_a_config_class_a_builder_and_a_results_section() -> None:
    assert set(CONFIGS) == set(kinds.KINDS)
    for name, kind in kinds.KINDS.items():
        config = CONFIGS[name]
        assert isinstance(config, kind.config_class()) and kinds.of_config(config) is kind
        assert kinds.of_dict(config.as_dict()) is kind  # a stored config names its kind
        assert kind.record in records.BUILDERS
        assert kind.section in {f.name for f in dataclasses.fields(Selection)}


@pytest.mark.parametrize("name", sorted(kinds.KINDS))
def test_the_runner_command_is_the_kinds_runner_and_its_configs_options(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = kinds.KINDS[name]
    if kind.runner_env:
        monkeypatch.delenv(kind.runner_env, raising=False)
    config = CONFIGS[name]
    cmd = command_for(name, config.as_dict(), Path("ev.jsonl"))
    assert cmd[:3] == [sys.executable, "-m", kind.runner]
    assert cmd[cmd.index("--events") + 1] == "ev.jsonl"
    assert kind.config_from(config.as_dict()) == config  # what the runner is given round trips


def test_a_new_kind_row_changes_the_runner_command(monkeypatch: pytest.MonkeyPatch) -> None:
    row = dataclasses.replace(kinds.KINDS[kinds.PROBE], name="probe2", runner="my.probe")
    monkeypatch.setitem(kinds.KINDS, "probe2", row)
    cmd = command_for("probe2", ProbeConfig().as_dict(), Path("e"))
    assert cmd[:3] == [sys.executable, "-m", "my.probe"] and "--p2p-seconds" in cmd
    monkeypatch.setenv("ZBENCH_PROBE_RUNNER_MODULE", "/x/fake.py")  # the row's override
    assert command_for("probe2", ProbeConfig().as_dict(), Path("e"))[:2] == [
        sys.executable,
        "/x/fake.py",
    ]


def test_plain_result_queries_read_the_kinds_the_table_includes() -> None:
    assert kinds.result_kinds() == (kinds.BENCHMARK, kinds.NODES)
    assert kinds.PROBE in kinds.result_kinds(workload="probe")
    assert kinds.DEMO in kinds.result_kinds(framework="demo")
    assert kinds.DEMO not in kinds.result_kinds(framework="torch")
    assert kinds.KINDS[kinds.DEMO].view == "demo" and kinds.KINDS[kinds.BENCHMARK].view == "detail"


def _job(kind: str) -> dict[str, object]:
    config = CONFIGS[kind]
    return {
        "id": 1,
        "kind": kind,
        "config": config.as_dict(),
        "workload": config.workload,
        "framework": config.framework,
        "mode": config.mode,
    }


def test_each_kinds_stored_row(monkeypatch: pytest.MonkeyPatch) -> None:
    start = {"t": 1.0, "config": {"precision": "fp32"}, "env": {"gpus": ["G"]}}
    result = {"t": 2.0, "samples_per_s": 10.0, "batch_size": 8}
    for name in (kinds.BENCHMARK, kinds.DEMO, kinds.NODES):
        run = records.build_run(records.Measured(_job(name), (), start, [result]))
        assert run["kind"] == name and run["samples_per_s"] == 10.0 and run["job_id"] == 1
    figures = [
        {"t": 2.0, "test": "matmul", "dtype": "bf16", "gpu": 0, "n": 64, "tflops": 9.0},
        {"t": 3.0, "test": "memcpy", "gpu": 0, "bytes": 1, "bytes_s": 1e12},
    ]
    run = records.build_run(records.Measured(_job(kinds.PROBE), (0,), start, figures))
    assert run["kind"] == kinds.PROBE and len(run["result"]["tests"]) == 2  # every figure
    assert records.wants_peaks(_job(kinds.PROBE)) and not records.wants_peaks(_job("benchmark"))
    # a kind whose record is "figures" is built as a probe's, whatever its name
    monkeypatch.setitem(
        kinds.KINDS, "demo", dataclasses.replace(kinds.KINDS["demo"], record="figures")
    )
    assert (
        "tests"
        in records.build_run(records.Measured(_job(kinds.DEMO), (0,), start, figures))["result"]
    )


def test_results_show_each_kind_in_its_section(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    store = Store(db)
    for i, name in enumerate(CONFIGS):
        job = _job(name)
        store.add_run(
            run_row(
                job_id=i,
                created=float(i),
                workload=job["workload"],
                framework=job["framework"],
                mode=job["mode"],
                config=job["config"],
                kind=name,
            )
        )
    assert sorted(r.kind for r in query_results(db)) == ["benchmark", "nodes"]
    assert [r.kind for r in query_results(db, workload="probe")] == ["probe"]
    sel = select(db, Filters())
    assert [r.kind for r in sel.probes] == ["probe"] and [r.kind for r in sel.demos] == ["demo"]
    assert sorted(r.kind for r in sel.rows) == ["benchmark", "nodes"]


def test_events_are_read_back_typed(tmp_path: Path) -> None:
    from zbench.contract.protocol import EventWriter

    path = tmp_path / "ev.jsonl"
    with EventWriter(path) as w:
        w.emit("start", demo="snake", config={"board": 8}, environment={})  # a demo's own start
        w.phase("setup")
        w.progress(3, 10, samples_per_s=5.0, label="x")
        w.emit("result", demo="snake", best_score=8)
        w.emit("error", message="no kind given")
    start, phase, progress, result, error = events.read(path)
    assert isinstance(start, events.Unlisted) and start.type == "start"
    assert start.get("config") == {"board": 8} and start.t > 0
    assert isinstance(phase, events.PhaseEvent) and phase.phase == "setup" and phase.t > 0
    assert isinstance(progress, events.Progress) and progress.step == 3
    assert progress.get("label") == "x" and progress.get("samples_per_s") == 5.0
    assert result.type == "result" and result.as_record()["best_score"] == 8
    assert isinstance(error, events.Error) and (error.kind, error.message) == (
        "crash",
        "no kind given",
    )
