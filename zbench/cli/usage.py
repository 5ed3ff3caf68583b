"""How the command line reports itself: usage errors as one line, flags without a type label.

Click's own usage errors (a bad number, an unknown option, a missing argument) are printed by Typer
as a boxed panel of five or six lines. zbench's errors are one line on stderr and exit status 2, so
``ZbenchGroup`` parses with Click's standalone mode off and writes those errors the same way.
"""

from __future__ import annotations

import contextlib
import difflib
import math
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import typer

# Typer ships its own copy of Click: its exceptions are the ones raised here.
from typer.core import TyperArgument, TyperGroup, TyperOption, _click
from typer.exceptions import Abort


def command_path(ctx: Any) -> str:
    """``zbench`` and the subcommand names of a context (never the interpreter's ``python -m``)."""
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(["zbench", *reversed(names)])


# Typer checks a typed option's value with pydantic's words ("Input should be greater than or
# equal to 0.05"); the runner's parser and zbench's own checks say "must be at least 1". One voice.
_PLAIN = (
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"must be at least \1"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"must be at most \1"),
    (re.compile(r"Input should be greater than (\S+)"), r"must be above \1"),
    (re.compile(r"Input should be less than (\S+)"), r"must be below \1"),
    (re.compile(r"Input should be a valid integer.*"), "must be a whole number"),
    (re.compile(r"Input should be a valid number.*"), "must be a number"),
)


def plain_message(message: str) -> str:
    """A value error in zbench's words (``must be at least 1``), not pydantic's."""
    for pattern, words in _PLAIN:
        message = pattern.sub(words, message)
    return message


def _nan_input(exc: Any) -> str | None:
    """The value, when a number option was given NaN (``--grace nan``): NaN fails every bound, so
    Typer's check named whichever it tried ("must be at most 3600"), not what is wrong."""
    errors = getattr(exc.__cause__, "errors", None)
    for error in errors() if callable(errors) else ():
        if not str(error.get("type")).startswith(("less_than", "greater_than")):
            continue  # an int option's "must be a whole number" says it already
        text = error.get("input")
        try:
            if isinstance(text, str) and math.isnan(float(text)):
                return text
        except ValueError:
            continue
    return None


def _bad_value(exc: Any) -> str | None:
    """A bad value in the words of the runner's parser, ``--interval: must be at least 0.05, got
    0``, not Click's ``Invalid value for '--interval': ...`` (None: not a bad value)."""
    if type(exc) is not _click.exceptions.BadParameter:
        return None  # a missing one (MissingParameter) says so in Click's words
    param, hint = exc.param, exc.param_hint
    if hint:
        name = (hint if isinstance(hint, str) else hint[0]).strip("'\"")
    elif isinstance(param, TyperOption):  # its long name: --output, not -o
        name = next((o for o in param.opts if o.startswith("--")), param.opts[0])
    elif param is not None and param.name:
        name = param.name  # an argument, as -h names it (job_ids)
    else:
        return None
    message = plain_message(str(exc.message))
    errors = getattr(exc.__cause__, "errors", None)
    first = next(iter(errors() if callable(errors) else ()), None)
    if first is not None and "got " not in message and isinstance(first.get("input"), str):
        bound = str(first.get("type")).startswith(("less_than", "greater_than"))
        message += f", got {first['input'].strip() if bound else repr(first['input'])}"
    return f"{name}: {message}"


def usage_line(exc: Any) -> str:
    """One line for a Click usage error: ``zbench: cancel: <what is wrong> (zbench cancel -h)``."""
    nan = _nan_input(exc)
    if nan is not None:
        exc.message = f"must be a finite number, got {nan!r}"
    _negative_number(exc)
    _visible_possibilities(exc)
    message = _bad_value(exc) or plain_message(" ".join(str(exc.format_message()).split()))
    message = re.sub(r"(?<!\.)\.$", "", message)  # "Missing argument 'B'." runs on into "(see"
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        where = command_path(ctx).removeprefix("zbench").strip()
    else:  # Click's parser left no context (`run resnet50 --tag`, the value missing)
        from zbench.cli.outcome import command_name

        where = command_name()
        if not where:
            return f"zbench: {message}"
    path = f"zbench {where}".strip()
    return f"zbench: {where + ': ' if where else ''}{message} (see {path} -h){_did_you_mean(exc)}"


def option_line(exc: Exception, command: str, flags: Sequence[str] = ()) -> str:
    """One line for a bad option that a job kind's own parser found (``zbench run resnet50
    --steps 0``, ``zbench demo snake --bogus``), in the words of Click's usage errors above:
    argparse's ``argument --steps: ...`` and ``unrecognized arguments: ...`` read as the other
    commands' ``--steps: ...`` and ``No such option: ...``, with where to look. A check of
    zbench's own (``--events is chosen by zbench for jobs``) is named by its command alone, as
    zbench's other checks are (``zbench: run: ...``). ``flags``: the options the command takes,
    the nearest of which a mistyped one is told, as Click tells it."""
    message = str(exc)
    if found := re.fullmatch(r"unrecognized arguments: (.*)", message, re.S):
        words = found[1].split()
        typed = words[0].split("=")[0]  # as Click names it: `--bord=3` is `--bord`
        message = (
            f"No such option: {typed}"
            if words[0].startswith("-")
            else f"Got unexpected extra argument(s) ({' '.join(words)})"
        )
        near = close_flags(typed, flags) if words[0].startswith("--") else []
        message += f" (Possible options: {', '.join(sorted(near))})" if near else ""
    elif found := re.fullmatch(r"argument (\S+): (.*)", message, re.S):
        message = f"{found[1].split('/')[0]}: {found[2]}"
    elif message.startswith(f"{command.split()[0]}: "):  # names its command already: "demo: ..."
        return f"zbench: {message}"
    else:
        return f"zbench: {command}: {message}"
    return f"zbench: {command}: {message} (see zbench {command} -h)"


_NEGATIVE = re.compile(r"-\d+(\.\d*)?")
_ID = re.compile(r"\bid\b")


def _negative_number(exc: Any) -> None:
    """Click reads a negative number as an option: ``cancel -1`` and ``compare -1 2`` said "No
    such option: -1", as if a flag were mistyped. No zbench option is a number. Where the command
    takes an id (an argument whose help says so), an id is what was meant; where it takes no
    argument, the number is an extra one (as ``jobs 5`` is told)."""
    name, ctx = getattr(exc, "option_name", None), getattr(exc, "ctx", None)
    if not isinstance(exc, _click.exceptions.NoSuchOption) or ctx is None:
        return
    if not _NEGATIVE.fullmatch(name or ""):
        return
    arguments = [p for p in ctx.command.params if isinstance(p, TyperArgument)]
    if any(_ID.search(p.help or "") for p in arguments):
        exc.message = f"an id is a positive number, got {name}"
    elif not arguments:
        exc.message = f"Got unexpected extra argument(s) ({name})"
    exc.possibilities = None


def _visible_possibilities(exc: Any) -> None:
    """Click suggests any option near a mistyped one, hidden ones too: ``results --bogus`` said
    "Possible options: --gpu, --gpus", and ``--gpu`` (an old name) is in no ``-h``. Only what
    ``-h`` lists is suggested, the options of a command's own tables included (``zbench run``'s
    workload options are hidden from Typer's panel, and ``run --stepz`` suggested ``--help``)."""
    name, ctx = getattr(exc, "option_name", None), getattr(exc, "ctx", None)
    if not getattr(exc, "possibilities", None) or ctx is None or not name:
        return
    shown = ctx.command.shown_flags() if hasattr(ctx.command, "shown_flags") else set()
    visible = [
        flag
        for param in ctx.command.get_params(ctx)
        for flag in (*param.opts, *param.secondary_opts)
        if flag.startswith("--") and (flag in shown or not getattr(param, "hidden", False))
    ]
    exc.possibilities = close_flags(name, visible)


def close_flags(typed: str, flags: Sequence[str]) -> list[str]:
    """The flags nearest a mistyped one, best first (Click's own choice of them, difflib's)."""
    return difflib.get_close_matches(typed, flags)


def _did_you_mean(exc: Any) -> str:
    """``zbench jobs cancel 3``: extra words that start with another zbench command are that
    command's (``zbench cancel 3``)."""
    found = re.search(r"unexpected extra argument(?:s|\(s\))? \((.*)\)", str(exc.format_message()))
    if not found:
        return ""
    words = found.group(1).split()
    commands = getattr(exc.ctx.find_root().command, "commands", {})
    if not words or words[0] not in commands:
        return ""
    return f"; did you mean `zbench {' '.join(words)}`?"


def dashboard_options_apart(ctx: Any, names: Sequence[str]) -> None:
    """The options before a command are the dashboard's (``zbench --db x.db``): ``zbench --db x.db
    results`` read the default database, ``zbench --replay t.jsonl monitor`` the hardware, as if
    nothing had been given. Given there, or beside ``--hosts`` (the fleet view has no --db or
    --replay), they are a usage error that says where they go."""
    typed = [
        name
        for name in names
        if ctx.get_parameter_source(name) == _click.core.ParameterSource.COMMANDLINE
    ]
    flags = {name: f"--{name.replace('_', '-')}" for name in typed}
    sub = ctx.invoked_subcommand
    if sub is None:
        apart = [flags[name] for name in typed if name in ("replay", "db")]
        if "hosts" in typed and apart:
            raise _click.exceptions.UsageError(
                f"{' and '.join(apart)} cannot go with --hosts: the fleet view shows the hosts' "
                "own live state",
                ctx=ctx,
            )
        return
    if not typed:
        return
    flag = flags[typed[0]]
    command = ctx.command.commands.get(sub)
    takes = command is not None and any(
        flag in getattr(param, "opts", ()) for param in command.params
    )
    where = (
        f"give it after the command: zbench {sub} {flag} ..."
        if takes
        else f"`zbench {sub}` takes no {flag}"
    )
    raise _click.exceptions.UsageError(
        f"{flag} before a command is the dashboard's option; {where}", ctx=ctx
    )


def _commands(group: Any) -> Iterator[Any]:
    yield group
    for command in getattr(group, "commands", {}).values():
        yield from _commands(command)


def plain_flags(command: Any) -> None:
    """No type label (``<bool>``) beside on/off flags in help: a flag takes no value. The other
    labels as plain types (:func:`_plain_type`)."""
    for cmd in _commands(command):
        for param in cmd.params:
            if isinstance(param, TyperOption) and param.is_bool_flag and param.metavar is None:
                param.metavar = ""
            elif isinstance(param, TyperOption | TyperArgument) and hasattr(
                param, "display_type_rich"
            ):  # Typer 0.16+; older ones label types without these words
                param.display_type_rich = _plain_type(param.display_type_rich)  # type: ignore[method-assign]
        cmd.get_help_option = _plain_help(cmd.get_help_option)


# Typer labels a ranged number ``<float range>`` and a repeated one ``<list[int]>``; every other
# option and the table's (cli.table_options) read ``<float> [0<x<=1440]`` and ``<int>``, the range
# after the label and the repetition in the name (``job_ids...``).
_TYPE_LABELS = ((re.compile(r"<(\w+) range>"), r"<\1>"), (re.compile(r"<list\[(\w+)\]>"), r"<\1>"))


def _plain_type(get: Any) -> Any:
    def display_type_rich(ctx: Any) -> str | None:
        label = get(ctx)
        if label is None:
            return None
        for pattern, plain in _TYPE_LABELS:
            label = pattern.sub(plain, label)
        return label

    return display_type_rich


def _plain_help(get: Any) -> Any:
    """``-h/--help`` made by Click on first use, without a type label either."""

    def get_help_option(ctx: Any) -> Any:
        option = get(ctx)
        if option is not None:
            option.metavar = ""
        return option

    return get_help_option


class ZbenchGroup(TyperGroup):
    """The ``zbench`` group: one-line usage errors (exit 2) and plain flags in every command's help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_flags(self)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's ``main``; in standalone mode its errors become one line on stderr. Any other
        error leaves with the command's name on it (``COMMAND_ATTR``) for ``cli.main`` to say."""
        from zbench.cli.outcome import COMMAND_ATTR, command_name, forget_invocation

        forget_invocation()  # the root callback names this one's command, if it gets that far
        try:
            if not standalone_mode:
                return super().main(args, prog_name, complete_var, standalone_mode, **extra)
            return self._standalone(args, prog_name, complete_var, extra)
        except Exception as exc:
            with contextlib.suppress(AttributeError):  # an exception type without a __dict__
                setattr(exc, COMMAND_ATTR, command_name())
            raise
        finally:
            forget_invocation()  # nothing said after this (a test's, the TUI's) is the command's

    def _standalone(
        self,
        args: Sequence[str] | None,
        prog_name: str | None,
        complete_var: str | None,
        extra: dict[str, Any],
    ) -> Any:
        try:
            status = super().main(args, prog_name, complete_var, False, **extra)
        except _click.exceptions.UsageError as exc:
            typer.echo(usage_line(exc), err=True)
            sys.exit(2)
        except _click.exceptions.ClickException as exc:
            typer.echo(f"zbench: {' '.join(exc.format_message().split())}", err=True)
            sys.exit(exc.exit_code)
        except Abort:
            typer.echo("zbench: aborted", err=True)
            sys.exit(1)
        # Off standalone mode, Click returns a command's ``typer.Exit`` code (or its return value).
        sys.exit(status if isinstance(status, int) else 0)
