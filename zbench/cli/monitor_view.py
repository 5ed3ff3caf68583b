"""What ``zbench monitor`` shows, as Rich text: the GPU table, the host, and the GPU processes.

The cells and columns are ``zbench.telemetry.tables`` (data); here they are fitted to a width and
styled (lost or throttled GPUs in red).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from zbench.glyphs import glyphs
from zbench.telemetry import fmt
from zbench.telemetry.snapshot import Snapshot
from zbench.telemetry.tables import (
    GPU_COLUMNS,
    PROCESS_COLUMNS,
    gpu_cells,
    host_line,
    process_rows,
    throttling,
)
from zbench.textfit import lines


def render(
    snap: Snapshot,
    width: int | None = None,
    runners: Mapping[int, int] | None = None,
    now: float | None = None,
) -> RenderableType:
    """One frame of ``zbench monitor``: notice, GPU table (throttled in red), host, processes."""
    ell = glyphs().ellipsis
    parts: list[RenderableType] = []
    if snap.notice:
        parts.append(Text(snap.notice, style="yellow"))
    if snap.gpus:
        _, out = lines(GPU_COLUMNS, [gpu_cells(g) for g in snap.gpus], width, ell)
        parts.append(Text(out[0], style="bold"))
        for g, line in zip(snap.gpus, out[1:], strict=True):
            parts.append(Text(line, style="red" if g.lost or throttling(g) else ""))
    parts.append(Text.assemble(("host ", "bold"), host_line(snap)))
    for tree in snap.trees:
        parts.append(
            Text(
                f"pid {tree.pid}: CPU {fmt.pct(tree.cpu_pct)} RSS {fmt.gib(tree.rss_bytes)} GiB "
                f"({tree.n_procs} processes)"
            )
        )
    if snap.gpus:
        rows = process_rows(snap, runners, now)
        if rows:
            _, out = lines(PROCESS_COLUMNS, [r[2] for r in rows], width, ell)
            parts.append(Text(out[0], style="bold"))
            parts.extend(Text(line) for line in out[1:])
        else:
            parts.append(Text("no processes on the GPUs", style="dim"))
    return Group(*parts)


def plain(renderable: RenderableType) -> Sequence[str]:
    """The lines of a :func:`render` result as plain text (for tests and pipes)."""
    assert isinstance(renderable, Group)
    return [r.plain for r in renderable.renderables if isinstance(r, Text)]
