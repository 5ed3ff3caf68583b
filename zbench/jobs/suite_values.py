"""A suite file's values on their way to the parsers: each key as the flag its parser (the runner's
or a demo's) reads, its TOML kind checked first, and a value written back as the file wrote it, for
the one-line errors (:class:`SuiteError`) that name the file, the job and the key.
"""

from __future__ import annotations

from datetime import date, time
from typing import Any

from zbench.contract.options import Opt
from zbench.errors import ZbenchError


class SuiteError(ZbenchError, ValueError):
    """A suite that cannot be read: one line naming the file and the problem (exit status 2)."""


def flag(opt: Opt | None, key: str, value: Any, where: str, also: str = "") -> str:
    """One key of a job as the flag its parser reads (the runner's or a demo's), its TOML kind
    checked first (``also``: what else the key takes, ``gpus = "all"``)."""
    flag = "--" + key.replace("_", "-")
    wrong = _wrong_type(opt, value)
    if wrong:
        said = " (a TOML number is written without quotes)" if _quoted_number(value) else ""
        raise SuiteError(f"{where}: {key} must be {wrong}{also}, got {toml_text(value)}{said}")
    if isinstance(value, bool):
        return flag if value else "--no-" + flag[2:]
    if isinstance(value, int | float | str):
        return f"{flag}={value}"  # a value starting with - is a value, not a flag
    raise SuiteError(f"{where}: {key} must be a single value, got {toml_text(value)}")


def _wrong_type(opt: Opt | None, value: Any) -> str | None:
    """What an option's key takes, when ``value`` is a TOML value of another kind: true or false
    for an on/off option, a number for a number (``steps = "10"`` was read as 10, ``steps = true``
    as a bare ``--steps``: "expected one argument"), a string for the others (``compile = "yes"``
    said "ignored explicit argument", ``mode = 1`` "invalid choice: '1'")."""
    if opt is None:
        return None
    takes: tuple[type, ...] = {"bool": (bool,), "int": (int,), "float": (int, float)}.get(
        opt.kind, (str,)
    )
    if isinstance(value, takes) and (opt.kind == "bool") == isinstance(value, bool):
        return None
    if opt.kind == "bool":
        return "true or false"
    if opt.kind == "choice":
        return "one of " + ", ".join(repr(c) for c in opt.choices)
    return {"int": "a whole number", "float": "a number"}.get(opt.kind, "a string")


def _quoted_number(value: Any) -> bool:
    """A number written in quotes (``steps = "10"``)."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, str)


def toml_text(value: Any) -> str:
    """A value as the suite file writes it (``true``, not Python's ``True``; a date as a date)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, date | time):
        return value.isoformat()
    return repr(value)


def option_key(names: list[str], options: dict[str, Any]) -> str:
    """The file's key for an option of these names (the one it wrote, of several)."""
    keys = [name.lstrip("-").replace("-", "_") for name in names]
    return next((k for k in keys if k in options), keys[0])
