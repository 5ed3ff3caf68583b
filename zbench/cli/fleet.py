"""``zbench jobs --hosts`` and ``zbench export --hosts``: every host's rows, each with its machine.

Exit status: 0 every host answered, 1 some host did not (its rows are missing; stderr says why),
2 bad input.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from zbench.cli.filters import filter_argv
from zbench.cli.jobs_list import no_jobs
from zbench.cli.options import err
from zbench.cli.outcome import fail, nothing_selected
from zbench.cli.tableview import print_table
from zbench.fleet.gather import Gathered, HostsError, gather, to_csv
from zbench.fleet.hosts import resolve_hosts
from zbench.fleet.jobs_table import SPEED, fleet_jobs_table
from zbench.results.api import Filters
from zbench.settings import HostEntry, SettingsError, load_config
from zbench.textfit import Column, counted


def _report(got: Gathered) -> int:
    for host, why in got.errors.items():
        err(f"{host}: {why}")
    return 1 if got.errors else 0


def _reached(hosts: list[HostEntry], got: Gathered) -> str:
    """The hosts that answered, by name (``gpu1, gpu2``); "" when none did."""
    return ", ".join(h.name for h in hosts if h.name not in got.errors)


# How ``fleet.jobs_table.HEADERS`` give way on a narrow terminal, as ``zbench jobs``' own columns.
FIT = (
    Column("Host"),
    Column("ID", right=True),
    Column("State"),
    Column("Job"),
    Column("Samples/s", priority=1, right=True),  # titled by its speeds' unit
    Column("Started", priority=5),
    Column("Reason", priority=1, flex=True, min_width=16),
)


def hosts_of(text: str) -> list[HostEntry]:
    """``--hosts`` as the dashboard reads it: ``all`` or names of the config file's ``[hosts]``
    (reached as it says), or any other host by its name. Raises HostsError or SettingsError."""
    return resolve_hosts(text, load_config().hosts)


def fleet_jobs(
    hosts_text: str,
    *,
    all_jobs: bool,
    json_out: bool,
    wide: bool = False,
    filters: dict[str, str] | None = None,
) -> int:
    """Print every host's jobs in one table fitted to the terminal as ``zbench jobs`` is (every
    column with ``wide``), or JSON, each row with its host; 2 on bad --hosts. ``filters``
    (``zbench jobs``' own, by name) go to every host as they were given."""
    try:
        hosts = hosts_of(hosts_text)
    except (HostsError, SettingsError) as exc:
        err(str(exc))
        return 2
    given = [a for name, value in (filters or {}).items() for a in (f"--{name}", value)]
    got = gather(hosts, ["jobs", *(["--all"] if all_jobs else []), *given])
    if json_out:
        print(json.dumps(got.rows, indent=2))
        return _report(got)
    if not got.rows:  # as `zbench jobs` says it, not an empty table's header
        if reached := _reached(hosts, got):
            print(no_jobs(filters, all_jobs, where=reached))
        return _report(got)
    header, cells = fleet_jobs_table(got.rows)
    keep = [i for i, title in enumerate(header) if title != "Reason" or any(c[i] for c in cells)]
    columns = [FIT[i] if i != SPEED else replace(FIT[i], header=header[i]) for i in keep]
    rows = [[row[i] for i in keep] for row in cells]
    print_table(Console(highlight=False, markup=False), columns, rows, wide=wide)
    return _report(got)


def fleet_export(
    hosts_text: str, *, fmt: str | None, output: Path | None, filters: Filters | None = None
) -> int:
    """Every host's results (``zbench results --json`` with the same filters) as json or csv
    (``fmt``, else the output's suffix, else json)."""
    from zbench.results.export import FormatError, pick_format

    try:
        hosts = hosts_of(hosts_text)
        fmt = pick_format(fmt, output, ("json", "csv"), "json", what="--hosts: ")
    except (HostsError, SettingsError, FormatError) as exc:
        return fail(str(exc))
    got = gather(hosts, ["results", *filter_argv(filters or Filters())])
    if not got.rows:  # the one rule (cli/outcome.py): an export of no runs writes nothing
        _report(got)
        if not (reached := _reached(hosts, got)):
            return 1
        said = (filters or Filters()).nothing_to("export", first="run a suite there first")
        return nothing_selected(f"{reached}: {said}", listing=False)
    text = json.dumps(got.rows, indent=2) + "\n" if fmt == "json" else to_csv(got.rows)
    from zbench.cli.results import write_output  # the one writer of exports: never over a database

    what = f"{counted(len(got.rows), 'result')} from {counted(len(hosts), 'host')}"
    return write_output(text, output, what, None) or _report(got)
