"""``zbench cache``: the size of the compile cache under the data directory, and ``clear``."""

from __future__ import annotations

import json

from rich.console import Console

from zbench import paths
from zbench.cli.options import err
from zbench.contract.options import one_of

ACTIONS = ("show", "clear")


def human(n: int) -> str:
    """Bytes as B, KiB, MiB or GiB."""
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def run_cache(action: str, json_out: bool = False) -> int:
    """Show the cache (per entry) or clear it; a bad action is one line on stderr, status 2."""
    if action not in ACTIONS:
        err(f"action: {one_of(ACTIONS, action)} (see zbench cache -h)")
        return 2
    where = paths.cache_dir()
    if action == "clear":
        try:  # refused while any job's runner holds the cache, whichever database it is in
            freed = paths.clear_cache()
        except paths.CacheBusy as exc:
            err(str(exc))
            return exc.exit_code
        if json_out:
            print(json.dumps({"path": str(where), "freed_bytes": freed}))
        else:
            Console(highlight=False, markup=False).print(f"cleared {human(freed)} from {where}")
        return 0
    usage = paths.cache_usage()
    if json_out:
        print(json.dumps({"path": str(where), "bytes": sum(usage.values()), "entries": usage}))
        return 0
    c = Console(highlight=False, markup=False)  # a path is data, not markup
    c.print(f"compile cache {where}: {human(sum(usage.values()))}")
    for name, size in usage.items():
        c.print(f"  {name:24s} {human(size):>10s}")
    if usage:
        c.print(
            "`zbench cache clear` deletes it: the next --preset max run compiles and searches again"
        )
    else:
        c.print("empty: the first --preset max run fills it, and later runs start from it")
    return 0
