"""The one filter set of the results commands, defined once: ``results``, ``export``, ``report``,
``compare``, ``plot``, ``demo results`` and the fleet's export take the same options with the same
meanings, and receive them as one ``results.api.Filters``; ``jobs`` takes those a job has
(``JOB_FILTERS``), the same options, and ``--state``.

``@with_filters`` appends the options to a command's signature (Typer reads it) and hands the
command a ``filters`` argument; ``filter_argv`` writes them back as options (for other hosts).
"""

from __future__ import annotations

import copy
import functools
import inspect
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from zbench.cli.options import JsonOpt, ReadDbOpt, WideOpt, check_tag, format_option
from zbench.contract.config import FRAMEWORKS, MODES, PRECISIONS
from zbench.jobs.states import JobState

if TYPE_CHECKING:  # imported where a command runs: every command's start-up would pay for it
    from zbench.results.api import Filters

PANEL = "Filters"


def _opt(*decls: str, help: str, hidden: bool = False, **kw: Any) -> Any:
    return typer.Option(
        *decls, help=help, show_default=False, rich_help_panel=PANEL, hidden=hidden, **kw
    )


def _named(*decls: str, help: str, hidden: bool = False) -> Any:
    """A filter by a name: a blank one (``--workload "$UNSET"``) is refused, not read as no
    filter at all, which showed every run as if it were the ones asked for."""
    return _opt(*decls, help=help, hidden=hidden, callback=_not_blank)


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise typer.BadParameter(f"needs a value, got {value!r} (leave it out for every run)")
    return value


def _date(value: str | None) -> str | None:
    """``--since`` checked as it is parsed, so a bad date is a usage error of the command."""
    if value is not None:
        from zbench.results.api import parse_since

        try:
            parse_since(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc).removeprefix("--since ")) from None
    return value


def _choices(values: tuple[str, ...] | list[str]) -> str:
    """``a, b or c``: the values a filter takes, as the table that declares them lists them."""
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]


# (parameter, its annotation): the options in the order help lists them.
FILTER_OPTIONS: tuple[tuple[str, Any], ...] = (
    (
        "workload",
        Annotated[str | None, _named(help="Only this workload (a demo's name for demos).")],
    ),
    (
        "framework",
        Annotated[str | None, _named(help=f"Only this framework: {_choices(FRAMEWORKS)}.")],
    ),
    (
        "mode",
        Annotated[
            str | None, _named(help=f"Only this mode: {_choices(MODES)} (a demo's: ppo, ...).")
        ],
    ),
    (
        "precision",
        Annotated[str | None, _named(help=f"Only this precision: {_choices(PRECISIONS)}.")],
    ),
    (
        "gpus",
        Annotated[
            int | None, _opt(help="Only runs on this many GPUs (a count).", min=0, metavar="<int>")
        ],
    ),
    (
        "device",
        Annotated[
            str | None,
            _named(help="Only runs on this device: cpu, cuda, or a part of the GPU's name (h200)."),
        ],
    ),
    ("gpu", Annotated[str | None, _named(help="Old name of --device.", hidden=True)]),
    (
        "since",
        Annotated[
            str | None, _opt(help="Only runs on or after this date (YYYY-MM-DD).", callback=_date)
        ],
    ),
    (
        "suite",
        Annotated[
            str | None, _named(help="Only the jobs of every call of this suite (e.g. review).")
        ],
    ),
    (
        "suite_run",
        Annotated[
            int | None,
            _opt(
                "--suite-run", help="Only the runs of one `zbench suite` call (any of its job ids)."
            ),
        ],
    ),
    (
        "job",
        Annotated[
            list[int] | None,
            _opt("--job", help="Only the run of this job (repeatable).", metavar="<int>"),
        ],
    ),
    (
        "run",
        Annotated[
            list[int] | None,
            _opt(
                "--run",
                help="Only this run: the number in the Run column (repeatable).",
                metavar="<int>",
            ),
        ],
    ),
    (
        "tag",
        Annotated[
            str | None,
            _opt(
                help="Only jobs given this tag (run/suite --tag), and their runs.",
                callback=check_tag,
            ),
        ],
    ),
)
NAMES = tuple(name for name, _ in FILTER_OPTIONS)
# `zbench jobs` takes the filters a job has, as declared above, and a job's state.
JOB_FILTERS = ("workload", "framework", "mode", "precision", "suite", "tag")
STATE_OPTION: tuple[str, Any] = (
    "state",
    Annotated[
        str | None,
        _named(help=f"Only jobs in this state: {_choices([str(x) for x in JobState])}."),
    ],
)


def filters_from(values: dict[str, Any]) -> Filters:
    """The typed options as one ``Filters`` (a bad date is found where it is read: one line)."""
    from zbench.results.api import Filters

    return Filters(
        workload=values.get("workload"),
        framework=values.get("framework"),
        mode=values.get("mode"),
        precision=values.get("precision"),
        gpus=values.get("gpus"),
        device=values.get("device") or values.get("gpu"),
        since=values.get("since"),
        job_ids=list(values.get("job") or []) or None,
        run_ids=list(values.get("run") or []) or None,
        suite_run=values.get("suite_run"),
        tag=values.get("tag"),
        suite=values.get("suite"),
    )


def nothing_found(filters: Filters | None, first_time: str) -> str:
    """What an empty table says: ``first_time`` (how to make runs) when no filter was given, else
    which filters matched nothing, so a filtered-out table never reads as an empty store."""
    given = filters.describe() if filters is not None else "all runs"
    return first_time if given == "all runs" else f"No runs match ({given})."


def with_filters(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the filter options to a command whose function takes ``filters: Filters``."""
    return _with_options(func, FILTER_OPTIONS, filters_from)


def with_job_filters(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the filters a job has (``JOB_FILTERS``) and ``--state`` to a command whose function
    takes ``filters: dict[str, str]`` (the ones given, by name)."""
    options = (*((n, a) for n, a in FILTER_OPTIONS if n in JOB_FILTERS), STATE_OPTION)
    return _with_options(func, options, lambda v: {k: x for k, x in v.items() if x is not None})


NAMED = ("workload", "framework", "mode", "precision")


def canonical(name: str, value: str) -> str:
    """A filter's value as stored, from any case or the name a table prints: ``ResNet-50`` and
    ``PyTorch`` (the results table's) or ``FP32`` filtered nothing but were refused as typos. A
    value none of them matches stays as given, for the filter's own check to name."""
    from zbench.contract.demos import demos
    from zbench.contract.workloads import WORKLOADS
    from zbench.results.api import FILTER_NAMES
    from zbench.results.format import FRAMEWORK_NAMES

    shown: dict[str, str] = {}
    if name == "workload":
        shown = {w.title: key for key, w in WORKLOADS.items()}
        shown |= {d.title: key for key, d in demos().items()}
    elif name == "framework":
        shown = {title: key for key, title in FRAMEWORK_NAMES.items()}
    aliases = {k.casefold(): k for k in FILTER_NAMES[name]}
    aliases |= {title.casefold(): key for title, key in shown.items()}
    return aliases.get(value.casefold(), value)


def _with_options(
    func: Callable[..., Any],
    options: tuple[tuple[str, Any], ...],
    make: Callable[[dict[str, Any]], Any],
) -> Callable[..., Any]:
    """``func`` as a command with ``options`` appended, handed to it as ``filters=make(values)``."""
    sig = inspect.signature(func)
    # The command's own annotations are evaluated here; ``filters: Filters`` is not (``Filters`` is
    # imported only when a command runs, so that no command's start-up pays for the results API).
    own = [
        p.replace(annotation=_evaluated(p.annotation, func))
        for p in sig.parameters.values()
        if p.name != "filters"
    ]
    declared = {name: _once(ann) for name, ann in options}
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ann)
        for name, ann in declared.items()
    ]
    single = {name for name, ann in options if declared[name] is not ann}

    @functools.wraps(func)
    def command(**kwargs: Any) -> Any:
        values = {name: kwargs.pop(name, None) for name in declared}
        for name in single:  # the one value _once let through, as its one-item list
            values[name] = values[name][0] if values[name] else None
        for name in NAMED:
            if isinstance(values.get(name), str):
                values[name] = canonical(name, values[name])
        return func(**kwargs, filters=make(values))

    params = [*own, *added]
    command.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=params, return_annotation=inspect.Signature.empty
    )
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


def _once(annotation: Any) -> Any:
    """A filter that takes one value, refusing a second: Click keeps only the last value of an
    option given twice, so ``--workload resnet50 --workload vgg16`` showed VGG16's runs alone, as
    if ResNet-50 had not been asked for. Declared as a repeatable option here, its values are
    counted, and the one value (after the filter's own check) is what the command receives.
    Repeatable filters (``--job``, ``--run``) are left as they are. (Typer hands a repeatable
    option's value on as a list, so the checked value goes back as a one-item list.)"""
    kind, info = typing.get_args(annotation)
    value_type = next(t for t in typing.get_args(kind) if t is not type(None))
    if typing.get_origin(value_type) is list:
        return annotation
    check = info.callback

    def once(values: list[Any] | None) -> Any:
        if not values:
            return None
        if len(values) > 1:
            given = ", ".join(map(str, values))
            times = "twice" if len(values) == 2 else f"{len(values)} times"
            raise typer.BadParameter(f"given {times} ({given}): give it once")
        return [check(values[0]) if check else values[0]]

    info = copy.copy(info)
    info.callback = once
    info.metavar = info.metavar or f"<{value_type.__name__}>"  # not <list[str]>
    return Annotated[list[value_type] | None, info]  # type: ignore[valid-type]


def _evaluated(annotation: Any, func: Callable[..., Any]) -> Any:
    """An annotation written as text (``from __future__ import annotations``) as its object."""
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, vars(inspect.getmodule(func)))  # the module's own annotation text


def filter_argv(filters: Filters) -> list[str]:
    """The filters as command-line options (what another host's ``zbench results`` is given)."""
    argv: list[str] = []
    for name in (
        "workload",
        "framework",
        "mode",
        "precision",
        "gpus",
        "device",
        "since",
        "tag",
        "suite",
        "suite_run",
    ):
        value = getattr(filters, name)
        if value is not None:
            argv += ["--" + name.replace("_", "-"), str(value)]
    for job in filters.job_ids or ():
        argv += ["--job", str(job)]
    for run in filters.run_ids or ():
        argv += ["--run", str(run)]
    return argv


# ``zbench demo results [filters]``: ``demo`` passes the words after ``results`` to this command,
# which reads them with the same options.
_after_demo = typer.Typer(add_completion=False, context_settings={"help_option_names": []})


@_after_demo.command(name="results")
@with_filters
def _demo_results(
    *,
    fmt: Annotated[str | None, format_option("the table, fitted to the terminal")] = None,
    json_out: JsonOpt = False,
    wide: WideOpt = False,
    db: ReadDbOpt = None,
    filters: Filters,
) -> Filters:
    """The stored demo results as a table (Markdown), CSV or JSON."""
    return filters  # -f, --json, --wide, --db: read by `zbench demo` itself, listed here for -h


def read_filters(args: list[str], parent: Any) -> Filters:
    """The filter options among ``args`` (``zbench demo results ...``); a bad one is Click's usage
    error (one line, exit 2). What the command says after is said as ``demo results``'s."""
    from zbench.cli.outcome import COMMAND_KEY, command_name

    command = typer.main.get_command(_after_demo)
    from zbench.results.api import Filters

    with command.make_context("results", list(args), parent=parent) as ctx:
        filters = command.invoke(ctx)
        parent.meta[COMMAND_KEY] = command_name(ctx)  # meta: one dict for every nested context
    assert isinstance(filters, Filters)
    return filters


def show_filter_help(formatter: Any) -> None:
    """The help of the filter options, as ``zbench demo results -h`` shows it."""
    from zbench.cli.usage import plain_flags  # as the app's own commands: no <bool> on --json

    command = typer.main.get_command(_after_demo)
    plain_flags(command)
    ctx = command.make_context("zbench demo results", [], resilient_parsing=True)
    command.format_help(ctx, formatter)
