"""``zbench suite -h``: every key a suite file takes, from the tables the suite loader checks a file
against (``jobs.suite_keys``, the runner's options, each demo's), so the help cannot leave one out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.panel import Panel
from typer.core import TyperArgument

from zbench.cli.table_options import PanelCommand, options_panel, toml_kind
from zbench.contract.config import RUN_OPTIONS
from zbench.contract.options import Opt
from zbench.jobs.suite_keys import ALSO, DEMO_JOB_KEYS, FILE_KEYS, JOB_KEYS


def _also_help(opt: Opt) -> Opt:
    """The option with what its suite-only value means added to its help (``gpus = "all"``)."""
    said = "; ".join(f"{a.value}: {a.help}" for a in ALSO if a.key == opt.name)
    return replace(opt, help=f"{opt.help.rstrip('.')}; {said}") if said else opt


def _kind(opt: Opt) -> str:
    """What a key takes in a suite file: true|false, a choice, a number, a list, a table; and
    its suite-only value (``cuda|cpu|auto``, ``<int> [x>=1] or all``)."""
    takes = f"<{opt.kind}>" if opt.kind in ("list", "table", "tables") else toml_kind(opt)
    also = [a.value for a in ALSO if a.key == opt.name]
    if not also:
        return takes
    return "|".join([takes, *also]) if opt.kind == "choice" else " or ".join([takes, *also])


def _demo_rows() -> list[Opt]:
    """One row per demo: the keys its job takes (``zbench demo NAME -h`` says what each does)."""
    from zbench.contract.demos import demos  # it looks in each demo's module file

    rows = []
    for entry in demos().values():
        keys = [k.name for k in DEMO_JOB_KEYS if k.name != "workload"]
        keys += [o.name for o in entry.options]
        also = "".join(f"; {a.key} also {a.value}" for a in ALSO if a.key in keys)
        text = f"{', '.join(keys)} (zbench demo {entry.name} -h{also})"
        rows.append(Opt(entry.name, "", None, text))
    return rows


def suite_panels() -> list[Panel]:
    """The help's panels: a file's top keys, a benchmark job's own, the runner's options, and
    each demo's job keys."""

    def name(opt: Opt) -> str:
        return str(opt.name)

    return [
        options_panel("A suite file's keys", FILE_KEYS, name, _kind),
        options_panel(
            "A [[job]]'s (and [defaults]') keys: these, then a benchmark's options",
            JOB_KEYS,
            name,
            _kind,
        ),
        options_panel(
            "A benchmark's options (as zbench run takes them)",
            [_also_help(o) for o in RUN_OPTIONS],
            name,
            _kind,
        ),
        options_panel(
            'A demo\'s [[job]] (workload = "snake", ...): workload and these keys',
            _demo_rows(),
            name,
            lambda _: "",
        ),
    ]


class SuiteHelpCommand(PanelCommand):
    """``zbench suite``: the suites there are by name, then every key a suite file takes
    (:func:`suite_panels`)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # Read when help is asked for: every other start of zbench would pay for the suites' module.
        from zbench.jobs.suites import suites, user_suites_dir

        for param in self.params:
            if isinstance(param, TyperArgument) and param.name == "name":
                param.help = (
                    f"A suite by name ({', '.join(suites())}; your own: NAME.toml in "
                    f"{user_suites_dir()}), or a suite .toml file."
                )
        super().format_help(ctx, formatter)

    def panels(self) -> list[Panel]:
        return suite_panels()
