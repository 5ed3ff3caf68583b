"""One host's live telemetry: ``zbench monitor --json`` over ssh, read line by line in a thread.

A host that drops (ssh fails, the connection dies, the remote zbench exits) is ``lost`` and the
stream reconnects by itself, waiting 1, 2, 4 ... up to 30 s between attempts; a connection that
delivers again is ``live``. Nothing listens on either side: the remote zbench is a child of sshd.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from zbench.jobs.remote import zbench_remote
from zbench.telemetry.snapshot import Snapshot, from_dict

BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


@dataclass(frozen=True)
class HostStatus:
    """A host's stream state (connecting, live, lost), why it was lost, and when it retries."""

    host: str
    state: str  # "connecting" | "live" | "lost"
    reason: str | None = None
    retry_in_s: float | None = None


class HostStream:
    """``on_snapshot(host, snapshot)`` and ``on_status(status)`` are called from the stream's
    thread (a UI posts them to its own loop)."""

    def __init__(
        self,
        host: str,
        on_snapshot: Callable[[str, Snapshot], None],
        on_status: Callable[[HostStatus], None],
        interval: float = 1.0,
        *,
        command: Sequence[str] | None = None,
        backoff: Sequence[float] = BACKOFF_S,
    ) -> None:
        """``command``: the argv that prints the JSON lines (default: ``zbench monitor --json`` on
        ``host``); ``backoff``: the waits between attempts, the last one repeated."""
        self.host = host
        self.command = list(command) if command is not None else None
        self.backoff = tuple(backoff)
        self.on_snapshot = on_snapshot
        self.on_status = on_status
        self.interval = interval
        self.proc: subprocess.Popen[bytes] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"zbench-host-{host}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            self.on_status(HostStatus(self.host, "connecting"))
            delivered, reason = self._follow()
            if self._stop.is_set():
                return
            attempt = 0 if delivered else attempt + 1
            wait = self.backoff[min(attempt, len(self.backoff) - 1)]
            self.on_status(HostStatus(self.host, "lost", reason, wait))
            self._stop.wait(wait)

    def _follow(self) -> tuple[bool, str]:
        """Read one connection until it ends; (whether it delivered a snapshot, why it ended)."""
        argv = self.command or zbench_remote(
            self.host, ["monitor", "--json", "--interval", str(self.interval)]
        )
        try:
            self.proc = proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            return False, str(exc)
        delivered = False
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                snap = from_dict(Snapshot, json.loads(raw))
            except (ValueError, TypeError):
                continue
            if not delivered:
                delivered = True
                self.on_status(HostStatus(self.host, "live"))
            self.on_snapshot(self.host, snap)
        rc = proc.wait()
        err = proc.stderr.read().decode("utf-8", "replace").strip() if proc.stderr else ""
        reason = (err.splitlines() or [f"exit status {rc}"])[-1]
        if rc == 255:
            reason = f"ssh: {reason}"
        return delivered, reason
