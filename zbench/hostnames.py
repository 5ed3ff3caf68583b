"""Host names as zbench takes them (``--hosts``, ``--nodes``, the config file's ``[hosts]``): the
one check, standard library only, so the settings and the jobs package both read it."""

from __future__ import annotations

import re

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "local"})


# What a host name, an ssh config alias, user@host, host:port or an IPv6 address is made of:
# letters, digits and . - _ @ : [ ] % (a scope id); a quote, a slash or a blank is none of them.
_HOST_CHARS = re.compile(r"[\w.@:\[\]%-]+")


class HostError(ValueError):
    """A host that must not reach ssh; the message says why (callers add where it came from)."""


def split_host(text: str) -> tuple[str, int | None]:
    """``[USER@]HOST`` or ``[USER@]HOST:PORT`` as (destination, port or None). The one check of a
    host name wherever it comes from (``--hosts``, ``--nodes``, the config file's ``[hosts]``):
    a name starting with ``-`` would reach ssh as an option, so it is refused, as is any
    character no host name has (a blank, a quote, a control character). Raises :class:`HostError`."""
    if text.startswith("-") or not _HOST_CHARS.fullmatch(text):
        raise HostError(f"{text!r} is not a host name (HOST, USER@HOST or HOST:PORT)")
    if text in LOCAL_NAMES or text.count(":") != 1:  # an IPv6 address has several colons
        return text, None
    name, _, port = text.partition(":")
    if not name or name.startswith("-"):
        raise HostError(f"{text!r} has no host name before its port (HOST:PORT)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise HostError(f"{text!r}: HOST:PORT wants a port from 1 to 65535")
    return name, int(port)
