"""Reaching other machines: OpenSSH command lines (the user's own config, keys, agent and jump hosts),
``srun`` inside a Slurm allocation, and which host names mean this machine.

Nothing here listens on a port: every remote process is a child of an ``ssh`` (or ``srun``) client,
talking over its stdin and stdout.

Environment:
- ``ZBENCH_SSH_CONFIG``: an ssh config file passed with ``-F`` (default: the user's ``~/.ssh/config``).
- ``ZBENCH_SSH_OPTS``: more ssh options, shell-quoted (e.g. ``-p 2222 -i ~/.ssh/lab``).
- ``ZBENCH_REMOTE_PYTHON``: the command that runs the remote zbench's Python (default ``python3``;
  e.g. ``~/venvs/zbench/bin/python``). It must import the same zbench version as this machine.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
from collections.abc import Sequence

# Host names are checked where the config file is read too (zbench.settings), which must not
# import the jobs package: the one check lives in a module of its own.
from zbench.hostnames import LOCAL_NAMES, split_host

ENV_SSH_CONFIG = "ZBENCH_SSH_CONFIG"
ENV_SSH_OPTS = "ZBENCH_SSH_OPTS"
ENV_REMOTE_PYTHON = "ZBENCH_REMOTE_PYTHON"


def is_local(host: str) -> bool:
    """Hosts run as local processes, not over ssh (an ssh-config alias of this machine is remote;
    so is ``localhost:PORT``, which names an sshd)."""
    return host in LOCAL_NAMES


def ssh_base(host: str, *, connect_timeout: int = 10) -> list[str]:
    """``ssh`` with no prompts (a missing key fails at once instead of waiting for a password),
    keep-alives (a dead peer is noticed in ~30 s), the user's options, and ``-p`` for a
    ``HOST:PORT``. The host is checked again here (:func:`split_host`): nothing that starts with
    ``-`` reaches ssh as its destination."""
    name, port = split_host(host)
    argv = ["ssh"]
    config = os.environ.get(ENV_SSH_CONFIG)
    if config:
        argv += ["-F", config]
    argv += [
        "-o",
        "BatchMode=yes",
        "-o",
        f"ConnectTimeout={connect_timeout}",
        "-o",
        "ServerAliveInterval=10",
        "-o",
        "ServerAliveCountMax=3",
    ]
    argv += shlex.split(os.environ.get(ENV_SSH_OPTS, ""))
    if port is not None:
        argv += ["-p", str(port)]
    return [*argv, name]


def remote_python() -> list[str]:
    """The Python command to run on other machines (``ZBENCH_REMOTE_PYTHON``, default python3)."""
    return shlex.split(os.environ.get(ENV_REMOTE_PYTHON, "python3"))


def ssh_command(host: str, remote_argv: Sequence[str]) -> list[str]:
    """The local argv that runs ``remote_argv`` on ``host``; ``remote_argv`` is quoted once for the
    remote shell (ssh joins its arguments with spaces and hands them to the login shell)."""
    return [*ssh_base(host), "--", shlex.join(remote_argv)]


def zbench_remote(host: str, args: Sequence[str], ssh_opts: Sequence[str] = ()) -> list[str]:
    """``zbench ARGS`` on ``host`` (``python -m zbench``), local or over ssh; ``ssh_opts`` are
    more ssh options for this host alone (a fleet's ``[hosts]`` table)."""
    import sys

    if is_local(host):
        return [sys.executable, "-m", "zbench", *args]
    argv = ssh_command(host, [*remote_python(), "-m", "zbench", *args])
    return [argv[0], *ssh_opts, *argv[1:]]


CHECK_CONNECT_S = 5  # ssh's ConnectTimeout when checking hosts before a job is queued
CHECK_TIMEOUT_S = 30.0  # the whole check: connect, log in, start the remote zbench


def unreachable(hosts: Sequence[str], timeout: float = CHECK_TIMEOUT_S) -> dict[str, str]:
    """Of ``hosts`` (ssh names, each at most once), those where ``zbench --version`` does not run
    over ssh (no prompts, a short connect timeout), each with a one-line reason; all in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    def why(host: str) -> str | None:
        remote = shlex.join([*remote_python(), "-m", "zbench", "--version"])
        argv = [*ssh_base(host, connect_timeout=CHECK_CONNECT_S), "--", remote]
        try:
            proc = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"no answer over ssh within {timeout:g} s"
        except OSError as exc:
            return f"cannot run ssh: {exc.strerror or exc}"
        if proc.returncode == 0:
            return None
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        if proc.returncode == 255:  # ssh's own failure: it never ran the command
            return f"ssh failed: {last}"
        return f"zbench does not start there ({shlex.join(remote_python())} -m zbench): {last}"

    unique = list(dict.fromkeys(hosts))
    if not unique:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(unique))) as pool:
        reasons = dict(zip(unique, pool.map(why, unique), strict=True))
    return {h: r for h, r in reasons.items() if r is not None}


def address_of(host: str) -> str:
    """The address other nodes reach ``host`` at: 127.0.0.1 for this machine, else the HostName
    that ssh's own config resolution gives the alias (``ssh -G``), else the name itself."""
    if is_local(host):
        return "127.0.0.1"
    if shutil.which("ssh"):
        base = ssh_base(host)
        try:
            out = subprocess.run(
                [*base[:-1], "-G", base[-1]],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            if key.lower() == "hostname" and value.strip():
                return value.strip()
    return split_host(host)[0].rpartition("@")[2]


def is_loopback(address: str) -> bool:
    """Whether ``address`` is this machine's loopback (127.x, ::1, localhost)."""
    return address in ("127.0.0.1", "::1", "localhost") or address.startswith("127.")


def free_port() -> int:
    """A port free on this machine now (for a rendezvous on this machine)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def slurm_hosts(nodelist: str) -> list[str]:
    """A Slurm node list (``gpu[01-03,07],login1``) as host names: ``scontrol show hostnames`` when
    Slurm's tools are here, else this expansion of the common forms (one bracket group a name)."""
    if shutil.which("scontrol"):
        try:
            out = subprocess.run(
                ["scontrol", "show", "hostnames", nodelist],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout.split()
            if out:
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    hosts: list[str] = []
    for prefix, group, plain in re.findall(r"([^,\[]+)\[([^\]]+)\]|([^,\[\]]+)", nodelist):
        if plain:
            hosts.append(plain)
            continue
        for part in group.split(","):
            lo, _, hi = part.partition("-")
            if not hi:
                hosts.append(prefix + lo)
                continue
            for n in range(int(lo), int(hi) + 1):
                hosts.append(f"{prefix}{n:0{len(lo)}d}")
    return hosts
