"""Time series of a run's raw 0.5 s samples: one small-multiple PNG per run, phases shaded.

Panels (each drawn only when a sample holds the metric): GPU utilization, SM activity, GPU memory,
power, NVLink traffic, CPU (the runner's process tree and the whole host). One line per GPU where the
metric is per GPU. The setup, warm-up and measure phases are shaded so the reader sees which part of
the run the table's means come from.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zbench.results.format import GIB

Sample = dict[str, Any]
PHASE_COLOURS = {
    "setup": "#dddddd",
    "compile": "#e8d8f0",
    "warmup": "#fde9c9",
    "measure": "#d6ecd2",
}

# (title, unit, per-GPU sample key or host key, scale, per_gpu)
PANELS: tuple[tuple[str, str, str, float, bool], ...] = (
    ("GPU utilization", "%", "util", 1.0, True),
    ("SM activity", "%", "sm", 1.0, True),
    ("GPU memory", "GiB", "mem", 1 / GIB, True),
    ("Power", "W", "power", 1.0, True),
    ("NVLink TX + RX", "GB/s", "nvl", 1e-9, True),
    ("CPU", "% of one core", "cpu", 1.0, False),
)


def phase_spans(samples: Sequence[Sample], t0: float) -> list[tuple[str, float, float]]:
    """Contiguous stretches of one phase as (phase, start, end) in seconds from ``t0``; a stretch
    ends where the next begins, so the shading has no gaps."""
    spans: list[tuple[str, float, float]] = []
    for s in samples:
        phase, t = s.get("phase") or "none", float(s["t"]) - t0
        if spans and spans[-1][0] == phase:
            spans[-1] = (phase, spans[-1][1], t)
        else:
            if spans:
                spans[-1] = (spans[-1][0], spans[-1][1], t)
            spans.append((phase, t, t))
    return spans


def _gpu_value(g: dict[str, Any], key: str) -> float | None:
    if key == "nvl":
        tx, rx = g.get("nvl_tx"), g.get("nvl_rx")
        return None if tx is None and rx is None else float(tx or 0) + float(rx or 0)
    v = g.get(key)
    return None if v is None else float(v)


def series(
    samples: Sequence[Sample], key: str, per_gpu: bool, scale: float
) -> dict[str, list[tuple[float, float]]]:
    """Line name -> points (seconds from the first sample, value); lines with no value dropped."""
    if not samples:
        return {}
    t0 = float(samples[0]["t"])
    lines: dict[str, list[tuple[float, float]]] = {}
    for s in samples:
        t = float(s["t"]) - t0
        if per_gpu:
            for g in s.get("gpus", ()):
                v = _gpu_value(g, key)
                if v is not None:
                    lines.setdefault(f"GPU {g.get('i')}", []).append((t, v * scale))
        else:
            for name, k in (("runner", "cpu"), ("host, % of all cores", "host_cpu")):
                v = s.get(k)
                if v is not None:
                    lines.setdefault(name, []).append((t, float(v) * scale))
    return lines


def draw_run(samples: Sequence[Sample], title: str, path: Path) -> bool:
    """One figure of small multiples for one run; False (nothing written) without samples."""
    panels = [(p, series(samples, p[2], p[4], p[3])) for p in PANELS]
    panels = [(p, lines) for p, lines in panels if lines]
    if not panels:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 2
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(10, 2.3 * rows), sharex=True, squeeze=False)
    spans = phase_spans(samples, float(samples[0]["t"]))
    for ax, ((name, unit, *_), lines) in zip(axes.flat, panels, strict=False):
        for phase, a, b in spans:
            if phase in PHASE_COLOURS and b > a:
                ax.axvspan(a, b, color=PHASE_COLOURS[phase], zorder=0, linewidth=0)
        for label, pts in lines.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linewidth=1, label=label)
        ax.set_title(f"{name} ({unit})", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if len(lines) > 1:
            ax.legend(fontsize=6, loc="upper right")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("seconds", fontsize=8)
    shown = [p for p in PHASE_COLOURS if any(s[0] == p for s in spans)]
    if shown:
        from matplotlib.patches import Patch

        fig.legend(
            handles=[Patch(color=PHASE_COLOURS[p], label=p) for p in shown],
            loc="upper right",
            ncol=len(shown),
            fontsize=7,
        )
    fig.suptitle(title, fontsize=10, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
