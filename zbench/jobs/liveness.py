"""Is the supervisor alive? Starting one, and marking the jobs of a dead one ``lost``.

One supervisor runs per database: it holds an exclusive ``flock`` on ``<db>.supervisor.lock`` for its
whole life (the kernel drops the lock when the process dies, even by SIGKILL) and writes its pid and a
heartbeat to the ``supervisor`` table every second. On the same host a supervisor is alive while its
process runs or the lock is held, however late its heartbeat; for another host (a database on a
shared disk), it is dead when its heartbeat is older than ``STALE_S``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from zbench import paths
from zbench.jobs.states import JobState
from zbench.jobs.timings import check_env_seconds
from zbench.store import Store

STALE_S = 30.0
TAIL_LINES = 40
LOST_GRACE_S = 5.0  # SIGTERM to a lost job's runner, then SIGKILL after this long


def lock_path(db_path: Path) -> Path:
    """``<db>.supervisor.lock`` beside the real file: a symlink to the database, or a path through
    a symlinked folder, names the same lock, so the database gets one supervisor (a second hard
    link is refused by the store: SQLite cannot keep one database under two names)."""
    real = db_path.resolve()
    return real.with_name(real.name + ".supervisor.lock")


def try_lock(db_path: Path) -> IO[str] | None:
    """The supervisor lock, held until the returned file is closed; None when another holds it."""
    try:
        fh = paths.open_private(lock_path(db_path))
    except OSError:
        return None  # cannot even create it (a read-only folder): no supervisor can hold it
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        return None
    return fh


# Probes of a supervisor lock and supervisor starts, one at a time in this process. The probe in
# lock_held takes the lock for a moment; a supervisor that another thread starts in that moment
# inherits the probe's descriptor until its exec, and the lock stays taken while any descriptor of
# it is open. A try_lock then found the lock held and started no supervisor: two databases
# submitted to at once from two threads left a job queued with no supervisor.
_PROBE_OR_SPAWN = threading.Lock()


def lock_held(db_path: Path) -> bool:
    """Whether a process holds the supervisor's lock for ``db_path``: a supervisor is alive."""
    with _PROBE_OR_SPAWN:
        try:
            fh = paths.open_private(lock_path(db_path))
        except OSError:
            return False  # no lock file can exist here (a read-only folder), so none is held
        with fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
        return False


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    import psutil  # here: `zbench jobs` with no supervisor never needs it

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def looks_like_supervisor(pid: int) -> bool:
    """A live process running ``zbench.jobs.supervisor`` (not some other process that reused the
    pid)."""
    import psutil

    if not pid_alive(pid):
        return False
    try:
        return any("zbench.jobs.supervisor" in arg for arg in psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


def supervisor_alive(store: Store, *, ignore_lock: bool = False) -> bool:
    """On this host, a live supervisor process or a held supervisor lock is alive however late its
    heartbeat (a loaded machine can stall it); the heartbeat's age decides only for another host.
    ``ignore_lock``: the caller holds the lock itself."""
    sup = store.supervisor()
    if sup is not None and sup["host"] != socket.gethostname():
        return time.time() - sup["heartbeat"] < STALE_S
    if sup is not None and looks_like_supervisor(int(sup["pid"])):
        return True
    return not ignore_lock and lock_held(store.path)


def detect_lost(store: Store, *, ignore_lock: bool = False) -> list[int]:
    """Mark the running jobs of a dead supervisor ``lost`` (with the reason and their log tail) and
    stop their orphaned runners. Returns the ids marked. ``ignore_lock``: the caller is the new
    supervisor and holds the lock."""
    if supervisor_alive(store, ignore_lock=ignore_lock):
        return []
    sup = store.supervisor()
    running = store.jobs((JobState.RUNNING,))
    if sup is None and not running:
        return []
    if sup is None:
        why = "no supervisor was running it"
    elif not pid_alive(int(sup["pid"])):
        why = f"supervisor (pid {sup['pid']}) died"
    else:
        age = time.time() - sup["heartbeat"]
        why = f"supervisor (pid {sup['pid']}) stopped answering (no heartbeat for {age:.0f} s)"
    marked = []
    for job in running:
        reason = why
        pid = int(job["pid"]) if job["pid"] else None
        if pid is not None and pid_alive(pid):
            stopped = stop_tree(pid, LOST_GRACE_S)
            reason += (
                f"; its runner (pid {pid}) was stopped"
                if stopped
                else f"; its runner (pid {pid}) could not be stopped and may still hold its GPUs"
            )
        # The runner may have reported its result before the supervisor died: keep it, and the
        # job counts as done.
        from zbench.jobs.records import RESULT_STORED, stored_result  # only for a lost job

        run_id = stored_result(store, job)
        if run_id is not None:
            reason += f"; {RESULT_STORED}"
        changed = store.update_job(
            job["id"],
            only_if_state=(JobState.RUNNING,),
            state=JobState.LOST if run_id is None else JobState.DONE,
            reason=reason,
            ended=time.time(),
            log_tail=_log_tail(job.get("log_path")),
            run_id=run_id,
        )
        if changed:
            marked.append(job["id"])
    if sup is not None:
        store.clear_supervisor(int(sup["pid"]))
    return marked


def stop_tree(pid: int, grace: float) -> bool:
    """SIGTERM to ``pid``'s group and descendants, SIGKILL to whatever of them is left after
    ``grace`` seconds (a runner that ignores SIGTERM must not keep its GPUs while the next job
    starts). True once all of them have gone (waits up to 5 s after the SIGKILL)."""
    import psutil

    try:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        procs = []
    signal_tree(pid, signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace)
    if not alive:
        return True
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    _, alive = psutil.wait_procs(alive, timeout=5.0)
    return not alive


def signal_tree(pid: int, sig: int) -> None:
    """``sig`` to the process group led by ``pid`` and to every descendant of ``pid``, including
    those in sessions of their own (torchrun's workers)."""
    import psutil

    try:
        procs = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        procs = []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(sig)


def _log_tail(log_path: str | None) -> str | None:
    if not log_path or not Path(log_path).exists():
        return None
    return "\n".join(tail_lines(Path(log_path)))


def tail_lines(path: Path, lines: int = TAIL_LINES) -> list[str]:
    """Last lines of a possibly large file, reading only its end."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            data = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return data.splitlines()[-lines:]


def child_env() -> dict[str, str]:
    """The environment for processes zbench starts: its own, plus this zbench on the path so a
    source checkout works without being installed."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def ensure_supervisor(db_path: Path) -> int | None:
    """Start a detached supervisor unless one holds the lock. Returns the new pid, or None.

    The lock is taken here and handed to the new supervisor (an inherited descriptor shares the
    lock), so from now on it is held without a gap: a second look while the supervisor is still
    starting sees it alive and starts no other."""
    check_env_seconds()  # what the supervisor reads as it starts: a bad one is said here
    with _PROBE_OR_SPAWN:
        return _spawn_supervisor(db_path)


def _spawn_supervisor(db_path: Path) -> int | None:
    lock = try_lock(db_path)
    if lock is None:
        return None
    log = paths.open_private(paths.home() / "supervisor.log", "ab")
    with lock, log:
        fd = lock.fileno()
        cmd = [sys.executable, "-m", "zbench.jobs.supervisor", "--db", str(db_path)]
        proc = subprocess.Popen(
            [*cmd, "--lock-fd", str(fd)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # no SIGHUP from the terminal, no Ctrl-C from the shell
            close_fds=True,
            pass_fds=(fd,),
            env=child_env(),
        )
    return proc.pid


def adopt_lock(fd: int) -> IO[str] | None:
    """The supervisor lock handed over as descriptor ``fd`` by :func:`ensure_supervisor`."""
    try:
        fh = open(fd, "a+", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None
    os.set_inheritable(fd, False)
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)  # already ours: this only confirms it
    except OSError:
        fh.close()
        return None
    return fh
