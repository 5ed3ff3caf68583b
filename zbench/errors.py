"""Errors that reach the user as one line on stderr and an exit status, wherever they are raised.

``zbench.cli.main`` catches :class:`ZbenchError`: packages raise it (or a subclass) for bad input they
can only detect deep down, such as a ``--db`` that is not a database, instead of each command
repeating the same try/except.
"""

from __future__ import annotations


class ZbenchError(Exception):
    """A problem the user can fix; ``exit_code`` 2 = bad usage or input, 1 = the work failed."""

    exit_code = 2
