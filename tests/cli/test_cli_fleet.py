"""The fleet's commands, ``jobs --hosts`` and ``export --hosts``: each host asked with the same
filters, ``--hosts all`` read from the config file, and what they say when no host has rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.settings import HostEntry

CLI = CliRunner(env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"})


def test_export_hosts_asks_every_host_with_the_same_filters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from zbench.cli import fleet
    from zbench.fleet.gather import Gathered

    asked: list[list[str]] = []

    def gather(hosts: list[HostEntry], args: list[str]) -> Gathered:
        asked.append(list(args))
        return Gathered(rows=[{"host": hosts[0].name, "workload": "resnet50"}])

    monkeypatch.setattr(fleet, "gather", gather)
    out = CLI.invoke(
        app,
        [
            "export",
            "--hosts",
            "a,b",
            "-f",
            "json",
            "--mode",
            "infer",
            "--gpus",
            "2",
            "--tag",
            "bios",
        ],
    )
    assert out.exit_code == 0, out.output
    assert asked == [["results", "--mode", "infer", "--gpus", "2", "--tag", "bios"]]


@pytest.mark.parametrize("command", [["export"], ["jobs"]])
def test_hosts_all_in_jobs_and_export_means_the_config_files_hosts(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``zbench --hosts all`` opened the config file's [hosts]; ``jobs --hosts all`` and ``export
    --hosts all`` asked ssh for a machine named "all". Each host is reached as [hosts] says."""
    from zbench.cli import fleet
    from zbench.fleet.gather import Gathered
    from zbench.settings import Config

    table = [HostEntry("gpu1", ssh="lab1", options="-p 2222"), HostEntry("gpu2")]
    monkeypatch.setattr(fleet, "load_config", lambda: Config(hosts=table))
    asked: list[list[HostEntry]] = []

    def gather(hosts: list[HostEntry], args: list[str]) -> Gathered:
        asked.append(list(hosts))
        return Gathered()

    monkeypatch.setattr(fleet, "gather", gather)
    out = CLI.invoke(app, [*command, "--hosts", "all"])
    assert out.exit_code == (1 if command == ["export"] else 0), out.output  # no rows gathered
    assert asked == [table]
    monkeypatch.setattr(fleet, "load_config", lambda: Config())
    out = CLI.invoke(app, [*command, "--hosts", "all"])
    assert out.exit_code == 2 and "--hosts all: the config file has no [hosts] table" in out.output


def test_hosts_that_answer_with_no_rows_are_said_by_name_not_as_an_empty_table_or_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``jobs --hosts`` printed an empty table's header; ``export --hosts`` wrote "[]" and
    exited 0 where ``export`` of no runs writes nothing and exits 1 (cli/outcome.py)."""
    from zbench.cli import fleet
    from zbench.fleet.gather import Gathered

    monkeypatch.setattr(
        fleet, "gather", lambda hosts, args: Gathered(errors={"b": "ssh: no route to host"})
    )
    out = CLI.invoke(app, ["jobs", "--hosts", "a,b,c", "--workload", "vgg16"])
    assert (out.exit_code, out.stdout, out.stderr) == (
        1,
        "No jobs match (workload vgg16) on a, c today (--all shows every job).\n",
        "zbench: jobs: b: ssh: no route to host\n",
    )
    written = tmp_path / "fleet.json"
    out = CLI.invoke(app, ["export", "--hosts", "a,b", "--mode", "infer", "-o", str(written)])
    assert (out.exit_code, out.stdout) == (1, "")
    assert out.stderr.splitlines() == [
        "zbench: export: b: ssh: no route to host",
        "zbench: export: a: no runs match (mode infer): nothing to export",
    ]
    assert not written.exists()
    out = CLI.invoke(app, ["export", "--hosts", "b"])  # no host answered: its error alone
    assert (out.exit_code, out.stdout, out.stderr) == (
        1,
        "",
        "zbench: export: b: ssh: no route to host\n",
    )


def test_export_hosts_refuses_samples_it_cannot_gather() -> None:
    out = CLI.invoke(app, ["export", "--hosts", "a,b", "--samples"])
    assert out.exit_code == 2
    assert (
        out.output == "zbench: export: --samples reads this machine's database: not with --hosts\n"
    )
