"""`zbench run -h`, `suite -h` and `demo NAME -h` list every option of their table, with help, type
and default; a bad value is one line and exit 2 before anything is queued."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.cli.table_options import demo_schemas
from zbench.contract.config import RUN_OPTIONS, RunConfig

CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)


def _flat(text: str) -> str:
    """Help as one line of words (the panels' borders and wrapping removed)."""
    return " ".join(text.replace("│", " ").split())


def test_every_run_config_field_is_one_option_with_help() -> None:
    fields = {f.name for f in dataclasses.fields(RunConfig)} - {"workload", "extra"}
    assert {o.name for o in RUN_OPTIONS} == fields
    assert all(o.help.strip() for o in RUN_OPTIONS)


def test_run_help_lists_every_option_with_help_type_and_default() -> None:
    result = CLI.invoke(app, ["run", "-h"])
    assert result.exit_code == 0
    text = _flat(result.output)
    for flag in (
        "--device",
        "--mode",
        "--precision",
        "--batch-size",
        "--image-size",
        "--steps",
        "--warmup",
        "--preset",
    ):
        assert f"{flag} " in text
    for opt in RUN_OPTIONS:
        assert opt.flag in text
        assert " ".join(opt.help.split()[:4]) in text, opt.name
    assert "--mode train|infer train: forward, backward" in text
    assert (
        "--batch-size <int> [x>=1] Samples per GPU per step (ResNet-50: 128). [default: the workload's]"
        in text
    )
    assert "--device cuda|cpu Where the workload runs" in text and "[default: cuda]" in text
    assert "python -m zbench.runners --help" not in text


def test_suite_help_lists_the_same_options() -> None:
    text = _flat(CLI.invoke(app, ["suite", "-h"]).output)
    assert "[[job]]" in text
    for opt in RUN_OPTIONS:
        assert f"{opt.name}" in text and " ".join(opt.help.split()[:4]) in text
    assert "channels_last true|false NHWC memory layout" in text  # a TOML key takes true/false


def test_demo_name_help_lists_that_demos_options() -> None:
    schemas = demo_schemas()
    snake = _flat(CLI.invoke(app, ["demo", "snake", "-h"]).output)
    for opt in schemas["snake"][1]:
        assert opt.flag in snake and " ".join(opt.help.split()[:3]) in snake
    assert "--board <int> [4<=x<=64] Board side, in cells. [default: 12]" in snake
    assert "tracking:" not in snake and "motion:" not in snake
    every = _flat(CLI.invoke(app, ["demo", "-h"]).output)
    assert all(f"{name}:" in every for name in schemas)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--batch-size", "0"],
            "zbench: run: --batch-size: must be at least 1, got 0 (see zbench run -h)",
        ),
        (
            ["--mode", "fly"],
            "zbench: run: --mode: must be one of train, infer, got 'fly' (see zbench run -h)",
        ),
        (
            ["stray"],
            "zbench: run: Got unexpected extra argument(s) (stray) (see zbench run -h)",
        ),
        # zbench's own check, named by its command as the others are (it read "zbench: --xla")
        (["--xla"], "zbench: run: --xla is TensorFlow's: PyTorch compiles with --compile"),
    ],
)
def test_bad_run_option_is_one_line_and_queues_nothing(args: list[str], line: str) -> None:
    result = CLI.invoke(app, ["run", "resnet50", "--device", "cpu", *args])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [line]
    assert "No jobs" in CLI.invoke(app, ["jobs", "--all"]).output


def test_run_help_reads_at_80_columns() -> None:
    """Typer's four-column panel left the workload options' help 17 characters wide at 80 columns
    (130 lines, choice lists cut); the two-column panel keeps every word, in about half of that."""
    out = CliRunner(env={"COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1"}).invoke(
        app, ["run", "-h"]
    )
    assert out.exit_code == 0
    lines = out.output.splitlines()
    assert max(map(len, lines)) <= 80 and len(lines) < 90, len(lines)
    assert "…" not in out.output
    text = _flat(out.output)
    assert "--channels-last or --no-channels-last NHWC memory layout" in text
    assert "--repeat, --repeats <int> [x>=1]" in text
    assert "Arguments after a lone --" in text.split("Workload options")[1]  # the epilog is last


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["snake", "--bogus"],
            "zbench: demo snake: No such option: --bogus (see zbench demo snake -h)",
        ),
        (
            ["snake", "--minutes", "abc"],
            "zbench: demo snake: --minutes: must be a number, got 'abc' (see zbench demo snake -h)",
        ),
        (["nosuch"], "zbench: demo: must be one of snake, motion, tracking, got 'nosuch'"),
    ],
)
def test_a_bad_demo_option_reads_as_every_commands_usage_error(args: list[str], line: str) -> None:
    """A demo's options said argparse's "unrecognized arguments: --bogus" and "argument
    --minutes: ...", where every other command says "demo snake: No such option: --bogus (see
    zbench demo snake -h)"; nothing is queued."""
    result = CLI.invoke(app, ["demo", *args])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [line]
    assert "No jobs" in CLI.invoke(app, ["jobs", "--all"]).output


def _command_paths() -> list[list[str]]:
    import typer.main

    paths: list[list[str]] = []

    def walk(cmd: object, path: list[str]) -> None:
        paths.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def test_every_help_screen_labels_types_one_way() -> None:
    """Typer's panels and the option tables' panels read alike: ``<float> [0.05<=x<=3600.0]``,
    ``<int>``, never Typer's ``<float range>`` or ``<list[int]>`` or the old ``int >=1``."""
    seen = set()
    for path in _command_paths():
        text = _flat(CLI.invoke(app, [*path, "-h"]).output)
        assert "Usage:" in text, path
        for wrong in (" range>", "<list[", "int >=", "float >", " text "):
            assert wrong not in text, (path, wrong)
        seen.update(
            w
            for w in ("<int> [x>=1]", "<float> [0.05<=x<=3600.0]", "<float> [0<x<=1440]")
            if w in text
        )
    assert seen == {"<int> [x>=1]", "<float> [0.05<=x<=3600.0]", "<float> [0<x<=1440]"}
    cancel = _flat(CLI.invoke(app, ["cancel", "-h"]).output)
    assert "job_ids... <int> The id of each job" in cancel
