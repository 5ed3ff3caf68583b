"""The one table of job kinds: what each kind of job is configured with, what it runs, what it
leaves in the store and where its results show. Nothing else in zbench tells the kinds apart: the
store keeps a job's and a run's kind in a ``kind`` column, and every reader looks its row up here.

=========  ======================================  =============================  =======  =======
kind       config class                            runner (``python -m``)         record   results
=========  ======================================  =============================  =======  =======
benchmark  ``contract.config.RunConfig``           ``zbench.runners``             result   rows
demo       ``contract.demo_options.DemoConfig``    ``zbench.demos``               result   demos
probe      ``contract.probe_options.ProbeConfig``  ``zbench.runners.microbench``  figures  probes
nodes      ``jobs.nodes.NodesConfig``              ``zbench.jobs.nodes_run``      result   rows
=========  ======================================  =============================  =======  =======

Standard library only. Classes outside the contract are named, not imported (the contract imports
no other zbench package); :meth:`Kind.config_class` loads one where it is used.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Kind:
    """One kind of job. ``record``: how its stored run is built, ``"result"`` (one run from its
    last ``result`` event, ``jobs.records``) or ``"figures"`` (every result event one figure,
    beside the GPUs' peaks, ``jobs.probe_record``). ``section``: where results show its runs,
    ``"rows"`` (the results table), ``"probes"`` or ``"demos"`` (their own tables);
    ``in_results``: whether plain result queries include its runs (the others are read when
    asked for). ``workload``/``framework``: the name every run of the kind carries, which selects
    the kind in a results filter (``--workload probe``). ``all_gpus``: with no GPU count asked,
    it takes every GPU offered; ``gpus_named``: its GPUs here are the ones its config names (a
    multi-node job's local nodes, in ``requested_gpus``), never a count. ``command``: the ``zbench`` command that submits one (another
    host's launch in the fleet view)."""

    name: str
    title: str
    config: str  # "module:Class": from_dict(dict), as_dict(), to_argv(events=...)
    runner: str  # the module a job of this kind runs with `python -m`
    record: str
    section: str
    in_results: bool
    command: str
    runner_env: str | None = None  # names another runner module or a .py file (tests' fakes)
    workload: str | None = None
    framework: str | None = None
    all_gpus: bool = False
    gpus_named: bool = False
    gpu_ids_option: bool = True
    view: str = "detail"

    def config_class(self) -> Any:
        """The kind's config class (imported on first use)."""
        module, _, name = self.config.partition(":")
        return getattr(importlib.import_module(module), name)

    def config_from(self, data: dict[str, Any]) -> Any:
        """A stored config (a job row's ``config``) as the kind's config object."""
        return self.config_class().from_dict(data)

    def runner_command(self) -> list[str]:
        """``python -m RUNNER`` (or ``python FILE.py`` where ``runner_env`` names a file)."""
        target = os.environ.get(self.runner_env, self.runner) if self.runner_env else self.runner
        if target.endswith(".py"):
            return [sys.executable, target]
        return [sys.executable, "-m", target]

    def command_line(self, config: dict[str, Any], events: str) -> list[str]:
        """The job's process: the runner and the options its config gives, writing ``events``."""
        return [*self.runner_command(), *self.config_from(config).to_argv(events=events)]


BENCHMARK = "benchmark"
DEMO = "demo"
PROBE = "probe"
NODES = "nodes"

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            BENCHMARK,
            "benchmark",
            config="zbench.contract.config:RunConfig",
            runner="zbench.runners",
            runner_env="ZBENCH_RUNNER_MODULE",
            record="result",
            section="rows",
            in_results=True,
            command="run",
        ),
        Kind(
            DEMO,
            "demo",
            config="zbench.contract.demo_options:DemoConfig",
            runner="zbench.demos",
            record="result",
            section="demos",
            in_results=False,  # a demo's figures are its own: `zbench demo results`
            command="demo",
            gpu_ids_option=False,
            view="demo",
            framework="demo",
        ),
        Kind(
            PROBE,
            "probe",
            config="zbench.contract.probe_options:ProbeConfig",
            runner="zbench.runners.microbench",
            runner_env="ZBENCH_PROBE_RUNNER_MODULE",
            record="figures",
            section="probes",
            in_results=False,  # micro-benchmark figures, not a workload's speed
            command="probe",
            gpu_ids_option=False,  # `zbench probe --gpus` names its GPUs
            workload="probe",
            all_gpus=True,
        ),
        Kind(
            NODES,
            "several machines",
            config="zbench.jobs.nodes:NodesConfig",
            runner="zbench.jobs.nodes_run",  # the node manager: it starts the runners of every node
            record="result",
            section="rows",
            in_results=True,
            command="run",
            gpus_named=True,
        ),
    )
}


def get(name: str | None) -> Kind:
    """The kind of that name; a row written before kinds were stored is a benchmark."""
    return KINDS[name or BENCHMARK]


def of_config(config: Any) -> Kind:
    """The kind of a config object (each config class names its ``kind``)."""
    return get(getattr(config, "kind", BENCHMARK))


def of_dict(config: dict[str, Any]) -> Kind:
    """The kind of a stored config dict (its ``kind`` key; one with ``nodes`` spans machines)."""
    if config.get("nodes"):
        return KINDS[NODES]
    return get(config.get("kind"))


def result_kinds(workload: str | None = None, framework: str | None = None) -> tuple[str, ...]:
    """The kinds a results query reads: those plain queries include, and any kind whose runs
    carry the workload or framework name asked for."""
    return tuple(
        k.name
        for k in KINDS.values()
        if k.in_results
        or (workload is not None and k.workload == workload)
        or (framework is not None and k.framework == framework)
    )


# The command that shows each section's runs (a filter that names a run of another section says
# where to find it).
SHOWN_BY = {"rows": "zbench results", "demos": "zbench demo results", "probes": "zbench report"}


def in_section(section: str) -> Iterable[str]:
    """The kinds whose runs show in ``section``."""
    return tuple(k.name for k in KINDS.values() if k.section == section)
