"""One filter set: the same option names and meanings on results, export, report, compare, plot
and demo results; one format flag; a GPU count and GPU indices never share a name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.rows import job_row, run_row
from zbench.cli import app
from zbench.cli.filters import FILTER_OPTIONS, filter_argv, read_filters
from zbench.results.api import Filters
from zbench.store import Store

CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})
FLAGS = [
    "--workload",
    "--framework",
    "--mode",
    "--precision",
    "--gpus",
    "--device",
    "--since",
    "--suite",
    "--suite-run",
    "--job",
    "--tag",
]
COMMANDS = [["results"], ["export"], ["report"], ["compare"], ["plot"], ["demo", "results"]]


def _options(args: list[str]) -> set[str]:
    out = CLI.invoke(app, [*args, "-h"]).output
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", out))


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_results_command_has_the_whole_filter_set(command: list[str]) -> None:
    assert set(FLAGS) <= _options(command)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_blank_tag_is_refused_as_run_refuses_to_give_one(command: list[str]) -> None:
    out = CLI.invoke(app, [*command, "--tag", " "])
    assert out.exit_code == 2 and "a tag needs a name" in out.output, out.output


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    "flag", ["--workload", "--framework", "--mode", "--precision", "--device", "--suite"]
)
def test_a_blank_filter_is_refused_not_read_as_no_filter(
    command: list[str], flag: str, tmp_path: Path
) -> None:
    """`results --workload ""` showed every run (`demo results` said "no such workload")."""
    db = str(tmp_path / "zbench.db")
    Store(db).add_run(run_row())
    args = [*command, "1", "2"] if command == ["compare"] else command
    out = CLI.invoke(app, [*args, flag, "", "--db", db])
    assert out.exit_code == 2, out.output
    [line] = out.output.splitlines()
    assert f"{flag}: needs a value, got ''" in line


@pytest.mark.parametrize("command", [*COMMANDS, ["jobs"]], ids=" ".join)
def test_a_one_value_filter_given_twice_is_refused_not_read_as_the_last(
    command: list[str], tmp_path: Path
) -> None:
    """`--workload resnet50 --workload vgg16` showed VGG16's runs alone (Click keeps the last
    value), as if ResNet-50 had not been asked for; the repeatable ones still add up."""
    db = str(tmp_path / "zbench.db")
    store = Store(db)
    store.add_run(run_row(workload="resnet50"))
    store.add_run(run_row(workload="vgg16"))
    args = [*command, "1", "2"] if command == ["compare"] else command
    if command in (["report"], ["plot"]):  # their default folder is the current one
        args = [*command, "-o", str(tmp_path / "out")]
    out = CLI.invoke(app, [*args, "--workload", "resnet50", "--workload", "vgg16", "--db", db])
    assert out.exit_code == 2, out.output
    [line] = out.output.splitlines()
    assert "--workload: given twice (resnet50, vgg16): give it once" in line
    once = CLI.invoke(app, [*args, "--workload", "vgg16", "--db", db])
    assert "given twice" not in once.output, once.output
    if command == ["export"]:
        json_out = CLI.invoke(app, [*args, "-f", "json", "--workload", "vgg16", "--db", db])
        assert [r["workload"] for r in json.loads(json_out.output)["results"]] == ["vgg16"]
        both = CLI.invoke(app, [*args, "-f", "json", "--run", "1", "--run", "2", "--db", db])
        assert len(json.loads(both.output)["results"]) == 2


def test_a_filters_metavar_names_one_value() -> None:
    out = CLI.invoke(app, ["results", "-h"]).output
    assert "list[" not in out and re.search(r"--workload +<str>", out), out


@pytest.mark.parametrize("command", [["export"], ["demo", "results"]], ids=" ".join)
def test_one_format_flag(command: list[str]) -> None:
    out = CLI.invoke(app, [*command, "-h"]).output
    assert re.search(r"--format\s+-f", out)


def test_a_gpu_count_and_gpu_indices_have_two_names() -> None:
    for command in (["monitor"], ["probe"]):
        found = _options(command)
        assert "--gpu-ids" in found and "--gpus" not in found
    assert {"--gpus", "--gpu-ids"} <= _options(["run"])  # a count to the runner, indices to the job
    help_of = {name: str(ann.__metadata__[0].help) for name, ann in FILTER_OPTIONS}
    assert "many GPUs" in help_of["gpus"]


def test_a_filters_help_lists_the_values_of_the_table_that_declares_them() -> None:
    """The help of --framework, --mode, --precision and --state was typed out by hand: `--state`
    listed five of the nine states ("..."), and a precision added to the contract would have been
    missing from it. Each now reads its table."""
    from zbench.cli.filters import STATE_OPTION
    from zbench.contract.config import FRAMEWORKS, MODES, PRECISIONS
    from zbench.jobs.states import JobState

    help_of = {name: str(ann.__metadata__[0].help) for name, ann in [*FILTER_OPTIONS, STATE_OPTION]}
    tables = {"framework": FRAMEWORKS, "mode": MODES, "precision": PRECISIONS}
    tables["state"] = tuple(str(s) for s in JobState)
    for name, values in tables.items():
        named = re.findall(r"[\w-]+", help_of[name].split(":", 1)[1].split("(")[0])
        assert [v for v in named if v != "or"] == list(values), (name, help_of[name])


def test_filters_travel_to_other_hosts_unchanged() -> None:
    given = Filters(
        workload="resnet50",
        mode="infer",
        precision="bf16",
        gpus=2,
        device="h200",
        since="2026-01-31",
        job_ids=[3, 4],
        suite_run=2,
        tag="bios",
        suite="review",
        run_ids=[5, 6],
    )
    root = typer.main.get_command(app)
    with root.make_context("zbench", []) as ctx:
        assert read_filters(filter_argv(given), ctx) == given


TYPO_COMMANDS = [
    ["results"],
    ["results", "--json"],
    ["export", "--format", "csv"],
    ["export", "--format", "csv", "--samples"],
    ["report", "--output", "{tmp}/r"],
    ["plot", "--output", "{tmp}/p"],
    ["demo", "results"],
]


@pytest.mark.parametrize("command", TYPO_COMMANDS, ids=" ".join)
@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--workload", "resnet5"),
        ("--framework", "pytorhc"),
        ("--mode", "inference"),
        ("--precision", "fp8"),
    ],
)
def test_a_name_no_table_knows_and_no_run_has_is_one_line_and_exit_2(
    command: list[str], flag: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    Store(tmp_path / "zbench.db").add_run(run_row())  # one stored run: the filter finds none
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    out = CLI.invoke(app, [*args, flag, value, "--db", str(tmp_path / "zbench.db")])
    assert out.exit_code == 2, out.output
    [line] = out.output.strip().splitlines()
    assert f"{flag}: must be one of " in line and line.endswith(f", got {value!r}")


@pytest.mark.parametrize("command", TYPO_COMMANDS, ids=" ".join)
def test_a_job_id_that_never_existed_is_one_line_and_exit_2_a_job_without_runs_is_empty(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    db = str(tmp_path / "zbench.db")
    [queued] = Store(db).add_jobs([job_row()])  # a job without a run
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    out = CLI.invoke(app, [*args, "--job", str(queued + 98), "--db", db])
    name = " ".join(a for a in command if not a.startswith(("-", "{")) and a != "csv")
    assert out.exit_code == 2, out.output
    assert out.output == (
        f"zbench: {name}: no job {queued + 98} (--job takes a job id; the Run column's numbers "
        "are --run)\n"
    )
    empty = CLI.invoke(app, [*args, "--job", str(queued), "--db", db])
    if command[0] in ("report", "plot", "export"):  # nothing to write is a failed command
        assert empty.exit_code == 1
        assert empty.output == (
            f"zbench: {name}: no runs match (jobs {queued}): nothing to {command[0]}\n"
        )
    else:
        assert empty.exit_code == 0, empty.output


@pytest.mark.parametrize("command", TYPO_COMMANDS, ids=" ".join)
@pytest.mark.parametrize("flag", ["--job", "--suite-run"])
def test_an_id_too_large_for_sqlite_is_no_job_not_a_traceback(
    command: list[str], flag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id past SQLite's 64-bit INTEGER raised OverflowError from deep in the store."""
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    db = str(tmp_path / "zbench.db")
    Store(db).add_jobs([job_row()])
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    huge = str(2**64)
    out = CLI.invoke(app, [*args, flag, huge, "--db", db])
    assert out.exit_code == 2, out.output
    [line] = out.output.strip().splitlines()
    name = " ".join(a for a in command if not a.startswith(("-", "{")) and a != "csv")
    assert line.startswith(f"zbench: {name}: no job {huge} ("), line


def test_compare_with_a_run_id_too_large_for_sqlite_says_no_such_run(tmp_path: Path) -> None:
    db = str(tmp_path / "zbench.db")
    Store(db).add_run(run_row())
    out = CLI.invoke(app, ["compare", str(2**64), "1", "--db", db])
    assert out.exit_code == 2 and out.output == f"zbench: compare: no run {2**64}\n", out.output


def test_a_known_name_without_runs_is_no_error_and_a_stored_old_name_is_known(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "zbench.db")
    Store(db).add_run(run_row(workload="resnet101"))  # a name an older zbench stored
    for workload, runs in (("vgg16", 0), ("snake", 0), ("probe", 0), ("resnet101", 1)):
        got = Filters(workload=workload).query(db)
        assert len(got) == runs
    with pytest.raises(ValueError, match=r"must be one of .*resnet101.*vgg16, got 'resnet5'"):
        Filters(workload="resnet5").query(db)
    # Every mode a demo's options can give, and a probe's, is known before any run has it.
    for mode in ("dqn-faithful", "animate", "bytetrack", "probe", "infer"):
        assert Filters(mode=mode).query(db) == []
    assert CLI.invoke(app, ["results", "--workload", "vgg16", "--db", db]).exit_code == 0


def test_demo_results_reads_format_and_db_as_export_does(tmp_path: Path) -> None:
    """`demo results -f CSV` was refused while `export -f CSV` writes CSV; its -h listed --db
    as `<str>`, "Results database.", where every other command says `<path>` and its default."""
    db = str(tmp_path / "zbench.db")
    Store(db)
    for cmd in (["export"], ["demo", "results"]):
        got = CLI.invoke(app, [*cmd, "-f", "CSV", "--db", db])
        assert got.exit_code == 1 and "results to export" in got.output, got.output
    db_line = {
        " ".join(cmd): next(
            x for x in CLI.invoke(app, [*cmd, "-h"]).output.splitlines() if "--db" in x
        )
        for cmd in (["export"], ["demo", "results"])
    }
    assert len({" ".join(line.split()) for line in db_line.values()}) == 1, db_line


def test_export_to_dash_is_standard_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "zbench.db")
    Store(db).add_run(run_row())
    out = CLI.invoke(app, ["export", "-f", "csv", "-o", "-", "--db", db])
    assert out.exit_code == 0 and out.output.startswith("workload,framework,mode,")
    assert not (tmp_path / "-").exists()  # it wrote a file named "-"


def test_an_empty_table_says_whether_the_store_is_empty_or_the_filters_matched_nothing(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "zbench.db")
    Store(db).add_run(run_row(workload="resnet50"))
    empty = str(tmp_path / "empty.db")
    Store(empty)  # a database with no runs (one that does not exist is refused: next test)
    cases = [
        (["results", "--db", empty], "No results yet. Run `zbench suite quick`"),
        (["results", "--workload", "vgg16", "--db", db], "No runs match (workload vgg16)."),
        (["demo", "results", "--db", empty], "No demo results yet."),
        (["demo", "results", "--workload", "snake", "--db", db], "No runs match (workload snake)."),
        (  # said only "No runs match (workload snake).", though the store held snake's runs
            ["results", "--workload", "snake", "--db", db],
            "No runs match (workload snake). snake is a demo: its runs are in "
            "`zbench demo results --workload snake`.",
        ),
    ]
    for args, first_line in cases:
        out = CLI.invoke(app, args)
        assert out.exit_code == 0 and out.output.startswith(first_line), (args, out.output)


def test_an_empty_export_or_plot_says_where_the_runs_named_are_as_the_table_does(
    tmp_path: Path,
) -> None:
    """`results --workload snake` pointed to `zbench demo results`, while `export` and `plot` with
    the same filter said only "no runs match"; `demo results --workload resnet50` did not say
    where a benchmark's runs are. The report shows every table: it names none."""
    db = str(tmp_path / "zbench.db")
    store = Store(db)
    store.add_run(run_row(workload="resnet50"))
    store.add_run(run_row(workload="snake", framework="demo", mode="ppo", kind="demo"))
    snake = "snake is a demo: its runs are in `zbench demo results --workload snake`."
    cases = [
        (["results"], 0, f"No runs match (workload snake). {snake}"),
        (
            ["export"],
            1,
            f"zbench: export: no runs match (workload snake): nothing to export. {snake}",
        ),
        (
            ["plot", "-o", str(tmp_path / "charts")],
            1,
            f"zbench: plot: no runs match (workload snake): nothing to plot. {snake}",
        ),
        (["export", "--framework", "demo"], 1, "Demo runs are in `zbench demo results`."),
    ]
    for args, code, said in cases:
        out = CLI.invoke(app, [*args, "--workload", "snake", "--db", db])
        assert out.exit_code == code and " ".join(out.output.split()).endswith(said), out.output
    benchmark = "Benchmark runs are in `zbench results`."
    for args, code, start in (
        ([], 0, "No runs match (workload resnet50)."),
        (
            ["-f", "csv"],
            1,
            "zbench: demo results: no runs match (workload resnet50): nothing to export.",
        ),
    ):
        out = CLI.invoke(app, ["demo", "results", *args, "--workload", "resnet50", "--db", db])
        assert (out.exit_code, out.output) == (code, f"{start} {benchmark}\n"), out.output
    out = CLI.invoke(app, ["report", "-o", str(tmp_path / "r"), "--workload", "vgg16", "--db", db])
    assert out.output == "zbench: report: no runs match (workload vgg16): nothing to report\n"


@pytest.mark.parametrize(
    "command", [*TYPO_COMMANDS, ["jobs"], ["cancel", "1"], ["compare", "1", "2"]]
)
def test_a_database_to_read_that_does_not_exist_is_refused_and_not_made(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mistyped --db (or $ZBENCH_DB) made an empty database there, with its folders, and the
    table said "No results yet" as if every run were gone."""
    monkeypatch.chdir(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    typo = tmp_path / "typo" / "zbench.db"
    out = CLI.invoke(app, [*args, "--db", str(typo)])
    assert out.exit_code == 2, out.output
    assert f"no database at {typo}" in out.output and len(out.output.splitlines()) == 1
    env = CLI.invoke(app, args, env={"ZBENCH_DB": str(typo)})
    assert env.exit_code == 2 and f"no database at {typo}" in env.output
    assert not (tmp_path / "typo").exists()


def test_run_selects_by_the_run_column_and_job_by_the_job(tmp_path: Path) -> None:
    # The table's Run column is a run id; --job takes a job id. A probe (or a run imported
    # without a job) makes them drift apart: `--job 11` for the row numbered 11 said "no job 11".
    db = str(tmp_path / "zbench.db")
    store = Store(db)
    store.add_run(run_row(workload="resnet50"))  # run 1, no job
    [job] = store.add_jobs([job_row(workload="vgg16")])
    store.add_run(run_row(workload="vgg16", job_id=job))  # run 2, job 1
    out = CLI.invoke(app, ["export", "-f", "json", "--run", "2", "--db", db])
    assert out.exit_code == 0, out.output
    assert [r["workload"] for r in json.loads(out.output)["results"]] == ["vgg16"]
    missing = CLI.invoke(app, ["results", "--run", "7", "--db", db])
    assert missing.exit_code == 2
    assert missing.output == (
        "zbench: results: no run 7 (--run takes a number from the Run column)\n"
    )
    job_for_run = CLI.invoke(app, ["results", "--job", "2", "--db", db])
    assert "--job takes a job id; the Run column's numbers are --run" in job_for_run.output


def test_run_of_another_table_says_which_command_shows_it(tmp_path: Path) -> None:
    db = str(tmp_path / "zbench.db")
    store = Store(db)
    store.add_run(run_row(workload="resnet50"))  # run 1: a benchmark
    store.add_run(run_row(workload="snake", framework="demo", mode="ppo", kind="demo"))  # run 2
    said = {
        cmd: CLI.invoke(app, [*cmd.split(), "--run", run, "--db", db])
        for cmd, run in (("results", "2"), ("demo results", "1"))
    }
    assert said["results"].exit_code == said["demo results"].exit_code == 2
    assert said["results"].output == (
        "zbench: results: run 2 is a demo run: `zbench demo results` shows it\n"
    )
    assert said["demo results"].output == (
        "zbench: demo results: run 1 is a benchmark run: `zbench results` shows it\n"
    )
    shown = CLI.invoke(app, ["demo", "results", "--run", "2", "-f", "json", "--db", db])
    assert shown.exit_code == 0 and '"demo": "snake"' in shown.output


def test_a_probe_run_is_no_row_of_results_export_plot_or_compare(tmp_path: Path) -> None:
    """`results --workload probe` printed the probe as a row of n/a (Precision DEFAULT), export
    wrote it without its figures, plot said it was no FP32 run, and `compare 2 1` said "no run
    2": the probe's figures are in `zbench report`."""
    db = str(tmp_path / "zbench.db")
    store = Store(db)
    store.add_run(run_row(workload="resnet50"))  # run 1: a benchmark
    probe = run_row(workload="probe", mode="probe", precision=None, batch_size=None, kind="probe")
    store.add_run({**probe, "samples_per_s": None, "result": {"rows": []}})  # run 2
    table = CLI.invoke(app, ["results", "--workload", "probe", "--db", db])
    assert table.exit_code == 0
    assert table.output == "No runs match (workload probe). Probe runs are in `zbench report`.\n"
    for cmd in (["export", "-f", "csv"], ["plot", "-o", str(tmp_path / "charts")]):
        out = CLI.invoke(app, [*cmd, "--workload", "probe", "--db", db])
        said = f"zbench: {cmd[0]}: no runs match"
        assert out.exit_code == 1 and out.output.startswith(said), out.output
    assert not (tmp_path / "charts").exists()
    for a, b in (("2", "1"), ("1", "2")):
        out = CLI.invoke(app, ["compare", a, b, "--db", db])
        assert out.exit_code == 2
        assert out.output == "zbench: compare: run 2 is a probe run: `zbench report` shows it\n"
