"""The fleet view's machines and how to reach them: ``--hosts`` names resolved against the config
file's ``[hosts]`` table, and :class:`SshTransport` (telemetry, job lists and launches over ssh)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any, Protocol

from zbench.fleet.gather import HostsError, parse_hosts, remote_argv
from zbench.settings import HostEntry

TIMEOUT_S = 30.0


def resolve_hosts(text: str, table: Sequence[HostEntry]) -> list[HostEntry]:
    """``--hosts`` (``a,b`` or ``all`` for every host of ``[hosts]``) as entries; a name the table
    does not hold is reached by that name. Raises :class:`HostsError` (one line, exit 2)."""
    known = {h.name: h for h in table}
    if text.strip() == "all":
        if not table:
            raise HostsError("--hosts all: the config file has no [hosts] table")
        return list(table)
    return [known.get(name, HostEntry(name)) for name in parse_hosts(text)]


class Transport(Protocol):
    """How the fleet view reaches its hosts; every method may block (called from threads)."""

    def monitor_argv(self, host: str, interval: float) -> list[str]: ...
    def jobs(self, host: str) -> list[dict[str, Any]]: ...
    def submit(self, host: str, args: Sequence[str]) -> str: ...


class SshTransport:
    """``zbench ...`` on each host over ssh (``localhost`` runs locally)."""

    def __init__(self, hosts: Sequence[HostEntry], timeout: float = TIMEOUT_S) -> None:
        self.hosts = {h.name: h for h in hosts}
        self.timeout = timeout

    def argv(self, host: str, args: Sequence[str]) -> list[str]:
        return remote_argv(self.hosts.get(host, HostEntry(host)), args)

    def _call(self, host: str, args: Sequence[str]) -> str:
        try:
            proc = subprocess.run(
                self.argv(host, args),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"no answer within {self.timeout:g} s") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise RuntimeError(last)
        return proc.stdout

    def monitor_argv(self, host: str, interval: float) -> list[str]:
        return self.argv(host, ["monitor", "--json", "--interval", f"{interval:g}"])

    def jobs(self, host: str) -> list[dict[str, Any]]:
        data = json.loads(self._call(host, ["jobs", "--json"]))
        return [dict(r, host=host) for r in data if isinstance(r, dict)]

    def submit(self, host: str, args: Sequence[str]) -> str:
        """``zbench ARGS`` (a ``run``/``demo``/``suite`` with ``--detach``) on ``host``; its output."""
        return self._call(host, args).strip()
