"""The report's Markdown sections: the machine, one table per experiment, and the notes beside them.

Everything here reads what the store kept with the runs (the runner's start-event environment, a
stored ``machine`` record, probe runs), never the machine the report is written on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from zbench.results.anchors import anchor_for
from zbench.results.api import ResultRow
from zbench.results.export import md_escape
from zbench.results.format import FRAMEWORK_NAMES, GIB, NA_TEXT, model_name, published_cell

# The hint the TUI also shows: a GPU "busy" by NVML's coarse counter while few SMs work.
UTIL_HIGH, SM_LOW = 90.0, 50.0
SPREAD_WARN_PCT = 5.0
MIN_SAMPLES = 4


def table(titles: Sequence[str], rows: Iterable[Sequence[str]], right: set[str]) -> list[str]:
    lines = [
        "| " + " | ".join(titles) + " |",
        "|" + "|".join("---:" if t in right else "---" for t in titles) + "|",
    ]
    lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows]
    return lines


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
    everything = [*rows, *probes]
    if not everything:
        return []
    envs = [r.env for r in everything if isinstance(r.env, dict)]
    rec = machine_record(everything) or {}
    host = rec.get("host") or {}
    out = ["## The machine", ""]
    facts = [
        ("Host", _distinct([e.get("host") or e.get("hostname") for e in envs])),
        ("CPU", host.get("cpu") or NA_TEXT),
        ("CPU cores / threads", f"{host.get('cpu_cores') or NA_TEXT} / "
         f"{host.get('cpu_threads') or _distinct(e.get('cpu_count') for e in envs)}"),
        ("RAM", _gib(host.get("ram_bytes")) + (" GiB" if host.get("ram_bytes") else "")),
        ("GPUs", _distinct(n for e in envs for n in (e.get("gpu_names") or []))),
        ("Compute capability", _distinct(c for e in envs for c in (e.get("gpu_capability") or []))),
        ("Driver", _distinct([e.get("driver") for e in envs]
                             + [(rec.get("nvml") or {}).get("driver")])),
        ("CUDA", _distinct(e.get("cuda") for e in envs)),
        ("cuDNN", _distinct(e.get("cudnn") for e in envs)),
        ("NCCL", _distinct(e.get("nccl") for e in envs)),
        ("PyTorch", _distinct(e.get("torch") for e in envs)),
        ("torchvision", _distinct(e.get("torchvision") for e in envs)),
        ("TensorFlow", _distinct(e.get("tensorflow") for e in envs)),
        ("Python", _distinct([e.get("python") for e in envs] + [host.get("python")])),
        ("OS", host.get("os") or NA_TEXT),
    ]  # fmt: skip
    out += table(
        ("", "Value"), [(k, v) for k, v in facts if v not in (NA_TEXT, "n/a / n/a")], set()
    )
    gpus = rec.get("gpus") or []
    if gpus:
        out += ["", "### GPUs and their theoretical peaks", ""]
        out += table(
            ("GPU", "Name", "Arch", "SMs", "Memory GiB", "FP32 TFLOPS", "BF16 TFLOPS",
             "Memory TB/s", "PCIe GB/s", "NVLink links"),
            [(str(g.get("index")), str(g.get("name")), str(g.get("architecture") or NA_TEXT),
              _num(g.get("sm_count"), "d"), _gib(g.get("mem_total_bytes")),
              _num(g.get("fp32_tflops"), ".1f"), _num(g.get("bf16_tflops"), ".0f"),
              _num(None if g.get("mem_bw_bytes_s") is None else g["mem_bw_bytes_s"] / 1e12, ".2f"),
              _num(None if g.get("pcie_bytes_s") is None else g["pcie_bytes_s"] / 1e9, ".0f"),
              _num(g.get("nvlink_links"), "d")) for g in gpus],
            {"SMs", "Memory GiB", "FP32 TFLOPS", "BF16 TFLOPS", "Memory TB/s", "PCIe GB/s",
             "NVLink links"},
        )  # fmt: skip
    topo = rec.get("topology") or {}
    if topo.get("labels") and topo.get("matrix"):
        out += ["", "### Topology", ""]
        out += table(["", *topo["labels"]],
                     [[lab, *map(str, row)] for lab, row in zip(topo["labels"], topo["matrix"],
                                                                strict=False)], set())  # fmt: skip
    if not rec:
        out += ["", "No `zbench doctor` record was stored with these runs: the GPU specs, peaks and "
                "topology above come only from what the runners reported."]  # fmt: skip
    out += probe_section(probes)
    return [*out, ""]


def probe_section(probes: Sequence[ResultRow]) -> list[str]:
    """``zbench probe`` figures beside their theoretical peaks (the newest probe run)."""
    if not probes:
        return []
    probe = max(probes, key=lambda r: r.created or 0)
    rows = probe.result.get("rows") if isinstance(probe.result, dict) else None
    if not rows:
        return []
    out = ["", f"### Measured beside the peaks (`zbench probe`, run {probe.run_id})", ""]
    body = []
    for r in rows:
        extra = r.get("nvlink_tx_gb_s")
        body.append((
            str(r.get("name")), "" if r.get("gpu") is None else str(r.get("gpu")),
            f"{_num(r.get('value'), ',.1f')} {r.get('unit', '')}".strip(),
            f"{_num(r.get('peak'), ',.1f')} {r.get('unit', '')}".strip() if r.get("peak") else "",
            "" if r.get("ratio") is None else f"{100 * r['ratio']:.0f}%",
            "" if extra is None else f"{extra:,.1f} GB/s",
        ))  # fmt: skip
    out += table(("Test", "GPU", "Measured", "Peak", "Of peak", "NVLink TX (NVML)"), body,
                 {"Measured", "Peak", "Of peak", "NVLink TX (NVML)"})  # fmt: skip
    return out


# --- 2. the experiments --------------------------------------------------------------------------

EXPERIMENT_TITLES = ("Framework", "Mode", "GPUs", "Precision", "Batch/GPU", "Samples/s",
                     "Spread", "GPU util %", "Mem-ctrl util %", "GPU mem GiB",
                     "CPU util (% of one core)", "CPU mem GiB", "Run")  # fmt: skip
RIGHT = {"GPUs", "Batch/GPU", "Samples/s", "Spread", "GPU util %", "Mem-ctrl util %",
         "GPU mem GiB", "CPU util (% of one core)", "CPU mem GiB", "Run"}  # fmt: skip


def spread(row: ResultRow) -> str:
    res = row.result if isinstance(row.result, dict) else {}
    pct = res.get("samples_per_s_spread_pct")
    if isinstance(pct, int | float) and res.get("repeats", 1) > 1:
        return f"±{pct / 2:.1f}% ({res['repeats']} windows)"
    med, p90 = res.get("step_time_median_ms"), res.get("step_time_p90_ms")
    if isinstance(med, int | float) and isinstance(p90, int | float) and med > 0:
        return f"p90 step +{100 * (p90 / med - 1):.0f}%"
    return ""


def warnings_for(row: ResultRow, charted: bool) -> list[str]:
    m = row.phases.get("measure", {})
    out = []
    if not row.phases:
        out.append("no telemetry stored (GPU, memory and CPU columns are n/a)")
    elif (m.get("n_samples") or MIN_SAMPLES) < MIN_SAMPLES:
        out.append(f"only {m['n_samples']} samples in the measured window: the means are rough")
    sm = m.get("sm_activity_mean")
    if row.gpu_util is not None and sm is not None and row.gpu_util >= UTIL_HIGH and sm < SM_LOW:
        out.append(f"GPU util {row.gpu_util:.0f}% but SM activity {sm:.0f}%: the GPU is busy, "
                   "not full")  # fmt: skip
    res = row.result if isinstance(row.result, dict) else {}
    pct = res.get("samples_per_s_spread_pct")
    if isinstance(pct, int | float) and pct > SPREAD_WARN_PCT:
        out.append(f"windows differ by {pct:.0f}%: the machine was not steady")
    cfg = row.config if isinstance(row.config, dict) else {}
    if cfg.get("preset"):
        tuned = [k.replace("_", "-") for k in ("compile", "channels_last") if cfg.get(k)]
        out.append(f"preset {cfg['preset']}" + (f" ({', '.join(tuned)})" if tuned else "")
                   + ": not the review's default setup")  # fmt: skip
    if not charted:
        out.append("a newer run of this slot has another setup (batch, data, versions): "
                   "this run is in the table only, not in the charts")  # fmt: skip
    return out


def experiment_section(rows: Sequence[ResultRow], left_out: Sequence[ResultRow]) -> list[str]:
    """One table per experiment (workload), in the review's order; rows in review order."""
    if not rows:
        return []
    out = ["## The experiments", "",
           "Means over each run's measured window (warm-up excluded), sampled every 0.5 s. GPU "
           "memory is the fullest GPU's, in GiB (2^30 bytes); CPU utilization is the runner's "
           "process tree in % of one core (200% = two cores busy); CPU memory is its resident "
           "memory in GiB. Spread: half the range of the measured windows' rates, or how much "
           "slower the p90 step is than the median one.", ""]  # fmt: skip
    excluded = {id(r) for r in left_out}
    by_workload: dict[str, list[ResultRow]] = {}
    for r in rows:
        by_workload.setdefault(r.workload, []).append(r)
    for n, (workload, group) in enumerate(by_workload.items(), start=1):
        gpu_names = _distinct(r.gpu_name for r in group)
        out += [f"### Experiment {n}: {model_name(workload)}", "", f"On {gpu_names}.", ""]
        body = []
        notes: list[str] = []
        for r in group:
            run = str(r.run_id or "")
            body.append((
                FRAMEWORK_NAMES.get(r.framework, r.framework), r.mode, str(r.gpus),
                (r.precision or "default").upper(), _num(r.batch_size, "d"),
                _num(r.samples_per_s, ",.1f"), spread(r), _num(r.gpu_util, ".0f"),
                _num(r.mem_util, ".0f"), _gib(r.gpu_mem_bytes), _num(r.cpu_util, ".0f"),
                _gib(r.cpu_mem_bytes), run,
            ))  # fmt: skip
            notes += [f"Run {run}: {w}." for w in warnings_for(r, id(r) not in excluded)]
            anchor = anchor_for(r)
            if anchor is not None:
                notes.append(f"Run {run}: published {published_cell(anchor)}, {anchor.source} "
                             f"({anchor.settings}).")  # fmt: skip
        out += table(EXPERIMENT_TITLES, body, RIGHT)
        if notes:
            out += [""] + [f"- {note}" for note in notes]
        out.append("")
    return out


def scaling_lines(rows: Sequence[ResultRow]) -> list[str]:
    """1 vs N GPU figures with weak-scaling efficiency, same setup apart from the GPU count."""
    out = []
    ones = {(r.workload, r.framework, r.mode, r.precision, r.batch_size, r.gpu_name): r
            for r in rows if r.gpus == 1 and r.samples_per_s}  # fmt: skip
    for r in rows:
        one = ones.get((r.workload, r.framework, r.mode, r.precision, r.batch_size, r.gpu_name))
        if r.gpus > 1 and r.samples_per_s and one is not None and one.samples_per_s:
            speedup = r.samples_per_s / one.samples_per_s
            out.append(
                f"- {model_name(r.workload)} {FRAMEWORK_NAMES.get(r.framework, r.framework)} "
                f"{r.mode}: {one.samples_per_s:,.1f} -> {r.samples_per_s:,.1f} samples/s on "
                f"{r.gpus} GPUs, {speedup:.2f}x, {100 * speedup / r.gpus:.0f}% efficiency "
                f"(runs {one.run_id} and {r.run_id})"
            )
    return out
