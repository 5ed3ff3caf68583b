"""Ask every host at once: ``zbench <command> --json`` over ssh (or locally for this machine), and
merge the rows, each keeping its machine in a ``host`` field. A host that cannot be reached is
reported, not fatal."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from zbench.csvcell import write_rows
from zbench.errors import ZbenchError
from zbench.hostnames import HostError, split_host
from zbench.jobs.remote import zbench_remote
from zbench.settings import HostEntry

TIMEOUT_S = 60.0


class HostsError(ZbenchError, ValueError):
    """A bad ``--hosts`` list (one line, exit 2)."""


def parse_hosts(text: str) -> list[str]:
    """``--hosts HOST[:PORT],...`` as names, each checked by ``hostnames.split_host`` (the check the
    config file's ``[hosts]`` gets too). Raises :class:`HostsError`."""
    hosts = [h.strip() for h in text.split(",")]
    for host in hosts:
        try:
            split_host(host)
        except HostError as exc:
            raise HostsError(f"--hosts wants HOST[:PORT],HOST..., got {text!r}: {exc}") from None
    if len(set(hosts)) != len(hosts):
        raise HostsError(f"--hosts names a host twice: {text!r}")
    return hosts


@dataclass
class Gathered:
    """What a fleet query gathered: every host's rows, and why each failed host gave nothing."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # host -> why it gave nothing


def remote_argv(host: HostEntry, args: Sequence[str]) -> list[str]:
    """``zbench ARGS`` on ``host`` as the config file's ``[hosts]`` reaches it (its ssh target and
    options), or locally for this machine."""
    return zbench_remote(host.ssh or host.name, args, shlex.split(host.options))


def _ask(host: HostEntry, args: Sequence[str], timeout: float) -> list[dict[str, Any]]:
    proc = subprocess.run(
        remote_argv(host, [*args, "--json"]),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise RuntimeError(last)
    data = json.loads(proc.stdout)
    rows = data if isinstance(data, list) else data.get("rows") or data.get("results") or []
    return [dict(r, host=host.name) for r in rows if isinstance(r, dict)]


def gather(hosts: Sequence[HostEntry], args: Sequence[str], timeout: float = TIMEOUT_S) -> Gathered:
    """``zbench ARGS --json`` on every host in parallel (each reached as the config file's
    ``[hosts]`` says, see ``fleet.hosts.resolve_hosts``); rows in host order."""
    out = Gathered()
    with ThreadPoolExecutor(max_workers=max(1, len(hosts))) as pool:
        futures = {h.name: pool.submit(_ask, h, args, timeout) for h in hosts}
        for host, fut in futures.items():
            try:
                out.rows += fut.result()
            except subprocess.TimeoutExpired:
                out.errors[host] = f"no answer within {timeout:g} s"
            except (OSError, RuntimeError, ValueError) as exc:
                out.errors[host] = str(exc) or type(exc).__name__
    return out


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV, ``host`` first; nested values as JSON."""
    keys: list[str] = ["host"]
    for r in rows:
        keys += [k for k in r if k not in keys]
    return write_rows(
        keys,
        ([_flat(r.get(k, "")) for k in keys] for r in rows),
    )


def _flat(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict | list) else value
