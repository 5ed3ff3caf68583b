"""The fidelity and peak scripts: their reference models match zbench's, their zbench command lines
parse with the runner's own parser, bad input exits 2, and (slow) one CPU cell runs end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peak, runner_fidelity
from benchmarks.reference import runs
from zbench.contract.config import parse_args

REPO = Path(__file__).resolve().parents[2]


def _shapes(model: object) -> list[tuple[int, ...]]:
    return sorted(tuple(p.shape) for p in model.parameters())  # type: ignore[attr-defined]


@pytest.mark.parametrize("workload", ["unet2d", "unet3d"])
def test_reference_unets_have_zbench_layout(workload: str) -> None:
    pytest.importorskip("torch")
    from benchmarks.reference import models as ref
    from zbench.runners.torch.models import build_model

    ours = ref.build(workload, 64)
    theirs = build_model(workload, ref.NUM_CLASSES[workload], 64)
    assert _shapes(ours) == _shapes(theirs)
    assert sum(p.numel() for p in ours.parameters()) > 1_000_000


def test_every_planned_cell_parses_with_the_runner_parser_and_matches_the_reference() -> None:
    a = runner_fidelity.parser().parse_args([])
    cells = runner_fidelity.cells(a)
    assert len(cells) == 5 * 2 * 3 - len(runner_fidelity.SKIP)
    for cell in cells:
        cfg, _ = parse_args(cell.zbench_argv())
        ref = cell.reference_cmd()
        assert ref[2] == "--ref" and ref[ref.index("--workload") + 1] == cfg.workload
        for flag, value in (
            ("--batch-size", cfg.batch_size),
            ("--image-size", cfg.image_size),
            ("--steps", cfg.steps),
            ("--warmup", cfg.warmup),
            ("--precision", cfg.precision),
            ("--mode", cfg.mode),
            # Both sides time the same back-to-back windows and keep the median (the U-Net 2D tf32
            # inference cell compared zbench's median of 3 with the reference's first window).
            ("--windows", cfg.repeat),
        ):
            assert ref[ref.index(flag) + 1] == str(value), (cell.name, flag)
        assert ("--channels-last" in ref) == bool(cfg.channels_last)
        assert cfg.repeat == 3
        assert cell.estimate_s() > 0


def test_ddp_cells_run_one_and_two_gpus_under_torchrun() -> None:
    cells = runner_fidelity.cells(runner_fidelity.parser().parse_args(["--gpus", "2"]))
    assert [(c.workload, c.mode, c.precision, c.batch, c.gpus) for c in cells] == [
        ("resnet50", "train", "bf16", 256, 1),
        ("resnet50", "train", "bf16", 256, 2),
    ]
    assert parse_args(cells[1].zbench_argv())[0].gpus == 2
    ref = cells[1].reference_cmd()
    assert (
        ref[1:3] == ["-m", "torch.distributed.run"]
        and ref[ref.index("--nproc-per-node") + 1] == "2"
    )
    assert ref[ref.index("--nproc-per-node") + 2].endswith("reference/ddp.py")


def test_peak_plan_keeps_max_autotune_last_and_zbench_first_at_each_shape() -> None:
    a = peak.parser().parse_args([])
    jobs = peak.plan(a, gpus=2)
    # the start runs first, then zbench's row in their warm data folder, then the references
    assert jobs[:3] == [("start", "train", 256), ("zbench", "train", 256), ("eager", "train", 256)]
    # the references' kernel search first, then zbench's training, which reuses what it cached
    assert jobs[-3:] == [
        ("max-autotune", "train", 256),
        ("max-autotune", "infer", 512),
        ("zbench-max-autotune", "train", 256),
    ]
    assert ("zbench-2gpu", "train", 256) in jobs
    assert {(m, b) for _, m, b in jobs} == {
        ("train", 256),
        ("train", 384),
        ("infer", 512),
        ("infer", 1024),
    }
    cfg, _ = parse_args(peak.command(a, "zbench", "infer", 1024, 1))
    assert (cfg.preset, cfg.mode, cfg.batch_size) == ("max", "infer", 1024)


def test_peak_sides_run_part_of_the_plan_in_its_order() -> None:
    a = peak.parser().parse_args(
        ["--modes", "train", "--sides", "zbench-max-autotune,max-autotune"]
    )
    assert peak.plan(a, gpus=1) == [
        ("max-autotune", "train", 256),
        ("zbench-max-autotune", "train", 256),
    ]
    cfg, _ = parse_args(peak.command(a, "zbench-max-autotune", "train", 256, 1))
    assert (cfg.preset, cfg.compile_mode, cfg.graphs) == ("max", "max-autotune-no-cudagraphs", None)


def test_peak_rejects_an_unknown_side_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        peak.parser().parse_args(["--sides", "zbench,turbo"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("peak.py: ") and "unknown side turbo" in err and len(err.splitlines()) == 1
    )


def test_peak_sides_that_plan_nothing_are_refused_before_any_run() -> None:
    # zbench-2gpu is planned only with two GPUs; on one, --sides would run nothing and "pass".
    out = subprocess.run(
        [sys.executable, "benchmarks/peak.py", "--device", "cpu", "--sides", "zbench-2gpu"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("peak.py: --sides zbench-2gpu plans nothing")
    assert len(out.stderr.strip().splitlines()) == 1


def test_peak_modes_infer_plans_no_training_run() -> None:
    a = peak.parser().parse_args(["--modes", "infer", "--infer-batches", "512,1024"])
    jobs = peak.plan(a, gpus=2)
    assert {m for _, m, _ in jobs} == {"infer"}
    assert jobs[:2] == [("start", "infer", 512), ("zbench", "infer", 512)]
    assert not any(side.startswith("zbench-") for side, _, _ in jobs)  # no 2-GPU nor graphs rows


def test_peak_freezing_reference_is_planned_for_inference_only() -> None:
    # zbench's max inference freezes (batch-norm folded); the expert's reference must too.
    jobs = peak.plan(peak.parser().parse_args([]), gpus=1)
    assert ("compile-freeze", "infer", 512) in jobs and ("compile-freeze", "infer", 1024) in jobs
    assert not any(side == "compile-freeze" and m == "train" for side, m, _ in jobs)
    cpu = peak.plan(peak.parser().parse_args(["--device", "cpu"]), gpus=1)
    assert not any(side == "compile-freeze" for side, _, _ in cpu)


def test_fidelity_flags_a_round_whose_windows_spread_beyond_2_percent() -> None:
    # Recorded on the H200 (ResNet-50 train bf16, batch 128): a disturbed zbench round read
    # [4164, 3967, 4276] img/s and gave the cell 0.971; the clean rounds were 4346-4372.
    sides = {
        "zbench": [{"samples_per_s": 4164.0, "samples_per_s_all": [4164.0, 3967.0, 4276.0]}],
        "reference": [{"samples_per_s": 4288.0, "window_rates": [4304.0, 4278.0, 4288.0]}],
    }
    assert runner_fidelity.window_spread(sides["reference"][0]) == pytest.approx(26 / 4288)
    assert runner_fidelity.noisy_rounds(sides) == ["zbench round 1 (spread 7.4%)"]
    sides["zbench"][0]["samples_per_s_all"] = [4372.0, 4346.0, 4346.0]
    assert runner_fidelity.noisy_rounds(sides) == []
    assert runner_fidelity.window_spread({"samples_per_s": 1.0}) is None


@pytest.mark.parametrize("workload", ["unet2d", "unet3d"])
def test_reference_one_channel_input_is_channels_last_in_its_strides(workload: str) -> None:
    # As an expert converts it (`.to(memory_format=...)`); `.contiguous(...)` kept NCHW strides,
    # the same cost zbench had, so the fidelity benchmark read 0.997+ where a plain loop saw 0.966.
    torch = pytest.importorskip("torch")
    from benchmarks.reference import models

    fmt = models.memory_format(workload, True)
    x, _ = models.batch(workload, 32, 2, torch.device("cpu"), fmt)
    assert x.stride(1) == 1


def test_peak_plans_a_cold_and_a_warm_start_and_reports_them_against_the_goal() -> None:
    a = peak.parser().parse_args(["--modes", "train", "--sides", "start", "--start-batch", "256"])
    assert peak.plan(a, gpus=1) == [("start", "train", 256)]
    rows = [
        {
            "mode": "train",
            "batch": 256,
            "side": "start",
            "cold_s": 70.8,
            "warm_s": 20.6,
            "median": 6962.0,
        }
    ]
    goals = peak.summarize(rows)
    warm = goals["warm start train"]
    assert (warm["zbench"], warm["cold_s"], warm["goal"], warm["met"]) == (20.6, 70.8, 10.0, False)
    assert "train" not in goals  # a start run is not the peak measurement


def test_peak_warm_start_is_the_median_of_its_warm_runs_and_none_if_one_failed() -> None:
    cold = {"to_measure_s": 466.0, "samples_per_s": 7400.0}
    warms = [
        {"to_measure_s": 13.9, "samples_per_s": 7436.0},
        {"to_measure_s": 10.4, "samples_per_s": 7420.0},
        {"to_measure_s": 11.1, "samples_per_s": 7441.0},
    ]
    got = runs.start_figures(cold, warms)
    assert (got["cold_s"], got["warm_s"], got["median"]) == (466.0, 11.1, 7436.0)
    assert got["warm_runs_s"] == [13.9, 10.4, 11.1]
    failed = runs.start_figures(cold, [*warms[:2], {"error": "crash"}])
    assert failed["warm_s"] is None and failed["median"] is None  # no faster-reading median
    assert runs.start_figures({"error": "oom"}, [])["warm_s"] is None


def test_peak_prints_the_warm_runs_and_the_training_stretch_goal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [
        {
            "mode": "train",
            "batch": 256,
            "side": "start",
            "cold_s": 466.0,
            "warm_s": 11.1,
            "warm_runs_s": [13.9, 10.4, 11.1],
            "median": 7436.0,
            "runs": [],
        },
        {
            "mode": "train",
            "batch": 256,
            "side": "zbench",
            "median": 7480.0,
            "first_s": 7.0,
            "runs": [{}],
        },
        {
            "mode": "train",
            "batch": 256,
            "side": "compile",
            "median": 6800.0,
            "first_s": 50.0,
            "runs": [{}],
        },
    ]
    goals = peak.summarize(rows)
    assert (goals["train"]["goal"], goals["train"]["stretch"], goals["train"]["met"]) == (
        7500.0,
        7950.0,
        False,
    )
    peak.print_table(rows, goals, 600.0)
    out = capsys.readouterr().out
    assert "cold 466.0 / warm 11.1 s" in out
    assert "(warm runs: 13.9, 10.4, 11.1) vs 10.0 -> NOT met" in out
    assert "vs 7500.0 -> NOT met; stretch 7950: 0.941 of it" in out
    assert "1.100" in out  # zbench / compile, side by side


def test_peak_refuses_a_start_home_that_would_make_the_cold_start_warm(tmp_path: Path) -> None:
    (tmp_path / "train" / "cache").mkdir(parents=True)
    (tmp_path / "train" / "cache" / "entry").write_text("x")
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "peak.py"),
            "--modes",
            "train",
            "--sides",
            "start",
            "--start-home",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "already holds a train data folder: its cold start would start warm" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_candidates_table_keeps_failed_and_skipped_candidates() -> None:
    from benchmarks import peak_candidates as pc

    out = {
        "gpu": "H200",
        "torch": "2.11",
        "rows": [
            {
                "candidate": "graph",
                "mode": "train",
                "batch": 256,
                "note": "n",
                "first_s": 52.3,
                "ref": 6843.5,
                "cand": 6979.1,
                "ratio": 1.0198,
            },
            {"candidate": "cdt", "mode": "train", "error": "not ready by the budget"},
        ],
    }
    text = pc.table(out)
    assert "| graph | train | 256 | 6,844 | 6,979 | 1.020 | 52.3 | n |" in text
    assert "not ready by the budget" in text
    assert {c.mode for c in pc.CANDIDATES} == {"train", "infer"}
    assert pc.parser().parse_args(["--only", "graph,freeze"]).only == ("graph", "freeze")


def test_candidates_report_inductor_defaults_of_the_options_they_set() -> None:
    from benchmarks import peak_candidates as pc

    class Triton:
        tile_reductions = False

    class Config:
        triton = Triton
        coordinate_descent_tuning = False

    assert pc._config_value(Config, "triton.tile_reductions") is False
    assert pc._config_value(Config, "triton.no_such_option") == "missing"
    assert pc._config_value(Config, "triton") == repr(Triton)
    text = pc.table({"rows": [], "inductor_defaults": {"triton.tile_reductions": False}})
    assert text.endswith("inductor defaults: triton.tile_reductions=False")
    # Every reduction candidate sets coordinate-descent tuning and one option more.
    for name in ("cdt-tile", "cdt-nd", "cdt-multi", "cdt-coop", "cdt-nomix"):
        options = dict(pc.BY_NAME[name].inductor)
        assert options.pop("coordinate_descent_tuning") is True and len(options) == 1


def test_every_candidates_inductor_option_exists_in_this_torch() -> None:
    # A misspelt option would only fail on the GPU machine, after minutes of compiling beside it.
    import torch._inductor.config as inductor_config

    from benchmarks import peak_candidates as pc

    for c in pc.CANDIDATES:
        for key, _ in c.inductor:
            assert pc._config_value(inductor_config, key) != "missing", (c.name, key)


def test_peak_summary_survives_runs_skipped_for_the_budget() -> None:
    # On the H200 the budget skipped zbench's inference run; the summary then raised KeyError.
    rows = [
        {"mode": "train", "batch": 256, "side": "zbench", "median": 6826.0},
        {"mode": "train", "batch": 256, "side": "eager", "median": 4751.0},
        {"mode": "infer", "batch": 512, "side": "zbench", "skipped": "budget"},
        {"mode": "infer", "batch": 512, "side": "eager", "median": 16154.0},
    ]
    goals = peak.summarize(rows)
    assert goals["train"]["zbench"] == 6826.0 and not goals["train"]["met"]
    assert "infer" not in goals
    assert rows[1]["zbench_ratio"] == pytest.approx(6826.0 / 4751.0)
    assert rows[3]["zbench_ratio"] is None


@pytest.mark.parametrize(
    ("script", "args"),
    [
        ("runner_fidelity.py", ["--workloads", "resnet5"]),
        ("runner_fidelity.py", ["--rounds", "0"]),
        ("peak.py", ["--train-batches", "x"]),
        ("peak.py", ["--modes", "eval"]),
        ("peak.py", ["--warm-runs", "0"]),
        ("start_split.py", ["--out", "x.json", "--skip-cold"]),
        ("start_split.py", ["--out", "x.json", "--variants", "warm,hot"]),
        ("start_split.py", ["--out", "x.json", "--rounds", "0"]),
        ("peak_candidates.py", ["--only", "cdt,nope"]),
        ("embedder_shapes.py", ["--out", "x.json", "--variants", "as-is,padx"]),
        ("embedder_shapes.py", ["--out", "x.json", "--crops", "800,600"]),
        ("embedder_shapes.py", ["--out", "x.json", "--chunks", "0"]),
        ("tracking_demo_calls.py", ["--out", "x.json", "--videos", "on,maybe"]),
        ("tracking_demo_calls.py", ["--out", "x.json", "--frames", "0"]),
        ("tracking_demo_calls.py", ["--out", "x.json", "--pad", "-1"]),
    ],
)
def test_bad_input_is_one_line_and_status_2(script: str, args: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and script in out.stderr


@pytest.mark.slow
@pytest.mark.torch
def test_cpu_smoke_cell_runs_both_sides_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    out = tmp_path / "fidelity.json"
    argv = [
        "--device",
        "cpu",
        "--workloads",
        "resnet50",
        "--modes",
        "train",
        "--precisions",
        "fp32",
    ]
    argv += ["--rounds", "1", "--out", str(out), "--logs", str(tmp_path / "logs")]
    done = subprocess.run(
        [sys.executable, "benchmarks/runner_fidelity.py", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=540,
    )
    doc = json.loads(out.read_text())
    (cell,) = doc["cells"]
    z, ref = cell["rounds"]["zbench"][0], cell["rounds"]["reference"][0]
    assert z["samples"] == cell["batch"] * cell["steps"] == 2 * 2
    assert z["samples_per_s"] > 0 and ref["samples_per_s"] > 0
    assert cell["ratio"] == pytest.approx(z["samples_per_s"] / ref["samples_per_s"])
    assert done.returncode == (0 if cell["ratio"] >= 0.99 else 1)
    assert "ratio" in done.stdout and "resnet50" in done.stdout
    log = (tmp_path / "logs" / "resnet50-train-fp32-x1.log").read_text()
    assert "-m zbench.runners resnet50" in log and "--ref --workload resnet50" in log


@pytest.mark.slow
@pytest.mark.torch
def test_peak_cpu_smoke_puts_zbench_beside_each_reference(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    out = tmp_path / "peak.json"
    argv = ["--device", "cpu", "--train-batches", "2", "--infer-batches", "2", "--out", str(out)]
    # The GPU budget (360 s) skips the last rows on a busy 2-core machine (228 s when idle).
    argv += ["--budget", "900"]
    subprocess.run(
        [sys.executable, "benchmarks/peak.py", *argv], cwd=REPO, capture_output=True, timeout=1200
    )
    rows = json.loads(out.read_text())["rows"]
    assert [(r["side"], r["mode"]) for r in rows] == [
        *((side, mode) for mode in ("train", "infer") for side in ("zbench", "eager", "compile")),
        ("zbench-graphs-compile", "train"),  # zbench with --graphs compile, beside the others
    ]
    for r in rows:
        assert (r["median"] or 0) > 0, r
        if not r["side"].startswith("zbench"):
            zb = next(z for z in rows if z["side"] == "zbench" and z["mode"] == r["mode"])
            assert r["zbench_ratio"] == pytest.approx(zb["median"] / r["median"])


def test_benchmark_children_get_a_private_zbench_home_unless_one_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The peak runs on a bare H200 failed with "No module named 'platformdirs'": without
    # ZBENCH_HOME the runner asked platformdirs for the user's data folder.
    from benchmarks.reference import runs

    monkeypatch.delenv("ZBENCH_HOME", raising=False)
    home = Path(runs.child_env()["ZBENCH_HOME"])
    assert home.is_dir() and "zbench-bench-home-" in home.name
    assert runs.child_env()["ZBENCH_HOME"] == str(home)  # one per invocation, not per child
    monkeypatch.setenv("ZBENCH_HOME", "/srv/zbench-home")
    assert runs.child_env()["ZBENCH_HOME"] == "/srv/zbench-home"


def test_start_runs_write_and_reuse_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.reference import runs

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/elsewhere")
    home, env = runs.start_env("zbench-test-start-")
    assert "PYTHONDONTWRITEBYTECODE" not in env and "TORCHINDUCTOR_CACHE_DIR" not in env
    assert env["ZBENCH_HOME"] == home and env["PYTHONPYCACHEPREFIX"] == str(Path(home) / "pycache")
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")  # this test's own folder
    mod = tmp_path / "m.py"
    mod.write_text("X = 1\n")
    cmd = [sys.executable, "-c", "import m"]
    subprocess.run(cmd, cwd=tmp_path, env={**env, "PYTHONPATH": str(tmp_path)}, check=True)
    assert list((tmp_path / "pycache").rglob("m.*.pyc"))  # the next start reads it


def test_start_runs_can_start_again_in_a_data_folder_they_filled(tmp_path: Path) -> None:
    """peak.py --start-home and start_split.py --home: the same folder, its cache and bytecode."""
    from benchmarks.reference import runs

    folder = tmp_path / "starts" / "train"
    home, env = runs.start_env("zbench-test-start-", folder)
    assert home == str(folder) and folder.is_dir()
    assert env["ZBENCH_HOME"] == home and env["PYTHONPYCACHEPREFIX"] == str(folder / "pycache")
    assert runs.start_env("zbench-test-start-", folder)[1] == env  # again: the same folder


@pytest.mark.parametrize("filled", [True, False])
def test_peak_runs_zbench_warm_in_a_start_home_an_earlier_call_filled(
    filled: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `start` in the plan, zbench's row starts in --start-home's folder for its mode when
    an earlier call's start runs left it there; the references keep the run's own cold cache."""
    from benchmarks import peak

    if filled:
        (tmp_path / "train").mkdir()
    seen: dict[str, dict[str, str]] = {}

    def fake(side: str):  # a child that measures 1 img/s in the environment it was given
        def run(cmd: list[str], log: Path, timeout: float, env: dict[str, str]) -> dict:
            seen[side] = env
            return {"samples_per_s": 1.0}

        return run

    monkeypatch.setattr(peak.runs, "zbench", fake("zbench"))
    monkeypatch.setattr(peak.runs, "reference", fake("compile"))
    monkeypatch.setattr(peak, "command", lambda *args: ["true"])
    a = peak.parser().parse_args(["--start-home", str(tmp_path), "--budget", "1000"])
    rows = peak.execute(a, [("zbench", "train", 256), ("compile", "train", 256)], 1, tmp_path)
    assert [r["median"] for r in rows] == [1.0, 1.0]
    warm = seen["zbench"].get("ZBENCH_HOME") == str(tmp_path / "train")
    assert warm is filled
    assert seen["compile"].get("ZBENCH_HOME") != str(tmp_path / "train")
    assert "TORCHINDUCTOR_CACHE_DIR" in seen["compile"]
    assert ("TORCHINDUCTOR_CACHE_DIR" in seen["zbench"]) is not filled


@pytest.mark.torch
def test_embedder_shapes_pads_without_changing_a_feature(tmp_path: Path) -> None:
    """benchmarks/embedder_shapes.py on the CPU: both variants' passes are timed, and the padded
    embedder's features equal the plain one's (zeros appended to the crops, cut from the output)."""
    pytest.importorskip("torchvision")
    out = tmp_path / "e.json"
    argv = ["--device", "cpu", "--chunks", "2", "--crops", "9,13", "--variants", "as-is,pad8"]
    run = subprocess.run(
        [sys.executable, "benchmarks/embedder_shapes.py", *argv, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(out.read_text())["results"]
    assert [r["variant"] for r in got] == ["as-is", "pad8"]
    assert all(r[p]["total_ms"] > 0 for r in got for p in ("first", "second"))
    assert "max_feature_diff" not in got[0] and got[1]["max_feature_diff"] < 1e-5


@pytest.mark.slow
@pytest.mark.torch
def test_tracking_demo_calls_runs_the_demo_once_per_listed_video(tmp_path: Path) -> None:
    """benchmarks/tracking_demo_calls.py on the CPU: two calls in one process, the video's figures
    only where it was on, and the module measured named (another checkout's, with PYTHONPATH)."""
    pytest.importorskip("cv2")
    out = tmp_path / "c.json"
    argv = ["--device", "cpu", "--smoke", "--videos", "on,off", "--pad", "16", "--out", str(out)]
    run = subprocess.run(
        [sys.executable, "benchmarks/tracking_demo_calls.py", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "ZBENCH_HOME": str(tmp_path / "home")},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(out.read_text())
    assert [(c["call"], c["video"]) for c in got["calls"]] == [(1, "on"), (2, "off")]
    on, off = got["calls"]
    assert on["fps"]["end_to_end"] > 0 and on["output_fps"] > 0 and on["video_tail_s"] >= 0
    assert off["output_fps"] is None and off["video_wait_s"] is None
    assert got["code"]["module"].endswith("zbench/demos/tracking/demo.py")
    assert got["code"]["embedder_pad"] == 16
