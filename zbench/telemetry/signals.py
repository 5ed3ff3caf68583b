"""Signalling a GPU process on the user's behalf: TERM first, KILL if it stays; refuse what we may not.

The checks come before the signal so that the user reads one clear line ("owned by alice; only root
may signal it") instead of a bare EPERM. The kernel still has the last word: an ``AccessDenied`` from
psutil becomes the same kind of refusal.
"""

from __future__ import annotations

import os
import signal

import psutil


class SignalRefused(Exception):
    """The process may not (or need not) be signalled; the message says why in one line."""


SIGNALS = {"TERM": signal.SIGTERM, "KILL": signal.SIGKILL}


def check(pid: int) -> psutil.Process:
    """The process, if the current user may signal it; else :class:`SignalRefused`."""
    if pid <= 1:
        raise SignalRefused(f"pid {pid} is the system's; refusing to signal it")
    if pid == os.getpid():
        raise SignalRefused("that is zbench itself; quit with q instead")
    try:
        proc = psutil.Process(pid)
        uids = proc.uids()
    except psutil.NoSuchProcess:
        raise SignalRefused(f"pid {pid} has already exited") from None
    except psutil.AccessDenied:
        raise SignalRefused(f"pid {pid}: permission denied") from None
    me = os.geteuid()
    if me != 0 and me not in (uids.real, uids.effective):
        try:
            owner = proc.username()
        except psutil.Error:
            owner = str(uids.real)
        raise SignalRefused(f"pid {pid} belongs to {owner}; only root may signal it")
    return proc


def send(pid: int, name: str) -> None:
    """Send TERM or KILL to ``pid`` after :func:`check`."""
    if name not in SIGNALS:
        raise SignalRefused(f"unknown signal {name!r} (TERM or KILL)")
    proc = check(pid)
    try:
        proc.send_signal(SIGNALS[name])
    except psutil.NoSuchProcess:
        raise SignalRefused(f"pid {pid} has already exited") from None
    except psutil.AccessDenied:
        raise SignalRefused(f"pid {pid}: permission denied") from None
