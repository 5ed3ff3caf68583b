"""Settings: a TOML config file the user writes, and state zbench remembers between runs.

- ``config.toml`` in the platform's config directory (``$ZBENCH_CONFIG`` names another file;
  with ``$ZBENCH_HOME`` set, ``$ZBENCH_HOME/config.toml``). zbench only reads it.
- ``state.json`` in the platform's state directory (``$ZBENCH_HOME/state.json`` with ``$ZBENCH_HOME``):
  the theme, the refresh interval, the launch form's values, the results' sort and filter, the process
  table's sort and filter. zbench rewrites it (atomically) when one of them changes.

Precedence for the dashboard's refresh interval: ``--interval`` > ``$ZBENCH_INTERVAL`` > the config
file's ``[ui] interval`` > the remembered one > :data:`DEFAULT_INTERVAL`. Sampling for jobs is not
configured here: the supervisor samples at 0.5 s whatever the dashboard does.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from zbench.errors import ZbenchError

ENV_CONFIG = "ZBENCH_CONFIG"
ENV_INTERVAL = "ZBENCH_INTERVAL"
DEFAULT_INTERVAL = 1.0  # seconds between dashboard refreshes (nvitop and btop idle at 2 s)
MIN_INTERVAL = 0.05
# A live view refreshed less than once an hour is not live; the bound also refuses infinity, which
# a timer cannot schedule (`--interval inf` ended in a traceback).
MAX_INTERVAL = 3600.0


class SettingsError(ZbenchError, ValueError):
    """A config file or an override that cannot be used; the message says which and why."""


def _platform_dir(kind: str) -> Path:
    home = os.environ.get("ZBENCH_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    fn = platformdirs.user_config_dir if kind == "config" else platformdirs.user_state_dir
    return Path(fn("zbench", appauthor=False))


def config_path() -> Path:
    """The config file: ``ZBENCH_CONFIG`` if set, else config.toml in the platform's config dir."""
    env = os.environ.get(ENV_CONFIG)
    return Path(env).expanduser() if env else _platform_dir("config") / "config.toml"


def state_path() -> Path:
    """The file of remembered state: state.json in the platform's state folder."""
    return _platform_dir("state") / "state.json"


@dataclass(frozen=True)
class HostEntry:
    """One machine of the fleet (``zbench --hosts``): its name, how ssh reaches it (an alias or
    ``user@host``; default the name) and more ssh options for it alone (shell-quoted)."""

    name: str
    ssh: str | None = None
    options: str = ""


@dataclass(frozen=True)
class Config:
    """What ``config.toml`` may say (every key optional)::

    [ui]
    interval = 1.0        # dashboard refresh, seconds
    theme = "nord"        # any Textual theme name

    [hosts]               # the machines `zbench --hosts all` shows (any name works in --hosts)
    gpu1 = {}                                   # ssh gpu1
    gpu2 = "lab-gpu2"                           # ssh lab-gpu2 (an alias of ~/.ssh/config)
    gpu3 = { ssh = "me@10.0.0.3", options = "-p 2222" }
    """

    interval: float | None = None
    theme: str | None = None
    hosts: tuple[HostEntry, ...] = ()


def parse_hosts_table(table: object, where: str) -> tuple[HostEntry, ...]:
    """``[hosts]``: name -> "ssh alias" or a table with ``ssh`` and ``options`` (both optional)."""
    if not isinstance(table, dict):
        raise SettingsError(f"{where}: [hosts] must be a table")
    out = []
    for name, value in table.items():
        if isinstance(value, str):
            value = {"ssh": value}
        if not isinstance(value, dict):
            raise SettingsError(f"{where}: [hosts] {name} must be a string or a table")
        unknown = sorted(set(value) - {"ssh", "options"})
        if unknown:
            raise SettingsError(
                f"{where}: unknown key [hosts] {name}.{unknown[0]} (known: ssh, options)"
            )
        ssh, options = value.get("ssh"), value.get("options", "")
        if (ssh is not None and not isinstance(ssh, str)) or not isinstance(options, str):
            raise SettingsError(f"{where}: [hosts] {name}: ssh and options must be strings")
        from zbench.hostnames import HostError, split_host

        for text in (name, ssh) if ssh else (name,):  # checked as --hosts checks its names
            try:
                split_host(text)
            except HostError as exc:
                raise SettingsError(f"{where}: [hosts] {name}: {exc}") from None
        out.append(HostEntry(name, ssh or None, options))
    return tuple(out)


def parse_interval(value: object, where: str) -> float:
    """A sampling interval in seconds; SettingsError when not a number or outside
    [MIN_INTERVAL, MAX_INTERVAL]."""
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SettingsError(f"{where}: {value!r} is not a number of seconds") from None
    if not seconds >= MIN_INTERVAL:  # also refuses NaN
        raise SettingsError(f"{where}: {value!r} is below the minimum of {MIN_INTERVAL} s")
    if seconds > MAX_INTERVAL:
        raise SettingsError(f"{where}: {value!r} is above the maximum of {MAX_INTERVAL:g} s")
    return seconds


def _regular(path: Path) -> bool:
    """A regular file (through symlinks), or ``/dev/null`` (an empty config); a missing file
    raises ``FileNotFoundError``."""
    return stat.S_ISREG(path.stat().st_mode) or str(path) == os.devnull


UI_KEYS = ("interval", "theme")  # the keys of the config file's [ui] table


def load_config(path: Path | None = None) -> Config:
    """The config file's settings; an absent file is an empty config."""
    path = path or config_path()
    try:
        if not _regular(path):  # a FIFO or a device would block start-up, or read as anything
            raise SettingsError(f"{path}: not a regular file")
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc})") from None
    stray = sorted(set(data) - {"ui", "hosts"})
    if stray and stray[0] in UI_KEYS:
        raise SettingsError(f"{path}: {stray[0]} belongs in the [ui] table")
    if stray:
        raise SettingsError(f"{path}: unknown key {stray[0]} (known tables: [ui], [hosts])")
    ui = data.get("ui", {})
    if not isinstance(ui, dict):
        raise SettingsError(f"{path}: [ui] must be a table")
    unknown = sorted(set(ui) - set(UI_KEYS))
    if unknown:
        known = ", ".join(UI_KEYS)
        raise SettingsError(f"{path}: unknown key [ui] {unknown[0]} (known: {known})")
    interval = (
        None if "interval" not in ui else parse_interval(ui["interval"], f"{path}: [ui] interval")
    )
    theme = ui.get("theme")
    if theme is not None and not isinstance(theme, str):
        raise SettingsError(f"{path}: [ui] theme must be a string")
    hosts = parse_hosts_table(data.get("hosts", {}), str(path))
    return Config(interval=interval, theme=theme, hosts=hosts)


@dataclass
class State:
    """What zbench remembers. Unknown or malformed entries are dropped on load, never fatal: the
    state file is a convenience, and a bad one must not keep the TUI from starting."""

    theme: str | None = None
    interval: float | None = None
    launch: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    processes: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "theme": self.theme,
            "interval": self.interval,
            "launch": self.launch,
            "results": self.results,
            "processes": self.processes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        def mapping(key: str) -> dict[str, Any]:
            value = data.get(key)
            return dict(value) if isinstance(value, dict) else {}

        theme = data.get("theme")
        interval = data.get("interval")
        return cls(
            theme=theme if isinstance(theme, str) else None,
            interval=float(interval)
            if isinstance(interval, int | float) and MIN_INTERVAL <= interval <= MAX_INTERVAL
            else None,
            launch=mapping("launch"),
            results=mapping("results"),
            processes=mapping("processes"),
        )


def load_state(path: Path | None = None) -> State:
    """The remembered state; a fresh one when the file is missing, unreadable or not an object."""
    path = path or state_path()
    try:
        if not _regular(path):
            return State()
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return State()
    return State.from_json(data) if isinstance(data, dict) else State()


def save_state(state: State, path: Path | None = None) -> None:
    """Write atomically (a temporary file renamed over the old one): a crash never leaves half."""
    path = path or state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(state.to_json(), f, indent=2, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def resolve_interval(cli: float | None, config: Config, state: State) -> float:
    """The dashboard's refresh interval (see the module docstring for the precedence)."""
    if cli is not None:
        return parse_interval(cli, "--interval")
    env = os.environ.get(ENV_INTERVAL)
    if env:
        return parse_interval(env, f"${ENV_INTERVAL}")
    if config.interval is not None:
        return config.interval
    if state.interval is not None:
        return state.interval
    return DEFAULT_INTERVAL
