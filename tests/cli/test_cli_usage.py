"""Click's usage errors print like zbench's own: one line on stderr, exit 2; help has no `<bool>`
labels and no text eaten as Rich markup."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app, main
from zbench.cli.outcome import fail

CLI = CliRunner(env={"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"})


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    monkeypatch.delenv("ZBENCH_DB", raising=False)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["cancel", "abc"],
            # Typer's pydantic words ("Input should be a valid integer, unable to parse...") are
            # said as zbench's own checks say them.
            "zbench: cancel: job_ids: must be a whole number, got 'abc' (see zbench cancel -h)",
        ),
        (
            ["results", "--job", "abc"],
            "zbench: results: --job: must be a whole number, got 'abc' (see zbench results -h)",
        ),
        (
            ["monitor", "--interval", "0"],
            "zbench: monitor: --interval: must be at least 0.05, got 0 (see zbench monitor -h)",
        ),
        (  # infinity reached a timer and ended in an OverflowError traceback
            ["monitor", "--interval", "inf", "--count", "1"],
            "zbench: monitor: --interval: must be at most 3600, got inf (see zbench monitor -h)",
        ),
        (  # never SIGKILL: a runner ignoring SIGTERM kept its GPUs for ever
            ["cancel", "1", "--grace", "inf"],
            "zbench: cancel: --grace: must be at most 3600, got inf (see zbench cancel -h)",
        ),
        (  # NaN fails every bound: it was told "must be at most 3600"
            ["cancel", "1", "--grace", "nan"],
            "zbench: cancel: --grace: must be a finite number, got 'nan' (see zbench cancel -h)",
        ),
        (
            ["monitor", "--interval", "-NaN", "--count", "1"],
            "zbench: monitor: --interval: must be a finite number, got '-NaN' "
            "(see zbench monitor -h)",
        ),
        (
            ["results", "--gpus", "nan"],
            "zbench: results: --gpus: must be a whole number, got 'nan' (see zbench results -h)",
        ),
        (
            ["--interval", "inf"],
            "zbench: --interval: must be at most 3600, got inf (see zbench -h)",
        ),
        (["run"], "zbench: run: Missing argument 'workload' (see zbench run -h)"),
        (["nosuch"], "zbench: No such command 'nosuch' (see zbench -h)"),
        # Click's parser leaves no context for a missing value: the line named no command.
        (
            ["run", "resnet50", "--tag"],
            "zbench: run: Option '--tag' requires an argument (see zbench run -h)",
        ),
        (
            ["demo", "motion", "--play"],
            "zbench: demo: Option '--play' requires an argument (see zbench demo -h)",
        ),
        # zbench's own errors in these commands said "zbench: ..." without the command's name.
        (["cancel", "999"], "zbench: cancel: no job 999"),
        (["suite", "nosuch.toml"], "zbench: suite: nosuch.toml: no such file"),
        (
            ["cache", "frob"],
            "zbench: cache: action: must be one of show, clear, got 'frob' (see zbench cache -h)",
        ),
        (  # a quote is no host name's: the table was printed, then ssh refused it, exit 1
            ["jobs", "--hosts", "'gpu1'"],
            "zbench: jobs: --hosts wants HOST[:PORT],HOST..., got \"'gpu1'\": \"'gpu1'\" is not "
            "a host name (HOST, USER@HOST or HOST:PORT)",
        ),
        (["jobs", "--bogus"], "zbench: jobs: No such option: --bogus (see zbench jobs -h)"),
        # Click read a negative number as an option: "No such option: -1", as if mistyped.
        (
            ["cancel", "-1"],
            "zbench: cancel: an id is a positive number, got -1 (see zbench cancel -h)",
        ),
        (
            ["compare", "2", "-1"],
            "zbench: compare: an id is a positive number, got -1 (see zbench compare -h)",
        ),
        (
            ["results", "--job", "1", "-1"],
            "zbench: results: Got unexpected extra argument(s) (-1) (see zbench results -h)",
        ),
        (
            ["jobs", "cancel", "3"],
            "zbench: jobs: Got unexpected extra argument(s) (cancel 3) (see zbench jobs -h); "
            "did you mean `zbench cancel 3`?",
        ),
        (
            ["run", "resnet50", "--device", "cpu", "--tag", " "],
            "zbench: run: --tag: a tag needs a name, got ' ' (see zbench run -h)",
        ),
        (
            ["run", "resnet50", "--device", "cpu", "--tag", "nightly\nrun"],
            "zbench: run: --tag: a tag is one line of printable text, got "
            "'nightly\\nrun' (see zbench run -h)",
        ),
        (
            ["suite", "quick", "--tag", ""],
            "zbench: suite: --tag: a tag needs a name, got '' (see zbench suite -h)",
        ),
        (
            ["results", "foo"],
            "zbench: results: Got unexpected extra argument(s) (foo) (see zbench results -h)",
        ),
        (  # the dashboard's --db before a command was dropped: results read the default database
            ["--db", "elsewhere.db", "results"],
            "zbench: --db before a command is the dashboard's option; give it after the "
            "command: zbench results --db ... (see zbench -h)",
        ),
        (  # monitor showed the hardware, not the trace
            ["--replay", "t.jsonl", "monitor", "--once"],
            "zbench: --replay before a command is the dashboard's option; give it after the "
            "command: zbench monitor --replay ... (see zbench -h)",
        ),
        # A workload's or a demo's option given twice ran with the last value, as if the first
        # had not been typed; each reaches the table's parser, which refuses the second.
        (
            ["run", "resnet50", "--device", "cpu", "--steps", "1", "--steps=2"],
            "zbench: run: --steps: given twice (1, 2): give it once (see zbench run -h)",
        ),
        (
            ["run", "resnet50", "--device", "cpu", "--repeat", "1", "--repeats", "2"],
            "zbench: run: --repeat: given twice (1, 2): give it once (see zbench run -h)",
        ),
        (
            ["demo", "snake", "--device", "cpu", "--minutes", "1", "--minutes", "5"],
            "zbench: demo snake: --minutes: given twice (1.0, 5.0): give it once "
            "(see zbench demo snake -h)",
        ),
        (
            ["--interval", "5", "jobs"],
            "zbench: --interval before a command is the dashboard's option; `zbench jobs` takes "
            "no --interval (see zbench -h)",
        ),
    ],
)
def test_usage_errors_are_one_line_on_stderr_exit_2(args: list[str], line: str) -> None:
    result = CLI.invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [line]


def test_replay_or_db_beside_hosts_is_refused_before_the_fleet_view_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fleet view opened and the trace or database given was never read."""
    import zbench.tui.fleet_app

    opened: list[str] = []
    monkeypatch.setattr(zbench.tui.fleet_app, "run", lambda hosts, interval: opened.append(hosts))
    for option in ("--replay", "--db"):
        result = CLI.invoke(app, ["--hosts", "gpu1", option, "t.jsonl"])
        assert result.exit_code == 2
        assert result.stderr.splitlines() == [
            f"zbench: {option} cannot go with --hosts: the fleet view shows the hosts' own live "
            "state (see zbench -h)"
        ]
    assert opened == []


def test_zbench_db_in_the_environment_is_no_dashboard_option_given(tmp_path: Path) -> None:
    """$ZBENCH_DB fills the dashboard's --db too: only one typed before a command is refused."""
    from zbench.store import Store

    db = tmp_path / "z.db"
    Store(db).close()
    result = CLI.invoke(app, ["jobs"], env={"ZBENCH_DB": str(db)})
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["report", "-o", "", "-q"], "--output"),
        (["plot", "-o", " "], "--output"),
        (["export", "-o", ""], "--output"),
        (["results", "--db", ""], "--db"),
        (["run", "resnet50", "--device", "cpu", "--db", ""], "--db"),
        (["monitor", "--record", "", "--count", "1"], "--record"),
        (["monitor", "--replay", ""], "--replay"),
        (["--replay", ""], "--replay"),
        (["demo", "snake", "--play", ""], "--play"),
    ],
)
def test_a_blank_path_is_refused_not_read_as_this_folder(
    args: list[str], option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Path("")`` is the current folder: ``report -o "$OUT"`` with OUT unset wrote report.md
    and report.html there, and ``--db ""`` named a folder."""
    monkeypatch.chdir(tmp_path)
    before = set(tmp_path.iterdir())
    result = CLI.invoke(app, args)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert f": {option}: needs a file or folder name, got " in line
    assert set(tmp_path.iterdir()) == before


@pytest.mark.parametrize("command", [[], ["run"], ["suite"], ["results"], ["jobs"], ["demo"]])
def test_help_has_no_bool_labels(command: list[str]) -> None:
    result = CLI.invoke(app, [*command, "-h"])
    assert result.exit_code == 0
    assert "<bool>" not in result.output
    assert "Show this message and exit." in result.output


def test_help_text_is_not_read_as_markup() -> None:
    result = CLI.invoke(app, ["-h"])
    assert "(the config file's [hosts])." in " ".join(result.output.replace("│", " ").split())


def test_no_help_text_is_eaten_as_markup() -> None:
    """Every option's help prints as written: Rich markup finds no tag in it (escaped brackets
    print as brackets)."""
    import typer
    from rich.text import Text

    def commands(cmd: object) -> list[object]:
        subs = getattr(cmd, "commands", {}).values()
        return [cmd, *(c for s in subs for c in commands(s))]

    for cmd in commands(typer.main.get_command(app)):
        for param in getattr(cmd, "params", []):
            text = getattr(param, "help", None)
            if text:
                assert Text.from_markup(text).plain == text.replace("\\[", "["), (param.name, text)


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (None, "zbench: no such trace file: {path}"),
        (
            b"SQLite format 3\x00\xe2\x28\xa1",
            "zbench: {path} is not a zbench trace (no header line)",
        ),
        (  # a header and no sample opened an empty dashboard: "telemetry unavailable: ..."
            b'{"format": "zbench-trace", "version": 1}\n{"t": "now"}\n',
            "zbench: {path} holds no samples (1 unreadable line skipped)",
        ),
    ],
)
def test_a_replay_that_is_no_trace_is_one_line_before_the_dashboard_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes | None, line: str
) -> None:
    import zbench.tui.app

    opened: list[bool] = []
    monkeypatch.setattr(zbench.tui.app.ZbenchApp, "run", lambda self: opened.append(True))
    path = tmp_path / "zbench.db"
    if content is not None:
        path.write_bytes(content)
    result = CLI.invoke(app, ["--replay", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [line.format(path=path)]
    assert opened == []


def test_a_theme_the_config_file_names_that_does_not_exist_is_one_line_before_the_dashboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zbench.tui.app

    opened: list[bool] = []
    monkeypatch.setattr(zbench.tui.app.ZbenchApp, "run", lambda self: opened.append(True))
    config = tmp_path / "config.toml"
    monkeypatch.setenv("ZBENCH_CONFIG", str(config))
    config.write_text('[ui]\ntheme = "nordd"\n')
    result = CLI.invoke(app, [])
    assert result.exit_code == 2 and opened == []
    [line] = result.stderr.splitlines()
    assert line.startswith(f"zbench: {config}: [ui] theme: must be one of ")
    assert line.endswith(", got 'nordd'")
    assert "nord" in line
    config.write_text('[ui]\ntheme = "nord"\n')
    assert CLI.invoke(app, []).exit_code == 0 and opened == [True]


def test_the_fleet_view_checks_the_config_theme_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zbench.tui.fleet_app import FleetApp

    opened: list[bool] = []
    monkeypatch.setattr(FleetApp, "run", lambda self: opened.append(True))
    config = tmp_path / "config.toml"
    monkeypatch.setenv("ZBENCH_CONFIG", str(config))
    config.write_text('[ui]\ntheme = "nordd"\n')
    result = CLI.invoke(app, ["--hosts", "alpha"])
    assert result.exit_code == 2 and opened == []
    assert "[ui] theme: must be one of " in result.stderr


def test_probe_json_after_ctrl_c_names_the_job_that_runs_on(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`zbench probe --json` and Ctrl-C printed nothing on stdout: a script lost the job's id."""
    import json

    from zbench.cli import probe
    from zbench.jobs import probe_submit

    monkeypatch.setattr(probe_submit, "submit_probe", lambda *a: 41)
    monkeypatch.setattr(probe, "_follow", lambda job_id, quiet: False)  # Ctrl-C while following
    assert probe.run_probe(json_out=True) == 1
    out, errors = capsys.readouterr()
    assert json.loads(out) == {"job_id": 41}
    assert "job 41 keeps running" in errors
    assert probe.run_probe(json_out=False) == 1
    assert capsys.readouterr().out == ""  # the table's view says it on stderr only


def test_a_mistyped_option_is_never_told_of_a_hidden_one(tmp_path: Path) -> None:
    """`results --bogus` said "Possible options: --gpu, --gpus"; --gpu, an old name kept working,
    is in no -h."""
    cli = CliRunner(env={"COLUMNS": "200", "ZBENCH_HOME": str(tmp_path)})
    out = cli.invoke(app, ["results", "--bogus"])
    assert out.exit_code == 2 and "--gpu," not in out.output and "--gpus" in out.output
    assert "--gpu " not in cli.invoke(app, ["results", "-h"]).output  # hidden indeed
    assert cli.invoke(app, ["results", "--gpu", "h200"]).exit_code == 0  # and still taken


KNOWN = {"run", "resnet50", "demo", "snake", "--play", "x.pt", "--envs", "3", "4"}


@pytest.mark.parametrize(
    ("argv", "told"),
    [
        (["run", "resnet50", "--stepz", "3"], "--steps"),  # it was told of --help alone
        (["run", "resnet50", "--imagesize", "3"], "--image-size"),  # it was told of none
        (["run", "resnet50", "--batch", "3"], "--batch-size"),  # it was told of --detach alone
        (["demo", "snake", "--bord", "3"], "--board"),  # the demo's parser told of none
        (["demo", "snake", "--play", "x.pt", "--bord", "3"], "--board"),
        (["demo", "snake", "--minute", "3"], "--minutes"),  # argparse took it for --minutes
        (["demo", "snake", "--bord=3", "--envs", "4"], "--board"),  # named without its value
    ],
)
def test_a_mistyped_option_is_told_of_the_options_in_the_commands_own_tables(
    tmp_path: Path, argv: list[str], told: str
) -> None:
    """`zbench run`'s workload options and each demo's are listed in tables of their own, hidden
    from Click's: a mistyped one was told of --help or --detach, or of nothing."""
    cli = CliRunner(env={"COLUMNS": "200", "ZBENCH_HOME": str(tmp_path)})
    out = cli.invoke(app, argv)
    line = out.output.strip()
    assert out.exit_code == 2 and "\n" not in line, line
    mistyped = next(a.split("=")[0] for a in argv if a.split("=")[0] not in KNOWN)
    assert f"No such option: {mistyped} (Possible options: " in line
    assert told in line.split("(Possible options: ")[1].split(")")[0].split(", "), line


def test_help_builds_where_typer_has_no_display_type_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyproject allows Typer 0.12+: with 0.27 (no ``display_type_rich``) every command crashed
    at start, in the relabelling of Typer's own type names."""
    import typer.main
    from typer.core import TyperArgument, TyperOption

    for cls in (TyperOption, TyperArgument):
        for base in cls.__mro__:
            if "display_type_rich" in vars(base):
                monkeypatch.delattr(base, "display_type_rich")
    assert not hasattr(TyperOption, "display_type_rich")
    group = typer.main.get_command(app)
    assert "suite" in group.commands  # built: ZbenchGroup's __init__ relabels every parameter


def test_an_error_on_its_way_out_of_a_command_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A zbench error raised out of a command (a damaged database) reached ``cli.main`` after the
    command's contexts were gone, and said ``zbench: ...`` without the command's name; what is
    said after the command has ended is no command's."""
    bad = tmp_path / "bad.db"
    bad.write_text("not a database\n")
    for command in ("results", "jobs", "export"):
        monkeypatch.setattr(sys, "argv", ["zbench", command, "--db", str(bad)])
        with pytest.raises(SystemExit) as ended:
            main()
        assert ended.value.code == 2
        said = capsys.readouterr().err
        assert said.startswith(f"zbench: {command}: {bad}: not a usable zbench database"), said
    fail("later")
    assert capsys.readouterr().err == "zbench: later\n"
