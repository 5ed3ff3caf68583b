"""Errors that reach the user as one line on stderr and an exit status, wherever they are raised.

``zbench.cli.main`` catches :class:`ZbenchError`: packages raise it (or a subclass) for bad input they
can only detect deep down, such as a ``--db`` that is not a database, instead of each command
repeating the same try/except.

The one hierarchy of errors that carry an exit status (each a ``ZbenchError``; most also a
``ValueError`` or ``LookupError`` so older ``except`` clauses still hold): ``paths.DataDirError``
and ``CacheBusy``, ``store.StoreError``, ``settings.SettingsError``, ``jobs.api.JobSpecError`` and
``JobNotFound``, ``jobs.suite_values.SuiteError``, ``jobs.probe_submit.ProbeError``,
``gpuids.GpuRequestError``, ``results.export.FormatError``, ``results.report.ReportError`` (exit 1),
``fleet.gather.HostsError``, ``cli.results.CompareError``.
``contract.options.UsageError`` stays a plain ``ValueError``: the contract imports no zbench module.
"""

from __future__ import annotations

import errno


class ZbenchError(Exception):
    """A problem the user can fix; ``exit_code`` 2 = bad usage or input, 1 = the work failed."""

    exit_code = 2


# errno values that mean the path given is wrong (bad input), not that the work failed
_BAD_PATH = {errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.EACCES, errno.EROFS, errno.ENOENT}
_BAD_PATH |= {errno.EPERM}  # a place no one may write (/sys): as a read-only folder is


def bad_path(exc: OSError) -> bool:
    """Whether ``exc`` says the path given is wrong (bad input, exit 2), not that the work
    failed."""
    return exc.errno in _BAD_PATH


def os_error_exit(exc: OSError) -> tuple[str, int]:
    """One line and an exit status for an ``OSError`` that reached the top: 2 when the path given
    is wrong (not a folder, read-only, missing), 1 when the work failed (disk full, I/O error)."""
    what = exc.strerror or str(exc)
    message = f"{exc.filename}: {what}" if exc.filename is not None else f"cannot write: {what}"
    return message, 2 if bad_path(exc) else 1
