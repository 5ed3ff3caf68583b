"""Command-line options generated from an option table: the runner's (``contract.config.RUN_OPTIONS``)
and each demo's schema, so ``-h`` lists every option with its help, type, default and allowed values.

Click only collects what was typed: each generated option is read as text and handed back as the
runner's argv, which the contract's one parser validates (once, before anything is queued).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperCommand

from zbench.contract.config import Opt

RUNNER_PANEL = "Workload options (checked by the runner's parser)"


def type_label(opt: Opt) -> str:
    """What an option takes, as help shows it: ``torch|tf``, ``int >=1``, ``path``."""
    if opt.kind == "choice":
        return "|".join(opt.choices)
    if opt.kind == "switch":
        return ""
    low, high = opt.low, opt.high
    if opt.kind in ("int", "float") and low is not None:
        above = ">" if opt.kind == "float" else ">="  # a demo's float bound is exclusive
        return f"{opt.kind} {above}{_n(low)}" + (f" <={_n(high)}" if high is not None else "")
    return {"str": "text", "bool": ""}.get(opt.kind, opt.kind)


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def help_text(opt: Opt) -> str:
    """The option's help with its default, escaped: a table's text is never read as Rich markup."""
    text = opt.help.rstrip(".") + "."
    default = opt.shown_default
    return escape(f"{text} [default: {default}]" if default else text)


def _option(opt: Opt) -> inspect.Parameter:
    name = opt.flag[2:]
    if opt.kind == "bool":
        decl = f"{opt.flag}/--no-{name}"
        info = typer.Option(
            decl, help=help_text(opt), show_default=False, metavar="", rich_help_panel=RUNNER_PANEL
        )
        annotation: Any = Annotated[bool | None, info]
    else:
        info = typer.Option(
            opt.flag,
            *opt.aliases,
            help=help_text(opt),
            show_default=False,
            metavar=type_label(opt),
            rich_help_panel=RUNNER_PANEL,
        )
        annotation = Annotated[str | None, info]
    return inspect.Parameter(
        opt.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


def with_options(options: Sequence[Opt]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command (whose function ends in ``**given``) one Typer option per table row."""

    def add(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func, eval_str=True)
        own = [p for p in sig.parameters.values() if p.kind != inspect.Parameter.VAR_KEYWORD]
        params = [*own, *(_option(o) for o in options)]
        func.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        func.__annotations__ = {p.name: p.annotation for p in params}
        return func

    return add


def given_argv(options: Iterable[Opt], values: Mapping[str, Any]) -> list[str]:
    """The options the user typed, as argv for the table's own parser (untyped text)."""
    argv: list[str] = []
    for opt in options:
        value = values.get(opt.name)
        if value is None:
            continue
        if opt.kind == "bool":
            argv.append(opt.flag if value else f"--no-{opt.flag[2:]}")
        else:
            argv += [opt.flag, str(value)]
    return argv


def table_lines(options: Iterable[Opt], key: Callable[[Opt], str]) -> list[str]:
    """One escaped help line per option (for epilogs): ``KEY TYPE: help [default: x]``."""
    lines = []
    for opt in options:
        kind = type_label(opt)
        lines.append(escape(f"{key(opt)}{' ' + kind if kind else ''}: ") + help_text(opt))
    return lines


# --- demos -----------------------------------------------------------------------------------


def demo_schemas() -> dict[str, tuple[str, tuple[Any, ...]]]:
    """Each demo's title and option schema: the one place the CLI reads them from."""
    from zbench.contract.demos import demos

    return {entry.name: (entry.title, entry.options) for entry in demos().values()}


def demo_flag(opt: Opt) -> str:
    """A demo option as typed: ``--board``, ``--faithful/--no-faithful``, ``--train|--animate``."""
    if opt.kind == "switch":
        return "|".join("--" + c for c in opt.choices)
    if opt.kind == "bool":
        return f"{opt.flag}/--no-{opt.flag[2:]}"
    return str(opt.flag)


def demo_epilog(name: str | None) -> str:
    """The options of the demo ``name`` (of every demo when it is not one), for ``demo -h``."""
    schemas = demo_schemas()
    chosen = {name: schemas[name]} if name in schemas else schemas
    parts = ["Demo options (after the name; checked by the demo's parser):"]
    for demo, (title, options) in chosen.items():
        parts.append(f"[b]{escape(demo)}[/b]: {escape(title)}")
        parts += [f"  {line}" for line in table_lines(options, demo_flag)]
    return "\n\n".join(parts)


class DemoCommand(TyperCommand):
    """``zbench demo``: ``zbench demo NAME -h`` lists that demo's options (all demos' without one)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Note the demo's name before Click's eager ``-h`` prints the help."""
        ctx.meta["zbench.demo"] = next((a for a in args if not a.startswith("-")), None)
        return list(super().parse_args(ctx, args))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The help, with the named demo's options as its epilog (the filters for ``results``)."""
        name = ctx.meta.get("zbench.demo")
        if name == "results":
            from zbench.cli.filters import show_filter_help

            show_filter_help(formatter)
            return
        self.epilog = demo_epilog(name)
        super().format_help(ctx, formatter)
