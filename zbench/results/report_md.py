"""The report's Markdown sections: the machine, one table per experiment, and the notes beside them.

The tables, warnings, provenance and machine lines are the Markdown export's own (``export.md_*``);
this module adds what only the report shows: the ``zbench doctor`` record (peaks, topology), probe
figures, scaling, and notes that are not warnings. Everything here reads what the store kept with
the runs, never the machine the report is written on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from zbench.contract.config import RunConfig
from zbench.results.api import ResultRow
from zbench.results.export import (
    md_machines,
    md_measured,
    md_results,
    md_table,
    md_text,
    md_warnings,
)
from zbench.results.format import FRAMEWORK_NAMES, GIB, NA_TEXT, model_name
from zbench.results.identity import scaling_groups
from zbench.textfit import counted

# The hint the TUI also shows: a GPU "busy" by NVML's coarse counter while few SMs work.
UTIL_HIGH, SM_LOW = 90.0, 50.0
MIN_SAMPLES = 4


def _num(v: Any, fmt: str) -> str:
    return NA_TEXT if v is None else format(v, fmt)


def _gib(v: Any) -> str:
    return NA_TEXT if v is None else f"{v / GIB:.1f}"


def _distinct(values: Iterable[Any]) -> str:
    seen = sorted({str(v) for v in values if v not in (None, "", [])})
    return ", ".join(seen) if seen else NA_TEXT


# --- 1. the machine ------------------------------------------------------------------------------


def machine_record(rows: Sequence[ResultRow]) -> dict[str, Any] | None:
    """The newest ``zbench doctor`` record stored with a run (``env["machine"]``), if any."""
    for r in sorted(rows, key=lambda r: r.created or 0, reverse=True):
        rec = r.env.get("machine") if isinstance(r.env, dict) else None
        if isinstance(rec, dict):
            return rec
    return None


def machine_section(rows: Sequence[ResultRow], probes: Sequence[ResultRow]) -> list[str]:
    """The export's machine lines (one per machine and software stack), then what a stored
    ``zbench doctor`` record adds: the host, the GPUs' theoretical peaks, the topology."""
    everything = [*rows, *probes]
    if not everything:
        return []
    envs = [r.env for r in everything if isinstance(r.env, dict)]
    rec = machine_record(everything) or {}
    host = rec.get("host") or {}
    out = ["## The machine", "", *md_machines(everything)]
    facts = [
        ("Host", _distinct([e.get("host") or e.get("hostname") for e in envs])),
        ("CPU threads", str(host.get("cpu_threads") or NA_TEXT)),
        ("RAM", _gib(host.get("ram_bytes")) + (" GiB" if host.get("ram_bytes") else "")),
        ("Compute capability", _distinct(c for e in envs for c in (e.get("gpu_capability") or []))),
        ("OS", host.get("os") or NA_TEXT),
    ]
    shown = [[k, v] for k, v in facts if v != NA_TEXT]
    if shown:
        out += ["", *md_table(["", "Value"], shown, set())]
    out += _gpu_peaks(rec.get("gpus") or [])
    out += _topology(rec.get("topology") or {})
    if not rec:
        out += [
            "",
            "No `zbench doctor` record was stored with these runs: no GPU peaks or "
            "topology; the lines above are what the runners reported.",
        ]
    out += probe_section(probes)
    return [*out, ""]


def _per_unit(key: str, unit: float, fmt: str) -> Callable[[dict[str, Any]], str]:
    return lambda g: _num(None if g.get(key) is None else g[key] / unit, fmt)


# The GPU peaks table of a stored doctor record: heading, cell, right-aligned.
GPU_PEAK_COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], str], bool], ...] = (
    ("GPU", lambda g: str(g.get("index")), False),
    ("Name", lambda g: str(g.get("name")), False),
    ("Arch", lambda g: str(g.get("architecture") or NA_TEXT), False),
    ("SMs", lambda g: _num(g.get("sm_count"), "d"), True),
    ("Memory GiB", lambda g: _gib(g.get("mem_total_bytes")), True),
    ("FP32 TFLOPS", lambda g: _num(g.get("fp32_tflops"), ".1f"), True),
    ("BF16 TFLOPS", lambda g: _num(g.get("bf16_tflops"), ".0f"), True),
    ("Memory TB/s", _per_unit("mem_bw_bytes_s", 1e12, ".2f"), True),
    ("PCIe GB/s", _per_unit("pcie_bytes_s", 1e9, ".0f"), True),
    ("NVLink links", lambda g: _num(g.get("nvlink_links"), "d"), True),
)


def _gpu_peaks(gpus: list[dict[str, Any]]) -> list[str]:
    if not gpus:
        return []
    return [
        "",
        "### GPUs and their theoretical peaks",
        "",
        *md_table(
            [head for head, _, _ in GPU_PEAK_COLUMNS],
            [[cell(g) for _, cell, _ in GPU_PEAK_COLUMNS] for g in gpus],
            {head for head, _, right in GPU_PEAK_COLUMNS if right},
        ),
    ]


def _topology(topo: dict[str, Any]) -> list[str]:
    if not (topo.get("labels") and topo.get("matrix")):
        return []
    rows = [[lab, *map(str, row)] for lab, row in zip(topo["labels"], topo["matrix"], strict=False)]
    return ["", "### Topology", "", *md_table(["", *topo["labels"]], rows, set())]


def probe_section(probes: Sequence[ResultRow]) -> list[str]:
    """``zbench probe`` figures beside their theoretical peaks (the newest probe run)."""
    if not probes:
        return []
    probe = max(probes, key=lambda r: r.created or 0)
    rows = probe.result.get("rows") if isinstance(probe.result, dict) else None
    if not rows:
        return []
    out = ["", f"### Measured beside the peaks (`zbench probe`, run {probe.run_id})", ""]
    body: list[list[str]] = []
    for r in rows:
        extra = r.get("nvlink_tx_gb_s")
        body.append(
            [
                str(r.get("name")),
                "" if r.get("gpu") is None else str(r.get("gpu")),
                f"{_num(r.get('value'), ',.1f')} {r.get('unit', '')}".strip(),
                f"{_num(r.get('peak'), ',.1f')} {r.get('unit', '')}".strip()
                if r.get("peak")
                else "",
                "" if r.get("ratio") is None else f"{100 * r['ratio']:.0f}%",
                "" if extra is None else f"{extra:,.1f} GB/s",
            ]
        )
    out += md_table(
        ["Test", "GPU", "Measured", "Peak", "Of peak", "NVLink TX (NVML)"],
        body,
        {"Measured", "Peak", "Of peak", "NVLink TX (NVML)"},
    )
    return out


# --- 2. the experiments --------------------------------------------------------------------------


DEFAULT_PRESET = RunConfig.preset  # the review's own setup: not worth a note


def notes_for(row: ResultRow, charted: bool) -> list[str]:
    """What the reader should know about a row that is not a warning (those are
    ``provenance.warnings``, printed as the export prints them)."""
    m = row.phases.get("measure", {})
    out = []
    if not row.phases:
        out.append("no telemetry stored (GPU, memory and CPU columns are n/a)")
    elif (m.get("n_samples") or MIN_SAMPLES) < MIN_SAMPLES:
        out.append(
            f"only {counted(m['n_samples'], 'sample')} in the measured window: the means are rough"
        )
    sm = m.get("sm_activity_mean")
    if row.gpu_util is not None and sm is not None and row.gpu_util >= UTIL_HIGH and sm < SM_LOW:
        out.append(
            f"GPU util {row.gpu_util:.0f}% but SM activity {sm:.0f}%: the GPU is busy, not full"
        )
    cfg = row.config if isinstance(row.config, dict) else {}
    if cfg.get("preset") not in (None, "", DEFAULT_PRESET):
        tuned = [k.replace("_", "-") for k in ("compile", "channels_last") if cfg.get(k)]
        out.append(
            f"preset {cfg['preset']}"
            + (f" ({', '.join(tuned)})" if tuned else "")
            + ": not the review's default setup"
        )
    if not charted:
        out.append(
            "a newer run of another setup (batch, data, versions ...) holds its place in "
            "the charts: this run is in the tables only"
        )
    return out


def experiment_section(rows: Sequence[ResultRow], left_out: Sequence[ResultRow]) -> list[str]:
    """One table per experiment (workload), in the review's order, each with its warnings and
    notes; then how each row was measured."""
    if not rows:
        return []
    out = [
        "## The experiments",
        "",
        "Means over each run's measured window (warm-up excluded), sampled every 0.5 s. GPU "
        "memory is the fullest GPU's, in GiB (2^30 bytes); CPU utilization is the runner's "
        "process tree in % of one core (200% = two cores busy); CPU memory is its resident "
        "memory in GiB. Spread: (max - min) / median of the measured windows' rates. Setup: "
        "runs that share it were measured alike.",
        "",
    ]
    excluded = {r.run_id for r in left_out}
    by_workload: dict[str, list[ResultRow]] = {}
    for r in rows:
        by_workload.setdefault(r.workload, []).append(r)
    for n, (workload, group) in enumerate(by_workload.items(), start=1):
        gpu_names = _distinct(r.gpu_name for r in group)
        title = md_text(model_name(workload))
        out += [f"### Experiment {n}: {title}", "", f"On {md_text(gpu_names)}.", ""]
        out += md_results(group)
        warned = md_warnings(group)
        out += ["", *warned] if warned else []
        notes = [
            f"Run {r.run_id}: {note}."
            for r in group
            for note in notes_for(r, r.run_id not in excluded)
        ]
        if notes:
            out += ["", "**Notes**", "", *(f"- {md_text(note)}" for note in notes)]
        out.append("")
    out += ["### How each row was measured", "", *md_measured(rows), ""]
    return out


def scaling_lines(rows: Sequence[ResultRow]) -> list[str]:
    """1 vs N GPU figures with weak-scaling efficiency, between runs identical but for the GPU
    count (``identity.scaling_groups``)."""
    out = []
    for g in scaling_groups(rows):
        one = g.base
        for n, r in g.runs.items():
            what = (
                f"{model_name(r.workload)} {FRAMEWORK_NAMES.get(r.framework, r.framework)} {r.mode}"
            )
            out.append(
                f"- {md_text(what)}, batch {r.batch_size}/GPU: {one.samples_per_s:,.1f} -> "
                f"{r.samples_per_s:,.1f} samples/s on {n} GPUs, {g.speedup(n):.2f}x, "
                f"{100 * g.efficiency(n):.0f}% efficiency (runs {one.run_id} and {r.run_id})"
            )
    return out
