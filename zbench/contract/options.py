"""One option of a job kind (:class:`Opt`) and how argparse takes it: the plumbing that the
runner's parser (``contract.config``) and the demos' (``contract.demo_options``) share.

Standard library only, like the rest of ``contract``: a bad option raises :class:`UsageError`, one
line, never argparse's exit.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


class UsageError(ValueError):
    """Bad runner options: reported as one line, exit status 2."""

    def naming(self, name: Callable[[list[str]], str]) -> str:
        """The message with its option in the words of where it was given: argparse's ``argument
        --batch-size: ...`` becomes ``name(["--batch-size"]): ...`` (a suite file's key, the launch
        dialog's label); ``name`` gets every name of the option (``--repeat/--repeats``)."""
        m = re.match(r"argument (\S+): (.*)", str(self), re.S)
        return str(self) if m is None else f"{name(m[1].split('/'))}: {m[2]}"


_GIVEN = "_zbench_given"  # the values each option took in one parse (OnceAction), then dropped


# argparse's "invalid choice: 'fly' (choose from 'train', 'infer')" (Python 3.12.8+ leaves the
# choices unquoted), in the words of zbench's other value errors: "must be ..., got ...".
_CHOICE = re.compile(r"invalid choice: (.*) \(choose from (.*)\)", re.S)


def one_of(choices: Iterable[str], value: object) -> str:
    """The one wording of a value that is none of the choices: ``must be one of train, infer, got
    'fly'`` (a run option, a results or jobs filter, an export format, a suite file's key)."""
    return f"must be one of {', '.join(choices)}, got {value!r}"


def plain_choice(message: str) -> str:
    """An argparse error about a choice in the words of :func:`one_of`."""
    found = _CHOICE.search(message)
    if found is None:
        return message
    choices = [c.strip().strip("'") for c in found[2].split(",")]
    try:  # argparse gives the value as its repr
        value: object = ast.literal_eval(found[1])
    except (ValueError, SyntaxError):
        value = found[1]
    return message[: found.start()] + one_of(choices, value)


class UsageParser(argparse.ArgumentParser):
    """An argparse parser whose errors raise `UsageError` instead of exiting (the runner's and
    the demos' parsers). No abbreviations: ``zbench demo snake --minute 3`` ran as ``--minutes 3``
    where ``zbench run resnet50 --step 3`` (Click) is refused, and an option added later would
    have made a typed prefix ambiguous."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        raise UsageError(plain_choice(message))

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, rest = super().parse_known_args(args, namespace)
        if hasattr(parsed, _GIVEN):
            delattr(parsed, _GIVEN)
        return parsed, rest


class OnceAction(argparse.Action):
    """Store an option's one value, refusing a second: argparse keeps the last, so
    ``--minutes 1 --minutes 5`` ran five minutes as if the first had not been typed."""

    def __call__(
        self, parser: Any, namespace: Any, values: Any, option_string: str | None = None
    ) -> None:
        given = getattr(namespace, _GIVEN, {})
        setattr(namespace, _GIVEN, given)
        if self.dest in given:
            both = f"{given[self.dest]}, {values}"
            raise argparse.ArgumentError(self, f"given twice ({both}): give it once")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


@dataclass(frozen=True)
class Opt:
    """One option of a job kind: the config field it sets, its kind (int, float, str, bool:
    ``--x/--no-x``, choice, or switch: one flag per choice, ``--train`` / ``--animate``, stored
    under ``name``), default, help and allowed values. The runner's options (:data:`RUN_OPTIONS`)
    and each demo's (``contract.demos``) are rows of it; their parsers, ``-h`` and the TUI's launch
    dialog are built from those rows."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None  # the least value (a demo's float: exclusive)
    high: float | None = None
    multiple_of: int | None = None
    default_text: str = ""  # what a None default means, in a few words ("the preset's")
    aliases: tuple[str, ...] = ()
    # A file or folder: made absolute where it is parsed, in the user's folder (the job runs in
    # the supervisor's, which may be another); the default and webcam:N are words, kept as given.
    path: bool = False

    @property
    def flag(self) -> str:
        """The option on the command line (``--batch-size``)."""
        return "--" + self.name.replace("_", "-")

    @property
    def no_flag(self) -> str:
        """A bool's other form (``--no-compile``)."""
        return "--no-" + self.flag[2:]

    @property
    def typed(self) -> tuple[str, ...]:
        """Every way the option is typed: its flag and aliases, a bool's ``--no-`` form, a
        switch's one flag per choice (``--train``, ``--animate``)."""
        if self.kind == "switch":
            return tuple("--" + choice for choice in self.choices)
        return (self.flag, *self.aliases, *((self.no_flag,) if self.kind == "bool" else ()))

    @property
    def shown_default(self) -> str:
        """The default as help prints it: the value, or what ``None`` means."""
        if self.default is None:
            return self.default_text
        if self.kind == "bool":
            return "on" if self.default else "off"
        return str(self.default)


def typed_flags(options: Iterable[Opt]) -> list[str]:
    """Every flag a table's options are typed as (``Opt.typed``): what a mistyped one is near."""
    return [flag for opt in options for flag in opt.typed]


def _bound(value: float) -> str:
    """A bound as help and errors print it: 10,000,000 (grouped, as every figure zbench prints)."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def number_type(opt: Opt) -> Callable[[str], float | int]:
    """The one parser of an int or float option (the runner's and each demo's): a finite number
    within the option's bounds (a float's lower bound is exclusive: minutes must be more than 0;
    an int's inclusive), else an ``ArgumentTypeError`` naming the bounds."""
    whole = opt.kind == "int"

    def parse(text: str) -> float | int:
        try:
            value: float | int = int(text) if whole else float(text)
        except ValueError:
            what = "a whole number" if whole else "a number"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        low, high = opt.low, opt.high
        too_low = low is not None and (value < low if whole else value <= low)
        if too_low or (high is not None and value > high):
            if low is None:
                span = f"at most {_bound(high or 0)}"
            else:
                above = "at least" if whole else "more than"
                span = f"{above} {_bound(low)}"
                span += f" and at most {_bound(high)}" if high is not None else ""
            raise argparse.ArgumentTypeError(f"must be {span}, got {text.strip()}")
        if opt.multiple_of and int(value) % opt.multiple_of:
            raise argparse.ArgumentTypeError(
                f"must be a multiple of {opt.multiple_of}, got {text.strip()}"
            )
        return value

    return parse


def path_type(opt: Opt) -> Callable[[str], str]:
    """The parser of a ``path`` option: the value made absolute against this process's folder,
    ``~`` expanded (no shell expands it in a suite file, a launch dialog or ``--data=~/x``). A
    blank one (``--out "$UNSET"``) is refused: it named the folder the job happened to run in."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"needs a file or folder name, got {text!r}")
        if text == opt.default or text.startswith("webcam:"):
            return text
        return os.path.abspath(os.path.expanduser(text))

    return parse


def argparse_kwargs(opt: Opt) -> dict[str, Any]:
    """How argparse takes an option of this kind (the runner's and the demos' parsers alike):
    on/off, a choice, a checked number, a path made absolute, else text."""
    if opt.kind == "bool":
        return {"action": argparse.BooleanOptionalAction}
    if opt.kind == "choice":
        return {"choices": opt.choices, "action": OnceAction}
    if opt.kind in ("int", "float"):
        return {"type": number_type(opt), "action": OnceAction}
    return {"type": path_type(opt), "action": OnceAction} if opt.path else {"action": OnceAction}
