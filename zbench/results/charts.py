"""PNG charts of the review's figures (matplotlib, Agg backend, imported only when plotting).

One set of charts per device (GPU model, or the CPU: CPU runs never land on a GPU's chart), each
titled with that device. Unlike runs are never merged: each bar is the newest run of one setup
(``identity``), and a setup that differs from the drawn one is named in the chart's description, not
drawn over it. Scaling pairs only runs identical but for the GPU count. Where a published figure
compares (``anchors.published_for``), a hatched bar shows it beside the user's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zbench.contract.config import PRECISIONS
from zbench.contract.workloads import WORKLOADS
from zbench.results.anchors import Anchor, find_anchor, published_for
from zbench.results.api import ResultRow
from zbench.results.format import FRAMEWORK_NAMES, GIB, model_name
from zbench.results.identity import gpu_model, identity, latest_per_identity, scaling_groups

FP32_LIKE = (None, "fp32")
# What the charts draw, in words (a selection none of whose runs fits one is told this).
DRAWN = (
    "the charts draw FP32 runs on one GPU (or the CPU), ResNet-50 training on one GPU beside the "
    "same on more, and each other precision beside an FP32 run of the same setup"
)
MODEL_ORDER = tuple(WORKLOADS)  # the workload table is in the review's order


@dataclass(frozen=True)
class Chart:
    """One PNG chart written: its path, what it shows and the runs it draws."""

    path: Path
    description: str
    runs: tuple[int, ...] = ()


def latest(rows: Sequence[ResultRow]) -> list[ResultRow]:
    """One run per chart slot (workload, framework, mode, GPUs, precision, device): the newest of
    the newest setups. Other setups for the same slot are returned apart, never averaged in."""
    picked, _ = _slots(rows)
    return picked


def not_drawn(rows: Sequence[ResultRow]) -> list[ResultRow]:
    """Runs of a setup no chart draws: another setup of their slot is newer (they stay in the
    tables). Older repeats of a drawn setup are not among them."""
    drawn = {identity(r) for r in _slots(rows)[0]}
    return [r for r in rows if identity(r) not in drawn]


def undrawn(rows: Sequence[ResultRow], charts: Sequence[Chart]) -> list[ResultRow]:
    """The runs of ``rows`` no chart of ``charts`` draws, older repeats of a drawn setup aside:
    a BF16 run with no FP32 run of its setup, a run on two GPUs with none on one ..."""
    ids = {run for chart in charts for run in chart.runs}
    drawn = {identity(r) for r in rows if r.run_id in ids}
    return [r for r in rows if identity(r) not in drawn]


def _slot(r: ResultRow) -> tuple[Any, ...]:
    """The place of a run in the charts: one bar per slot, the newest setup's."""
    return (r.workload, r.framework, r.mode, r.gpus, r.precision, gpu_model(r))


def _slots(rows: Sequence[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    best: dict[tuple[Any, ...], ResultRow] = {}
    left_out: list[ResultRow] = []
    for r in latest_per_identity(rows):
        key = _slot(r)
        if key in best:
            left_out.append(best[key])
        best[key] = r
    return list(best.values()), left_out


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def _models(rows: Sequence[ResultRow]) -> list[str]:
    present = {r.workload for r in rows}
    return [m for m in MODEL_ORDER if m in present] + sorted(present - set(MODEL_ORDER))


def _fw(framework: str) -> str:
    return FRAMEWORK_NAMES.get(framework, framework)


def _bars(
    ax: Any,
    groups: list[str],
    series: list[tuple[str, list[float | None], bool]],
    ylabel: str,
    fmt: str = "{:,.0f}",
) -> None:
    """Grouped bars; a series flagged True is a published figure (hatched). Missing values leave
    a gap, never a zero-height bar."""
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, values, published) in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        pts = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if not pts:
            continue
        bars = ax.bar(
            [p[0] for p in pts],
            [p[1] for p in pts],
            width,
            label=name,
            hatch="//" if published else None,
            alpha=0.55 if published else 1.0,
            edgecolor="black" if published else None,
        )
        ax.bar_label(bars, labels=[fmt.format(p[1]) for p in pts], fontsize=7, padding=2)
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def _save(
    fig: Any, path: Path, description: str, out: list[Chart], drawn: Sequence[ResultRow]
) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    out.append(Chart(path, description, tuple(sorted({r.run_id for r in drawn if r.run_id}))))


def _pick(rows: Sequence[ResultRow], attr: str, **match: Any) -> ResultRow | None:
    """The run a bar draws: the first of ``rows`` that matches ``match`` and has ``attr``."""
    for r in rows:
        if all(getattr(r, k) == v for k, v in match.items()) and _attr(r, attr) is not None:
            return r
    return None


def _picks(
    rows: Sequence[ResultRow], attr: str, models: Sequence[str], **match: Any
) -> list[ResultRow | None]:
    """Per model, the run its bar draws; None where it has no bar."""
    return [_pick(rows, attr, workload=m, **match) for m in models]


def _bar_values(
    picks: Sequence[ResultRow | None], attr: str, scale: float = 1.0
) -> list[float | None]:
    """The bars' heights: each picked run's figure, scaled; None (a gap) where none was picked."""
    values = [None if r is None else _attr(r, attr) for r in picks]
    return [None if v is None else v * scale for v in values]


def _attr(r: ResultRow, attr: str) -> float | None:
    """A run's figure: a field (``samples_per_s``) or a phase's (``phase:measure:KEY``)."""
    if attr.startswith("phase:"):
        _, phase, key = attr.split(":")
        value = r.phases.get(phase, {}).get(key)
    else:
        value = getattr(r, attr)
    return None if value is None else float(value)


def _gpu_label(rows: Sequence[ResultRow]) -> str:
    names = sorted({r.gpu_name or "?" for r in rows})
    return ", ".join(names)


def write_charts(rows: Sequence[ResultRow], output: Path) -> list[Chart]:
    """Write PNG charts of ``rows``, one set per device (the commonest keeps the plain names)."""
    import matplotlib

    matplotlib.use("Agg")
    output.mkdir(parents=True, exist_ok=True)
    count: dict[str, int] = {}
    for r in rows:
        count[gpu_model(r)] = count.get(gpu_model(r), 0) + 1
    devices = sorted(count, key=lambda d: (d == "CPU", -count[d], d))
    charts: list[Chart] = []
    for n, device in enumerate(devices):
        sel = [r for r in rows if gpu_model(r) == device]
        # The device with most runs keeps the plain file names; the others add theirs.
        _device_charts(sel, device, output, f"_{_slug(device)}" if n else "", charts)
    return charts


def _device_charts(
    rows: Sequence[ResultRow], device: str, output: Path, tag: str, charts: list[Chart]
) -> None:
    import matplotlib.pyplot as plt

    rows, left_out = _slots(rows)
    cpu = device == "CPU"
    device = " ".join(device.split())  # one line, whatever the driver put in the name
    single = [r for r in rows if (cpu or r.gpus == 1) and r.precision in FP32_LIKE]
    where = "CPU" if cpu else "1 GPU"
    frameworks = sorted({r.framework for r in rows})

    def runs(which: Sequence[ResultRow]) -> str:
        return ", ".join(str(r.run_id) for r in sorted(which, key=lambda r: r.run_id or 0))

    for mode, title in (("train", "Training"), ("infer", "Inference")):
        sel = [r for r in single if r.mode == mode and r.samples_per_s is not None]
        if not sel:
            continue
        # Which runs the bars are, and the older setups of their slots (this mode, device count
        # and precision only: the others are not this chart's to draw).
        drawn = {_slot(r) for r in sel}
        hidden = [r for r in left_out if _slot(r) in drawn]
        also = f"; bars from runs {runs(sel)}"
        if hidden:
            also += f"; other setups of the same model not drawn: runs {runs(hidden)}"
        models = _models(sel)
        series, bars = _throughput_series(sel, models, frameworks)
        fig, ax = plt.subplots(figsize=(9, 4.5))
        _bars(ax, [model_name(m) for m in models], series, "samples/s")
        # On a CPU, ``where`` already names the device ("CPU, FP32, CPU" said it twice).
        ax.set_title(f"{title} throughput, {where}, FP32" + ("" if cpu else f" ({device})"))
        _save(
            fig,
            output / f"throughput_{mode}{tag}.png",
            f"{title.lower()} throughput (samples/s) per model and framework, {where}, FP32"
            + ("" if cpu else f", {device}")
            + (", published figures hatched" if any(s[2] for s in series) else "")
            + also,
            charts,
            bars,
        )

    if not cpu:
        _scaling(rows, output, charts, plt, tag)
        _per_model(
            single,
            output,
            charts,
            plt,
            "phase:measure:gpu_util_mean",
            f"gpu_util{tag}.png",
            "GPU utilization (%)",
            f"GPU utilization per model, {_modes_words(single)} (measured window)",
            by_mode=True,
        )
        _per_model(
            [r for r in single if r.mode == "train"],
            output,
            charts,
            plt,
            "phase:measure:gpu_mem_peak_bytes",
            f"gpu_memory{tag}.png",
            "GPU memory (GiB)",
            "peak GPU memory per model during training",
            scale=1 / GIB,
            fmt="{:.1f}",
        )
    _per_model(
        single,
        output,
        charts,
        plt,
        "phase:measure:cpu_util_mean",
        f"cpu_util{tag}.png",
        "CPU utilization (% of one core)",
        "CPU utilization of the runner per model and mode",
        by_mode=True,
    )
    _speedup(rows, output, charts, plt, tag)


def _modes_words(rows: Sequence[ResultRow]) -> str:
    """The modes a chart of ``rows`` draws, in words: "training vs inference" only when both are
    there (an inference-only selection was captioned "training vs inference")."""
    words = {"train": "training", "infer": "inference"}
    drawn = [words[m] for m in words if any(r.mode == m for r in rows)]
    return " vs ".join(drawn)


def _throughput_series(
    sel: Sequence[ResultRow], models: list[str], frameworks: list[str]
) -> tuple[list[tuple[str, list[float | None], bool]], list[ResultRow]]:
    """Per framework, its bars per model and, where one compares, the published figure beside
    them (hatched: the third field); and the runs the bars draw."""
    series: list[tuple[str, list[float | None], bool]] = []
    drawn: list[ResultRow] = []
    for fw in frameworks:
        picks = _picks(sel, "samples_per_s", models, framework=fw)
        drawn += [r for r in picks if r is not None]
        series.append((_fw(fw), _bar_values(picks, "samples_per_s"), False))
        anchors = [_anchor(sel, m, fw) for m in models]
        if any(a is not None for a in anchors):
            # Name the published precision: a TF32 figure sold as "FP32" must not pass for ours.
            precs = sorted({a.precision.upper() for a in anchors if a is not None})
            published = [None if a is None else a.samples_per_s for a in anchors]
            series.append((f"{_fw(fw)} (published, {'/'.join(precs)})", published, True))
    return series, drawn


def _anchor(rows: Sequence[ResultRow], workload: str, framework: str) -> Anchor | None:
    """The published figure drawn beside a bar: only one that compares with the drawn run."""
    for r in rows:
        if (r.workload, r.framework) == (workload, framework):
            return published_for(r).anchor
    return None


def _per_model(
    rows: Sequence[ResultRow],
    output: Path,
    charts: list[Chart],
    plt: Any,
    attr: str,
    filename: str,
    ylabel: str,
    description: str,
    *,
    by_mode: bool = False,
    scale: float = 1.0,
    fmt: str = "{:,.0f}",
) -> None:
    models = _models(rows)
    series: list[tuple[str, list[float | None], bool]] = []
    modes = ("train", "infer") if by_mode else ("train",)
    drawn: list[ResultRow] = []
    for fw in sorted({r.framework for r in rows}):
        for mode in modes:
            picks = _picks(rows, attr, models, framework=fw, mode=mode)
            drawn += [r for r in picks if r is not None]
            scaled = _bar_values(picks, attr, scale)
            if any(v is not None for v in scaled):
                name = f"{_fw(fw)} {mode}" if by_mode else _fw(fw)
                series.append((name, scaled, False))
    if not series:
        return
    fig, ax = plt.subplots(figsize=(9, 4.5))
    _bars(ax, [model_name(m) for m in models], series, ylabel, fmt)
    ax.set_title(f"{description[0].upper()}{description[1:]} ({_gpu_label(rows)})", fontsize=9)
    _save(fig, output / filename, description, charts, drawn)


def _scaling(
    rows: Sequence[ResultRow], output: Path, charts: list[Chart], plt: Any, tag: str = ""
) -> None:
    """ResNet-50 training on 1 vs N GPUs, pairing only runs identical but for the GPU count."""
    sel = [
        r
        for r in rows
        if r.workload == "resnet50" and r.mode == "train" and r.precision in FP32_LIKE
    ]
    groups: list[str] = []
    one: list[float | None] = []
    many: list[float | None] = []
    notes = []
    drawn: list[ResultRow] = []
    for g in sorted(scaling_groups(sel), key=lambda g: (g.base.framework, g.base.batch_size or 0)):
        n = max(g.runs)
        drawn += [g.base, g.runs[n]]
        label = f"{_fw(g.base.framework)}, batch {g.base.batch_size}/GPU"
        groups.append(label)
        one.append(float(g.base.samples_per_s))
        many.append(float(g.runs[n].samples_per_s))
        notes.append(
            f"{label}: {g.speedup(n):.2f}x on {n} GPUs, {100 * g.efficiency(n):.0f}% efficiency"
        )
    if not groups:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    _bars(ax, groups, [("1 GPU", one, False), ("all GPUs", many, False)], "images/s")
    ax.set_title(
        f"ResNet-50 training: 1 GPU vs all GPUs ({_gpu_label(sel)})\n" + "; ".join(notes),
        fontsize=9,
    )
    _save(
        fig,
        output / f"scaling{tag}.png",
        "ResNet-50 training on 1 vs all GPUs, like runs only: " + "; ".join(notes),
        charts,
        drawn,
    )


def _speedup(
    rows: Sequence[ResultRow], output: Path, charts: list[Chart], plt: Any, tag: str = ""
) -> None:
    """Each precision over FP32, only between runs identical but for the precision."""

    def key(r: ResultRow) -> Any:
        return identity(r).without("precision", "result.precision_detail", "env.tf32")

    base = {key(r): r for r in rows if r.precision == "fp32" and r.samples_per_s}
    groups: list[str] = []
    used: list[ResultRow] = []
    over = [p for p in PRECISIONS if p != "fp32"]  # each precision's bar, over FP32
    series: dict[str, list[float | None]] = {p.upper(): [] for p in over}
    series["published"] = []
    bases: set[str] = set()  # what the published speedups divide by (Lambda's "FP32" is TF32)
    for k, ref in sorted(base.items(), key=lambda kv: str(kv[0])):
        beside = [r for r in rows if key(r) == k and r.precision in over and r.samples_per_s]
        others = {
            r.precision: float(r.samples_per_s or 0) / float(ref.samples_per_s or 1) for r in beside
        }
        if not others:
            continue
        groups.append(f"{model_name(ref.workload)}\n{_fw(ref.framework)} {ref.mode}")
        used += [ref, *beside]
        for prec in over:
            series[prec.upper()].append(others.get(prec))
        published, base_precision = _published_speedup(ref)
        series["published"].append(published)
        if base_precision:
            bases.add(base_precision)
    if not groups:
        return
    published_label = "FP16 published, over " + "/".join(sorted(b.upper() for b in bases))
    plotted = [
        (k if k != "published" else published_label, v, k == "published")
        for k, v in series.items()
        if any(x is not None for x in v)
    ]
    # The precisions drawn, not every one there is ("TF32/FP16/BF16" over FP16 and BF16 bars).
    drawn = "/".join(name for name, _, published in plotted if not published)
    hatched = [name for name, _, published in plotted if published]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    _bars(ax, groups, plotted, "speedup over FP32 (x)", "{:.2f}")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_title(f"Mixed-precision speedup over FP32 ({_gpu_label(used)})")
    _save(
        fig,
        output / f"precision_speedup{tag}.png",
        f"{drawn} throughput over FP32 per model, framework and mode"
        + (f"; hatched: {hatched[0]}" if hatched else ""),
        charts,
        used,
    )


def _published_speedup(ref: ResultRow) -> tuple[float | None, str | None]:
    """A source's FP16 figure over its own "FP32" one, and that base's real precision."""
    fp32: Anchor | None = find_anchor(
        ref.gpu_name, ref.gpus, ref.workload, ref.framework, ref.mode, "fp32"
    )
    fp16 = find_anchor(ref.gpu_name, ref.gpus, ref.workload, ref.framework, ref.mode, "fp16")
    if fp32 is None or fp16 is None or fp32.source != fp16.source:
        return None, None
    return fp16.samples_per_s / fp32.samples_per_s, fp32.precision
