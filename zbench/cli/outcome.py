"""How the results commands end when they cannot show what was asked: the one rule for an empty
selection and the one way to say an error, ``zbench: COMMAND: reason`` as Click's usage errors read.

zbench's exit statuses (``cli/__init__``): 0 ok, 1 the work failed, 2 bad usage or input. For the
commands that read results (``results``, ``demo results``, ``export``, ``report``, ``plot``,
``compare``, ``export --hosts``) they mean:

- 2, bad input: a filter value no table knows and no stored run has (a typo), a run, job or suite
  run that does not exist, a bad date or format, two runs that cannot be compared.
- An empty selection (an empty store, or good filters that match no run) is an answer where a
  listing was asked for: ``results`` and ``demo results`` print their table's one line, or an
  empty JSON document with ``--json``, and exit 0 (``export --hosts`` reads each host's
  ``results --json`` so). Where a file or a figure was asked for (``export`` in every format,
  ``demo results -f``, ``report``, ``plot``) or two runs to work on (``compare``), it is work that
  could not be done: one line on stderr, nothing written, exit 1; an empty file must not pass for
  an export of the runs asked for.
"""

from __future__ import annotations

import sys
from typing import Any

from typer.core import _click

from zbench.cli.usage import command_path

BAD_INPUT = 2
NOTHING_SELECTED = 1  # where a file, a figure or runs to compare were asked for
COMMAND_KEY = "zbench.command"  # Click's ctx.meta: a command that reads its words itself


# On an error that ended a command: the command's name (set by cli.usage.ZbenchGroup).
COMMAND_ATTR = "zbench_command"
SUBCOMMAND_KEY = "zbench.subcommand"  # the command zbench was asked for, set by its root callback
_invocation: dict[str, Any] = {}  # the ctx.meta of the latest invocation (every context shares it)


def remember_invocation(ctx: Any) -> None:
    """Called by the root callback: keep the invocation's ``ctx.meta`` (one dict for all its
    contexts), so an error raised where no context is current (Click's parser, or on the way out
    of the command) still names it."""
    global _invocation
    ctx.meta[SUBCOMMAND_KEY] = ctx.invoked_subcommand or ""
    _invocation = ctx.meta


def forget_invocation() -> None:
    """A new invocation starts: no command is named until its root callback runs."""
    global _invocation
    _invocation = {}


def command_name(ctx: Any = None) -> str:
    """The command running, as its errors name it (``export``, ``demo results``); "" outside one.
    ``zbench demo results`` is the ``demo`` command reading its words after ``results`` with a
    command of its own (``cli.filters.read_filters``), which leaves its name in ``ctx.meta``."""
    ctx = ctx or _click.globals.get_current_context(silent=True)
    if ctx is None:  # Click's parser failed, or the command is on its way out with an error
        return str(_invocation.get(COMMAND_KEY) or _invocation.get(SUBCOMMAND_KEY) or "")
    return str(ctx.meta.get(COMMAND_KEY) or command_path(ctx).removeprefix("zbench").strip())


def fail(message: str, code: int = BAD_INPUT, where: str | None = None) -> int:
    """``message`` on stderr as ``zbench: COMMAND: message`` (``where``: the command, when it has
    ended); returns ``code`` for the command's exit."""
    where = command_name() if where is None else where
    print(f"zbench: {where + ': ' if where else ''}{message}", file=sys.stderr)
    return code


def nothing_selected(said: str, *, listing: bool) -> int:
    """The end of a command that selected no run (the rule above): ``said`` on stdout and 0 for a
    listing, else on stderr after the command's name and 1."""
    if listing:
        print(said)
        return 0
    return fail(said, NOTHING_SELECTED)
