"""benchmarks/peak.py, peak_candidates.py and the start runs (benchmarks/reference/runs.py): what
they plan, how they report against the goals, and the bad input they refuse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peak
from benchmarks.reference import runs
from zbench.contract.config import parse_args

REPO = Path(__file__).resolve().parents[2]


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


def test_peak_budget_counts_rounds_per_process_and_the_start_runs_once() -> None:
    """--rounds 2 is two processes of a side, not two start sequences: with the call planned on an
    H200 (--rounds 2, --warm-runs 2, --budget 540) the start row must not be skipped as 560 s.
    A side's rounds take turns with the other sides', so the budget is checked per process."""
    a = peak.parser().parse_args(["--rounds", "2", "--warm-runs", "2"])
    start = peak.estimate(a, "start", "train", warm=False)
    assert start == peak.EST_S[("start", "train")] + 2 * peak.WARM_EST_S < 540
    assert peak.estimate(a, "compile", "train", warm=False) == peak.EST_S[("compile", "train")]
    assert peak.estimate(a, "zbench", "train", warm=True) == peak.WARM_EST_S
    assert (
        peak.estimate(a, "candidates", "train", warm=False) == peak.EST_S[("candidates", "train")]
    )


def test_peak_sides_at_one_shape_take_turns_and_a_cut_budget_keeps_the_rounds_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """zbench's rounds all ran before the reference's: a GPU that warmed up or clocked down over
    the call loaded the drift onto one side. Now they alternate; a new shape starts a new turn."""
    from benchmarks import peak

    order: list[tuple[str, int]] = []
    clock = [0.0]

    def fake(cmd: list[str], log: Path, timeout: float, env: dict[str, str]) -> dict:
        order.append((cmd[0], int(cmd[1])))
        clock[0] += 100.0  # every process takes 100 s of the budget
        return {"samples_per_s": 1.0}

    monkeypatch.setattr(peak.runs, "zbench", fake)
    monkeypatch.setattr(peak.runs, "reference", fake)
    monkeypatch.setattr(peak, "command", lambda a, side, mode, batch, gpus: [side, str(batch)])
    monkeypatch.setattr(peak.time, "perf_counter", lambda: clock[0])
    jobs = [("zbench", "train", 256), ("compile", "train", 256), ("zbench", "train", 384)]
    a = peak.parser().parse_args(["--rounds", "2", "--budget", "1000"])
    rows = peak.execute(a, jobs, 1, tmp_path)
    assert (
        order
        == [("zbench", 256), ("compile", 256), ("zbench", 256), ("compile", 256)]
        + [("zbench", 384)] * 2
    )
    assert [len(r["runs"]) for r in rows] == [2, 2, 2]
    # 250 s: zbench (180 s cold) fits once; its second round does not, the reference's (30 s) does
    order.clear()
    clock[0] = 0.0
    a = peak.parser().parse_args(["--rounds", "2", "--budget", "250"])
    rows = peak.execute(a, jobs[:2], 1, tmp_path)
    assert order == [("zbench", 256), ("compile", 256), ("compile", 256)]
    assert rows[0]["median"] == 1.0 and "rounds_cut" in rows[0] and "skipped" not in rows[0]
    peak.print_table(rows, peak.summarize(rows), 250.0)
    assert "zbench (rounds cut by the budget)" in capsys.readouterr().out
