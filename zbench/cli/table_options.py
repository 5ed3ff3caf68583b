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
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand

from zbench.contract.config import RUN_OPTIONS
from zbench.contract.options import Opt, typed_flags

RUNNER_PANEL = "Workload options (checked by the runner's parser)"


def type_label(opt: Opt) -> str:
    """What an option takes, as help shows it, in Click's notation so that the table's panel reads
    like Typer's own beside it: ``torch|tf``, ``<int> [x>=1]``, ``<float> [0<x<=1440]``, ``<path>``."""
    if opt.kind == "choice":
        return "|".join(opt.choices)
    if opt.kind in ("switch", "bool"):
        return ""
    name = "path" if opt.path else opt.kind
    low, high = opt.low, opt.high
    if opt.kind not in ("int", "float") or (low is None and high is None):
        return f"<{name}>"
    below = "<" if opt.kind == "float" else "<="  # a demo's float bound is exclusive
    if low is None:
        span = f"x<={_n(high or 0)}"
    elif high is None:
        span = f"x{'>' if below == '<' else '>='}{_n(low)}"
    else:
        span = f"{_n(low)}{below}x<={_n(high)}"
    return f"<{name}> [{span}]"


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def plain_help(opt: Opt) -> str:
    """The option's help with its default, as plain text."""
    text = opt.help.rstrip(".") + "."
    default = opt.shown_default
    return f"{text} [default: {default}]" if default else text


def help_text(opt: Opt) -> str:
    """The option's help with its default, escaped: a table's text is never read as Rich markup."""
    return escape(plain_help(opt))


def _option(opt: Opt) -> inspect.Parameter:
    # Hidden from Typer's own panel: the command's help lists them in two columns (options_panel).
    if opt.kind == "bool":
        decl = f"{opt.flag}/{opt.no_flag}"
        info = typer.Option(decl, help=help_text(opt), show_default=False, metavar="", hidden=True)
        annotation: Any = Annotated[bool | None, info]
    else:
        info = typer.Option(
            opt.flag,
            *opt.aliases,
            help=help_text(opt),
            show_default=False,
            metavar=type_label(opt),
            hidden=True,
        )
        # Repeatable here, so that every value reaches the table's own parser, which refuses a
        # second one (contract.options.OnceAction); Click would keep only the last.
        annotation = Annotated[list[str] | None, info]
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
            argv.append(opt.flag if value else opt.no_flag)
        else:
            for one in value if isinstance(value, list) else [value]:
                argv += [opt.flag, str(one)]
    return argv


def flag_kind(opt: Opt) -> str:
    """What an option takes on the command line; a bool's other form."""
    return f"or {opt.no_flag}" if opt.kind == "bool" else type_label(opt)


def toml_kind(opt: Opt) -> str:
    """What a suite file's key takes."""
    return "true|false" if opt.kind == "bool" else type_label(opt)


def options_panel(
    title: str,
    options: Iterable[Opt],
    key: Callable[[Opt], str],
    kind: Callable[[Opt], str] = flag_kind,
) -> Panel:
    """An option table as a help panel in Typer's colours, in two columns: the flag, then what it
    takes and its help. Typer's own panel gives each option four columns (name, ``--no-`` form,
    metavar, help), and the runner's long choice lists left its help column 17 characters wide at
    80 columns: ``zbench run -h`` was 130 lines there."""
    grid = Table.grid(padding=(0, 2), expand=True)
    grid.add_column(no_wrap=True, style="bold cyan")
    grid.add_column(ratio=1, overflow="fold")  # a long choice list folds, it is not cut
    for opt in options:
        takes = kind(opt)
        text = Text()
        if takes:
            text.append(takes, style="bold yellow")
            text.append("  ")
        text.append(plain_help(opt))
        grid.add_row(key(opt), text)
    return Panel(grid, title=Text(title), title_align="left", border_style="dim")  # not markup


def print_panels(panels: Sequence[Panel], epilog: str | None) -> None:
    """Panels after Typer's help, then the epilog Typer would have printed before them."""
    import typer.rich_utils  # at help time only: it imports markdown_it, which no command needs

    console = Console(width=typer.rich_utils.MAX_WIDTH, highlight=False)
    for panel in panels:
        console.print(panel)
    if epilog:
        console.print(Padding(Text(epilog, style="dim"), (0, 1)))


def run_flag(opt: Opt) -> str:
    """A runner option as typed, with its aliases: ``--repeat, --repeats``."""
    return ", ".join((opt.flag, *opt.aliases))


class PanelCommand(TyperCommand):
    """A command whose help ends in option tables of its own (``panels``), before its epilog."""

    def panels(self) -> list[Panel]:
        raise NotImplementedError

    def shown_flags(self) -> set[str]:
        """The hidden Click options that ``panels`` lists: a mistyped flag is told of them."""
        return set()

    def format_help(self, ctx: Any, formatter: Any) -> None:
        epilog, self.epilog = self.epilog, None
        try:
            super().format_help(ctx, formatter)
        finally:
            self.epilog = epilog
        print_panels(self.panels(), epilog)


class RunCommand(PanelCommand):
    """``zbench run``: its own options in Typer's panels, then the workload options' panel."""

    def panels(self) -> list[Panel]:
        return [options_panel(RUNNER_PANEL, RUN_OPTIONS, run_flag)]

    def shown_flags(self) -> set[str]:
        return set(typed_flags(RUN_OPTIONS))


# --- demos -----------------------------------------------------------------------------------


def demo_schemas() -> dict[str, tuple[str, tuple[Any, ...]]]:
    """Each demo's title and option schema: the one place the CLI reads them from."""
    from zbench.contract.demos import demos

    return {entry.name: (entry.title, entry.options) for entry in demos().values()}


def demo_flag(opt: Opt) -> str:
    """A demo option as typed: ``--board``, ``--faithful``, ``--train|--animate``."""
    if opt.kind == "switch":
        return "|".join("--" + c for c in opt.choices)
    return str(opt.flag)  # a bool's --no- form: options_panel says it beside


def demo_panels(name: str | None) -> list[Panel]:
    """The options of the demo ``name`` (of every demo when it is not one), for ``demo -h``."""
    schemas = demo_schemas()
    chosen = {name: schemas[name]} if name in schemas else schemas
    return [
        options_panel(f"{demo}: {title} (options after the name)", options, demo_flag)
        for demo, (title, options) in chosen.items()
    ]


class DemoCommand(PanelCommand):
    """``zbench demo``: ``zbench demo NAME -h`` lists that demo's options (all demos' without one)."""

    demo: str | None = None  # the name given before -h, if any

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Note the demo's name before Click's eager ``-h`` prints the help."""
        self.demo = next((a for a in args if not a.startswith("-")), None)
        return list(super().parse_args(ctx, args))

    def panels(self) -> list[Panel]:
        return demo_panels(self.demo)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The help with the named demo's options (the filters' help for ``results``)."""
        if self.demo == "results":
            from zbench.cli.filters import show_filter_help

            show_filter_help(formatter)
            return
        super().format_help(ctx, formatter)
