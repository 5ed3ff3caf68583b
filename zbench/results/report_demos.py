"""The report's demos section, pluggable: one renderer per demo kind, a generic one for the rest.

A demo run is a stored run whose ``result`` names its demo (``{"demo": "snake", ...}``). The generic
renderer understands two optional keys: ``summary`` (name -> value, shown as a table) and ``series``
(name -> ``{"x": label, "unit": label, "points": [[x, y], ...]}``: learning curves, tracked-object
counts, frames per second), each series drawn as one line chart. A demo with its own figures
registers a renderer with ``register`` (motion adds its quality table: L1 and keypoint distance of
the model against its baselines). The section opens with the demo table (``results.demos``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zbench.results.api import ResultRow
from zbench.results.demos import from_result_rows, render
from zbench.results.export import md_table, md_text

# (runs of one demo kind, folder for figures, the report's folder) -> Markdown lines
Renderer = Callable[[Sequence[ResultRow], Path, Path], list[str]]
RENDERERS: dict[str, Renderer] = {}


def register(kind: str, renderer: Renderer) -> None:
    """Make ``renderer`` write the report's section for demo ``kind``."""
    RENDERERS[kind] = renderer


def _line_chart(name: str, spec: dict[str, Any], path: Path) -> bool:
    points = [p for p in spec.get("points", ()) if isinstance(p, list | tuple) and len(p) == 2]
    if not points:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([float(p[0]) for p in points], [float(p[1]) for p in points], linewidth=1.2)
    ax.set_xlabel(str(spec.get("x", "")), fontsize=8)
    ax.set_ylabel(str(spec.get("unit", "")), fontsize=8)
    ax.set_title(name, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def generic(runs: Sequence[ResultRow], figures: Path, root: Path) -> list[str]:
    """A demos section for any demo: its summary table and a line chart per series."""
    out: list[str] = []
    for run in runs:
        res = run.result
        title = md_text(str(res.get("title") or res["demo"]).capitalize())
        out += [f"### {title} (run {run.run_id})", ""]
        summary = res.get("summary") or {}
        if isinstance(summary, dict) and summary:
            out += md_table(["", "Value"], [[str(k), str(v)] for k, v in summary.items()], set())
            out.append("")
        series = res.get("series") or {}
        for i, (name, spec) in enumerate(series.items() if isinstance(series, dict) else ()):
            path = figures / f"demo-{run.run_id}-{i}.png"
            if isinstance(spec, dict) and _line_chart(str(name), spec, path):
                out += [f"![{md_text(str(name))}]({path.relative_to(root).as_posix()})", ""]
    return out


def motion(runs: Sequence[ResultRow], figures: Path, root: Path) -> list[str]:
    """The generic part, then each run's quality against the baselines (held-out rendered clips)."""
    out: list[str] = []
    for run in runs:
        out += generic([run], figures, root)
        quality = run.result.get("quality")
        if isinstance(quality, dict) and quality:
            rows = [
                [name, _fig(q.get("l1")), _fig(q.get("akd_px"))]
                for name, q in quality.items()
                if isinstance(q, dict)
            ]
            out += ["Quality on held-out clips (lower is better):", ""]
            out += md_table(
                ["Animated by", "L1", "Keypoint distance, px"],
                rows,
                {"L1", "Keypoint distance, px"},
            )
            out.append("")
    return out


def _fig(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, int | float) else "-"


register("motion", motion)


def demo_section(demos: Sequence[ResultRow], figures: Path, root: Path) -> list[str]:
    """The demos' figures, or nothing when no demo run is selected."""
    if not demos:
        return []
    figures.mkdir(parents=True, exist_ok=True)
    kinds: dict[str, list[ResultRow]] = {}
    for d in demos:
        kinds.setdefault(str(d.result["demo"]), []).append(d)
    out = ["## The demos", "", *render(from_result_rows(demos), "md").splitlines(), ""]
    for kind, runs in kinds.items():
        out += RENDERERS.get(kind, generic)(runs, figures, root)
    return out
