"""A throwaway OpenSSH server on 127.0.0.1 for tests: its own host key, user key and config.

``start_sshd(folder, hosts)`` returns an :class:`Sshd` whose ``client_config`` names each host as an
alias of 127.0.0.1 (with its own environment, ``SetEnv``), passed to zbench as ``ZBENCH_SSH_CONFIG``.
Raises ``Unavailable`` where no ``sshd`` is installed or it cannot start.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"


class Unavailable(RuntimeError):
    """No usable sshd here (the tests skip with this reason)."""


@dataclass
class Sshd:
    proc: subprocess.Popen[bytes]
    port: int
    client_config: Path
    key: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )


def start_sshd(folder: Path, hosts: dict[str, dict[str, str]]) -> Sshd:
    """sshd on a free port of 127.0.0.1; ``hosts``: alias -> environment its sessions get."""
    if not os.access(SSHD, os.X_OK) or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        raise Unavailable("needs OpenSSH (apt-get install openssh-server openssh-client)")
    if os.geteuid() == 0:
        try:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation
        except OSError as exc:
            raise Unavailable(f"sshd needs /run/sshd: {exc}") from None
    folder.mkdir(parents=True, exist_ok=True)
    host_key, user_key = folder / "host_key", folder / "id_test"
    _keygen(host_key)
    _keygen(user_key)
    authorized = folder / "authorized_keys"
    authorized.write_text(Path(f"{user_key}.pub").read_text())
    authorized.chmod(0o600)
    port = _free_port()
    server_config = folder / "sshd_config"
    server_config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\n"
        f"AuthorizedKeysFile {authorized}\nPidFile {folder / 'sshd.pid'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPermitRootLogin prohibit-password\nAcceptEnv ZBENCH_* FAKE_RUNNER_*\n"
        "LogLevel ERROR\n"
    )
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(server_config)],
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "sshd.log", "wb"),  # noqa: SIM115
    )
    lines = []
    for alias, env in hosts.items():
        lines += [
            f"Host {alias}",
            "  HostName 127.0.0.1",
            f"  Port {port}",
            f"  User {getpass.getuser()}",
            f"  IdentityFile {user_key}",
            "  IdentitiesOnly yes",
            "  StrictHostKeyChecking no",
            "  UserKnownHostsFile /dev/null",
            "  LogLevel ERROR",
        ]
        if env:
            lines.append("  SetEnv " + " ".join(f"{k}={v}" for k, v in env.items()))
    client_config = folder / "ssh_config"
    client_config.write_text("\n".join(lines) + "\n")
    sshd = Sshd(proc, port, client_config, user_key)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Unavailable(f"sshd exited: {(folder / 'sshd.log').read_text().strip()[-300:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return sshd
        time.sleep(0.1)
    sshd.stop()
    raise Unavailable("sshd did not listen within 10 s")
