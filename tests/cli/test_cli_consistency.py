"""The results commands end alike (``cli/outcome.py``): one rule for an empty selection, every error
as ``zbench: COMMAND: reason``, compare's filters checked as results' are, and demo results' options
made from the same definitions as results'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.results.conftest import fill
from tests.results.test_demo_report import demo_db
from zbench.cli import app
from zbench.cli.filters import _after_demo
from zbench.cli.outcome import fail
from zbench.store import Store

CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})

# (command, its name in errors, exit status of an empty selection): a listing answers 0, work that
# needs runs (a file, a figure, two runs to compare) fails with 1.
EMPTY = [
    (["results"], "results", 0),
    (["results", "--json"], "results", 0),
    (["demo", "results"], "demo results", 0),
    (["export"], "export", 1),
    (["export", "-f", "csv"], "export", 1),
    (["export", "-f", "json"], "export", 1),
    (["export", "--samples"], "export", 1),
    (["demo", "results", "-f", "md"], "demo results", 1),
    (["demo", "results", "-f", "csv"], "demo results", 1),
    (["demo", "results", "-f", "json"], "demo results", 1),
    (["report", "-o", "{tmp}/r"], "report", 1),
    (["plot", "-o", "{tmp}/p"], "plot", 1),
    (["compare", "1", "2"], "compare", 1),
]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    path = tmp_path / "zbench.db"
    fill(Store(path))  # ten benchmark runs: run 1 ResNet-50, PyTorch, training
    return str(path)


def _args(command: list[str], tmp_path: Path) -> list[str]:
    return [a.replace("{tmp}", str(tmp_path)) for a in command]


@pytest.mark.parametrize(("command", "name", "code"), EMPTY, ids=[" ".join(c[0]) for c in EMPTY])
def test_good_filters_that_select_nothing_end_by_the_one_rule(
    command: list[str], name: str, code: int, db: str, tmp_path: Path
) -> None:
    """`compare 1 2 --workload vgg16` exited 2, as for a typo, where every other command that
    needs runs says there are none with 1; `demo results --json` is a listing, but `zbench demo`
    handed it on as `-f json`."""
    none = ["--workload", "vgg16", "--mode", "infer"]  # VGG16 was trained, never inferred
    out = CLI.invoke(app, [*_args(command, tmp_path), *none, "--db", db])
    assert out.exit_code == code, out.output
    if code == 0:
        assert out.stderr == "", out.stderr
        return
    [line] = out.stderr.splitlines()
    assert out.stdout == "" and line.startswith(f"zbench: {name}: "), out.output
    assert "(workload vgg16; mode infer)" in line


def test_compare_of_a_run_the_filters_leave_out_is_exit_1_with_its_name(db: str) -> None:
    out = CLI.invoke(app, ["compare", "1", "2", "--workload", "vgg16", "--db", db])
    assert (out.exit_code, out.stderr) == (
        1,
        "zbench: compare: run 1 is not one the filters select (workload vgg16)\n",
    )


def test_demo_results_json_of_no_runs_is_an_empty_document_as_results_json_is(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`results --json` of no runs is a document of none and exit 0 (`export --hosts` reads every
    host's so); `demo results --json` said "nothing to export", exit 1."""
    from zbench.cli.demos import show_results

    assert show_results(None, json_out=True, db=db) == 0
    assert json.loads(capsys.readouterr().out) == {"demo_results": []}
    assert show_results("csv", json_out=True, db=db) == 2  # two formats asked for
    assert (
        capsys.readouterr().err == "zbench: --json and --format csv ask for two formats: give one\n"
    )
    results = CLI.invoke(app, ["results", "--json", "--mode", "ppo", "--db", db])
    assert results.exit_code == 0 and json.loads(results.stdout)["results"] == []


def test_demo_results_json_of_no_runs_exits_0_on_the_command_line(db: str) -> None:
    out = CLI.invoke(app, ["demo", "results", "--json", "--db", db])
    assert out.exit_code == 0 and json.loads(out.stdout) == {"demo_results": []}, out.output


# --- every error after the command's name ----------------------------------------------------

TYPO = [
    (["results"], "results"),
    (["results", "--json"], "results"),
    (["export", "-f", "csv"], "export"),
    (["export", "--samples"], "export"),
    (["report", "-o", "{tmp}/r"], "report"),
    (["plot", "-o", "{tmp}/p"], "plot"),
    (["demo", "results"], "demo results"),
    (["demo", "results", "-f", "csv"], "demo results"),
    (["compare", "1", "2"], "compare"),
]


@pytest.mark.parametrize(("command", "name"), TYPO, ids=[" ".join(c[0]) for c in TYPO])
def test_a_filter_typo_is_said_after_the_commands_name_as_click_says_a_bad_value(
    command: list[str], name: str, db: str, tmp_path: Path
) -> None:
    """A typo read "zbench: --workload: must be one of ...", a blank value "zbench: results:
    --workload: needs a value ...": the command's name is said first in both."""
    args = _args(command, tmp_path)
    typo = CLI.invoke(app, [*args, "--workload", "resnet5", "--db", db])
    blank = CLI.invoke(app, [*args, "--workload", " ", "--db", db])
    assert typo.exit_code == blank.exit_code == 2
    assert typo.stdout == "" and typo.stderr.startswith(
        f"zbench: {name}: --workload: must be one of fasterrcnn, motion, "
    )
    assert typo.stderr.endswith(", got 'resnet5'\n") and len(typo.stderr.splitlines()) == 1
    assert blank.stderr.startswith(f"zbench: {name}: --workload: needs a value")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["results", "--run", "99"], "results: no run 99 (--run takes a number from the Run"),
        (["export", "--job", "99"], "export: no job 99 (--job takes a job id;"),
        (["export", "-f", "xls"], "export: --format: must be one of md, csv, json, got 'xls'"),
        (["demo", "results", "-f", "xls"], "demo results: --format: must be one of md, csv,"),
        (["plot", "-o", "{tmp}/c.png"], "plot: --output takes a folder (the PNG charts go in"),
        (["report", "-o", "{tmp}/r.md"], "report: --output takes a folder (report.md, "),
        (["compare", "1", "99"], "compare: no run 99"),
        (["compare", "1", "2", "--suite", "quick"], "compare: --suite selects many runs, "),
        (["export", "--hosts", "a", "--samples"], "export: --samples reads this machine's"),
    ],
)
def test_every_results_error_reads_zbench_command_reason(
    argv: list[str], said: str, db: str, tmp_path: Path
) -> None:
    out = CLI.invoke(app, [*_args(argv, tmp_path), "--db", db])
    assert out.exit_code == 2 and out.stdout == "", out.output
    [line] = out.stderr.splitlines()
    assert line.startswith(f"zbench: {said}"), line


def test_fail_outside_a_command_says_zbench_alone(capsys: pytest.CaptureFixture[str]) -> None:
    assert fail("no run 3") == 2 and fail("nothing to export", 1) == 1
    assert capsys.readouterr().err == "zbench: no run 3\nzbench: nothing to export\n"


# --- compare's filters are results' ------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--workload", "resnet5"), ("--framework", "pytorchh"), ("--mode", "inference")],
)
def test_compare_says_a_filter_typo_as_results_does(flag: str, value: str, db: str) -> None:
    """compare said "run 1 is not one the filters select (framework pytorchh)" where results
    named the typo and what the filter takes."""
    results = CLI.invoke(app, ["results", flag, value, "--db", db])
    compare = CLI.invoke(app, ["compare", "1", "2", flag, value, "--db", db])
    assert results.exit_code == compare.exit_code == 2
    reason = results.stderr.removeprefix("zbench: results: ")
    assert reason.startswith(f"{flag}: must be one of ")
    assert compare.stderr == f"zbench: compare: {reason}"


def test_compare_checks_its_filters_before_its_runs(db: str) -> None:
    out = CLI.invoke(app, ["compare", "1", "99", "--job", "99", "--db", db])
    assert out.exit_code == 2
    assert out.stderr.startswith("zbench: compare: no job 99 (--job takes a job id;")


# --- demo results takes results' options -------------------------------------------------------


def _param(command: typer.core.TyperCommand, name: str) -> tuple[object, ...]:
    [param] = [p for p in command.params if p.name == name]
    return (param.opts, param.help, param.envvar, param.callback is not None)


@pytest.mark.parametrize("name", ["json_out", "db"])
def test_demo_results_options_are_results_own(name: str) -> None:
    """`demo results -h` said "--json  JSON, as -f json." and took --db without the check that
    results' --db makes (a database to read must exist)."""
    results = typer.main.get_command(app).commands["results"]  # type: ignore[attr-defined]
    demo = typer.main.get_command(_after_demo)
    assert _param(demo, name) == _param(results, name)


@pytest.mark.parametrize("fmt", ["xls", ""])  # a blank one: demo results printed Markdown
def test_a_bad_format_reads_the_same_on_export_and_demo_results(tmp_path: Path, fmt: str) -> None:
    db = str(tmp_path / "zbench.db")
    Store(db)  # a database to read: a --db that does not exist is refused first
    lines = {
        " ".join(cmd): CLI.invoke(app, [*cmd, "--format", fmt, "--db", db])
        for cmd in (["export"], ["demo", "results"])
    }
    assert {r.exit_code for r in lines.values()} == {2}
    for name, got in lines.items():
        assert (
            got.output == f"zbench: {name}: --format: must be one of md, csv, json, got {fmt!r}\n"
        )


def test_demo_results_format_says_what_it_writes_without_one() -> None:
    out = CLI.invoke(app, ["demo", "results", "-h"])
    text = " ".join(out.output.split())
    assert "md, csv or json (default: the table, fitted to the terminal)." in text


def test_demo_results_tables_show_every_column_when_wide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo tables said "--wide shows all" at a narrow width, and demo results had no way to."""
    from zbench.cli.demos import show_results

    monkeypatch.setenv("COLUMNS", "60")
    db = demo_db(tmp_path / "d.db")
    assert show_results(None, db=db) == 0
    assert "--wide shows all" in capsys.readouterr().out
    assert show_results(None, db=db, wide=True) == 0
    wide = capsys.readouterr().out
    assert "not shown at this width" not in wide and "Beat 8 s" in wide


def test_demo_results_takes_wide_on_the_command_line(tmp_path: Path) -> None:
    db = str(demo_db(tmp_path / "d.db"))
    out = CLI.invoke(app, ["demo", "results", "--wide", "--db", db])
    assert out.exit_code == 0 and "not shown at this width" not in out.output, out.output
