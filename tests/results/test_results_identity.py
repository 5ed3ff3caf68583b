"""Unlike runs stay apart: tables, exports, charts, compare and scaling pair only like runs, and
every export carries its provenance and warnings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.rows import job_row, run_config, run_row
from zbench.cli import app
from zbench.results.aggregate import aggregate, compact_sample
from zbench.results.api import query_results
from zbench.results.charts import write_charts
from zbench.results.export import render
from zbench.results.identity import differences_text, scaling_groups, setup_id
from zbench.store import Store
from zbench.telemetry.snapshot import GpuProcess, GpuSnapshot, HostSnapshot, Snapshot

CLI = CliRunner()
T0 = 1_790_000_000.0
ENV = {"torch": "2.11.0", "cuda": "13.0", "cudnn": 91002, "driver": "580.1", "cpu_model": "Xeon X"}


def add(
    store: Store,
    n: int,
    *,
    gpus: int = 1,
    batch: int = 128,
    sps: float = 2000.0,
    precision: str = "fp32",
    env: dict[str, Any] | None = None,
    phases: dict[str, Any] | None = None,
    tag: str | None = None,
    suite: str | None = None,
    result: dict[str, Any] | None = None,
    **config: Any,
) -> int:
    cfg = (
        run_config(
            precision=precision,
            batch_size=batch,
            gpus=gpus,
            image_size=224,
            steps=100,
            warmup=20,
            device="cuda",
            data_source="synthetic-device",
            preset="review",
        )
        | config
    )
    [job] = store.add_jobs(
        [
            job_row(
                config=cfg,
                mode=cfg["mode"],
                state="done",
                created=T0 + (0 if suite else n),
                suite=suite,
                tag=tag,
            )
        ]
    )
    cpu = cfg["device"] == "cpu"
    run = store.add_run(
        run_row(
            job_id=job,
            mode=cfg["mode"],
            created=T0 + n,
            precision=precision,
            batch_size=batch,
            gpus=0 if cpu else gpus,
            gpu_name="CPU" if cpu else "NVIDIA H200",
            samples_per_s=sps,
            config=cfg,
            env={**ENV, **(env or {})},
            result={
                "samples_per_s": sps,
                "precision_detail": f"{precision} (TF32 off)",
                "data": cfg["data_source"],
                **(result or {}),
            },
        )
    )
    store.set_phase_aggregates(job, run, {"measure": phases or {"gpu_util_mean": 90.0}})
    return run


def test_review_row_and_a_quick_row_at_batch_2_never_make_a_scaling_figure(
    home: Path, tmp_path: Path
) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, gpus=1, batch=128, sps=2200.0)
    add(store, 2, gpus=2, batch=2, sps=25560.0)  # the `quick` suite's row
    rows = query_results(db)
    assert scaling_groups(rows) == []
    charts = write_charts(rows, tmp_path / "charts")
    assert "scaling.png" not in {c.path.name for c in charts}
    assert not any("efficiency" in c.description for c in charts)
    # A like 2-GPU run does pair, and only with its like 1-GPU run.
    add(store, 3, gpus=2, batch=128, sps=4180.0)
    [group] = scaling_groups(query_results(db))
    assert (group.base.batch_size, group.runs[2].batch_size) == (128, 128)
    assert round(group.efficiency(2), 2) == 0.95


def test_unlike_runs_keep_their_own_rows_and_setups(home: Path) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1)
    add(store, 2)  # a repeat of run 1: same setup
    add(store, 3, image_size=160)
    add(store, 4, env={"torch": "2.12.0"})
    add(store, 5, batch=256)
    add(store, 6, device="cpu", data_source="synthetic")
    rows = query_results(db)
    setups = [setup_id(r) for r in rows]
    assert setups[0] == setups[1] and len(set(setups)) == 5
    md = render(rows, "md")
    for r in rows:
        assert f"| {r.run_id} |" in md and setup_id(r) in md
    data = json.loads(render(rows, "json"))
    assert [item["provenance"]["setup"] for item in data["results"]] == setups
    assert data["results"][5]["gpu_name"] == "CPU"


def test_cpu_runs_of_one_and_of_two_processes_are_unlike(home: Path) -> None:
    """``--gpus 2 --device cpu`` runs two processes while the GPU count reads 0 for both: the two
    rows looked alike (one setup, compare called them alike) though one ran twice the work."""
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, device="cpu", data_source="synthetic")
    add(store, 2, gpus=2, device="cpu", data_source="synthetic")
    one, two = query_results(db)
    assert setup_id(one) != setup_id(two)
    assert differences_text(one, two) == "CPU processes 1 vs 2"
    refused = CLI.invoke(app, ["compare", "1", "2", "--db", str(db)])
    assert refused.exit_code == 2 and "CPU processes 1 vs 2" in refused.output


def test_cpu_runs_get_their_own_charts_titled_cpu(home: Path, tmp_path: Path) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1)
    add(store, 2, sps=40.0, device="cpu", data_source="synthetic")
    charts = write_charts(query_results(db), tmp_path / "charts")
    by_name = {c.path.name: c.description for c in charts}
    assert "NVIDIA H200" in by_name["throughput_train.png"]
    assert "CPU" in by_name["throughput_train_cpu.png"]
    assert "1 GPU" not in by_name["throughput_train_cpu.png"]
    assert not any(n.startswith(("gpu_", "scaling")) and "cpu" in n for n in by_name)


def test_newer_unlike_setup_is_named_not_merged_in_charts(home: Path, tmp_path: Path) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, batch=128, sps=2200.0)
    add(store, 2, batch=2, sps=300.0)
    add(store, 3, batch=128, sps=6000.0, mode="infer")
    add(store, 4, batch=2, sps=900.0, mode="infer")
    charts = write_charts(query_results(db), tmp_path / "charts")
    by_name = {c.path.name: c.description for c in charts}
    # Each chart names its own bars and leaves out only its own mode's older setups: both charts
    # said "not drawn: runs 1, 3", an inference run under the training chart.
    assert by_name["throughput_train.png"].endswith(
        "; bars from runs 2; other setups of the same model not drawn: runs 1"
    )
    assert by_name["throughput_infer.png"].endswith(
        "; bars from runs 4; other setups of the same model not drawn: runs 3"
    )


def test_compare_refuses_unlike_runs_unless_asked(home: Path) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, batch=128)
    add(store, 2, batch=2)
    add(store, 3, batch=128)
    refused = CLI.invoke(app, ["compare", "1", "2", "--db", str(db)])
    assert refused.exit_code == 2 and "batch per GPU 128 vs 2" in refused.output
    forced = CLI.invoke(app, ["compare", "1", "2", "--unlike", "--json", "--db", str(db)])
    assert forced.exit_code == 0
    assert json.loads(forced.output)["differences"][0]["field"] == "batch per GPU"
    assert CLI.invoke(app, ["compare", "1", "3", "--db", str(db)]).exit_code == 0


def test_differences_in_words_say_on_off_none_and_not_recorded(home: Path) -> None:
    """A switch reads on/off, a field set to nothing "none", a field an older run never stored
    "not recorded": never Python's True and None."""
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, channels_last=True, compile=False, compile_mode=None)
    add(store, 2, channels_last=False, compile=True, compile_mode="default")
    old = store.add_run(run_row(config={"workload": "resnet50"}, precision="fp32"))
    rows = {r.run_id: r for r in query_results(db)}
    assert differences_text(rows[1], rows[2]) == (
        "channels-last on vs off; compile off vs on; compile mode none vs default"
    )
    assert "preset review vs not recorded" in differences_text(rows[1], rows[old])
    assert differences_text(rows[1], rows[2], limit=1) == "channels-last on vs off"
    refused = CLI.invoke(app, ["compare", "1", "2", "--db", str(db)])
    assert "(channels-last on vs off; compile off vs on; compile mode none vs default)" in (
        refused.output
    )


def test_filters_publish_exactly_one_session(home: Path) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, tag="before")
    add(store, 2, suite="quick", batch=2)
    add(store, 3, suite="quick", batch=4)
    add(store, 4, tag="after")

    def runs(*args: str) -> list[int]:
        out = CLI.invoke(app, ["results", "--json", "--db", str(db), *args])
        assert out.exit_code == 0, out.output
        return sorted(item["run_id"] for item in json.loads(out.output)["results"])

    assert runs("--tag", "after") == [4]
    assert runs("--suite-run", "3") == [2, 3]
    assert runs("--job", "1", "--job", "4") == [1, 4]
    assert runs("--tag", "nobody") == []
    bad = CLI.invoke(app, ["export", "--suite-run", "99", "--db", str(db)])
    assert bad.exit_code == 2 and "no job 99" in bad.output


def _snap(t: float, throttle: tuple[str, ...], others: bool) -> Snapshot:
    mine = GpuProcess(pid=100, name="python")
    procs = (mine, *((GpuProcess(999, "other", used_memory_bytes=2**31),) if others else ()))
    gpu = GpuSnapshot(index=0, util_gpu=95.0, throttle_reasons=throttle, processes=procs)
    return Snapshot(t=t, host=HostSnapshot(cpu_pct=20.0), gpus=(gpu,))


def test_contention_and_throttling_in_recorded_samples_flag_the_row(home: Path) -> None:
    samples = [
        compact_sample(_snap(T0 + i, ("hw_thermal",) if i < 2 else (), i == 3), [0], 100, "measure")
        for i in range(4)
    ]
    phases = aggregate(samples)
    assert phases["measure"]["throttle_frac"] == {"hw_thermal": 0.5}
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, phases=phases["measure"])
    add(store, 2)
    add(store, 3, result={"window_rates": [2000.0, 2100.0, 2010.0]})
    md = render(query_results(db), "md")
    assert "⚠ run 1: other processes used its GPUs" in md
    assert "⚠ run 1: its GPU clocks were throttled (hw_thermal 50% of the window)" in md
    assert "⚠ run 2" not in md
    assert "⚠ run 3: its windows' rates spread 5.0%" in md
    assert "contention, throttled" in md and "| spread |" in md


def test_a_run_stopped_after_some_windows_is_flagged(home: Path) -> None:
    # A cancelled or timed-out job keeps its whole windows (runners.harness); the row says so.
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, result={"repeats": 2, "repeats_planned": 6})
    add(store, 2, result={"repeats": 3, "repeats_planned": None})
    md = render(query_results(db), "md")
    assert "⚠ run 1: it was stopped after 2 of its 6 measured windows (the figure is theirs)" in md
    assert "⚠ run 2" not in md and "| stopped |" in md


def test_foreign_processes_are_unknown_when_no_pid_is_ours() -> None:
    # In a container NVML reports host pids: none matches ours, so nothing is called contention.
    sample = compact_sample(_snap(T0, (), True), [0], 5, "measure")
    assert sample["gpus"][0]["others"] is None


def test_every_export_carries_the_provenance_block(home: Path) -> None:
    db = home / "zbench.db"
    add(Store(db), 1, result={"window_rates": [2000.0, 2001.0], "repeats": 2})
    rows = query_results(db)
    md = render(rows, "md")
    assert "**Machine**" in md and "cpu: Xeon X" in md and "driver: 580.1" in md
    assert "| 1 | " in md and "fp32 (TF32 off)" in md and "100 steps x 2, 20 warm-up" in md
    csv_text = render(rows, "csv")
    assert "Xeon X" in csv_text and "fp32 (TF32 off)" in csv_text
    data = json.loads(render(rows, "json"))
    assert data["provenance"]["machines"][0]["runs"] == [1]
    assert data["results"][0]["provenance"]["spread_pct"] < 0.1


def test_published_figures_only_where_precision_and_data_compare(home: Path) -> None:
    db = home / "zbench.db"
    store = Store(db)
    add(store, 1, precision="fp32")  # H200's published "FP32" is TF32
    add(store, 2, precision="tf32")
    add(store, 3, precision="tf32", data="/data/imagenet", data_source="host")
    md = render(query_results(db), "md")
    lines: dict[int, str] = {}
    for line in md.splitlines():  # the first table's rows (the details table repeats run ids)
        first = line.split("|")[1].strip() if line.startswith("| ") else ""
        if first.isdigit():
            lines.setdefault(int(first), line)
    assert "not comparable" in lines[1] and "(TF32, H200)" in lines[2]
    assert "not comparable" in lines[3]
    assert "run 1: H200" in md and "published as TF32, this run is FP32" in md
    assert "published with synthetic data, this run used real data" in md
