"""What limited a job: a verdict over the telemetry samples of its measured window, with evidence.

A pure function of the stored samples (``results.aggregate.compact_sample``), so a verdict can be
computed while a job runs, stored with its result, and derived again later for any job whose
samples were kept. The rules and their thresholds are named below; each finding says what it saw.

- input-bound: the GPUs sat idle in many samples while the job's processes kept CPU cores busy
  (data loader workers decoding and augmenting while the GPU waits).
- communication-bound: when NVLink is busy, SM activity drops (GPUs waiting on each other).
- throttled: the clocks were slowed for heat or by the hardware during the window.
- memory-bound: DRAM bandwidth high while the tensor cores idle.
- GPU-bound: none of the above, and the GPUs were busy nearly all the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from zbench.clocks import THROTTLES
from zbench.textfit import counted

Sample = dict[str, Any]

MIN_SAMPLES = 4  # fewer samples than this (2 s at 0.5 s) say nothing
GAP_UTIL = 50.0  # a sample where the GPUs' util is below this is an idle gap
GAP_SHARE = 0.15  # input-bound: gaps in at least this share of the window...
# ...while the job's processes keep at least one core busy: one loader worker at full speed is
# the plainest input-bound job (on an H200, ResNet-50 with host-made data and one worker: GPU util
# 12%, the job's processes 1.16 cores; a threshold of 1.5 called that "no clear bottleneck").
LOADER_CORES = 1.0
HOST_BUSY = 85.0  # ...or the host's CPUs are this busy
NVL_BUSY_PCT = 30.0  # NVLink busy: this share of the active links' capacity, either direction
NVL_BUSY_REL = 0.5  # (no capacity known: half of the window's peak traffic...)
NVL_FLOOR = 1e9  # ...and at least 1 GB/s)
COMM_SHARE = 0.10  # communication-bound: NVLink busy in this share of the window...
SM_DROP = 15.0  # ...and SM activity that many points lower then than otherwise
COMM_MOSTLY = 0.5  # (or NVLink busy in this share of the window...
SM_LOW = 30.0  # ...with SM activity at most this: a copy, not compute)
THROTTLE_SHARE = 0.10  # throttled: a slow-down reason in this share of the window
DRAM_HIGH = 50.0  # memory-bound: DRAM bandwidth at least this...
TENSOR_LOW = 20.0  # ...with tensor activity below this
GPU_BUSY = 85.0  # GPU-bound: mean util at least this

TITLES = {
    "input-bound": "input-bound",
    "communication-bound": "communication-bound",
    "throttled": "throttled",
    "memory-bound": "memory-bound",
    "gpu-bound": "GPU-bound",
    "unclear": "no clear bottleneck",
    "unknown": "not judged",
}


@dataclass(frozen=True)
class Finding:
    """One bottleneck rule that held (``kind``, a key of TITLES) and the figures that show it."""

    kind: str
    evidence: str


@dataclass(frozen=True)
class Verdict:
    """``kind``: the main limit (one of ``TITLES``); ``findings``: every rule that held, the main
    one first, each with its evidence; ``notes``: what could not be judged and why."""

    kind: str
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    n_samples: int = 0
    window_s: float | None = None
    measured: bool = True  # from the measure phase (False: no measure phase yet, all samples)
    metrics: dict[str, float | None] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return TITLES.get(self.kind, self.kind)

    def evidence(self) -> str:
        return "; ".join(f.evidence for f in self.findings)

    def line(self) -> str:
        """One line: the verdict and its evidence."""
        text = self.evidence() or "; ".join(self.notes)
        return f"{self.title}: {text}" if text else self.title

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["title"] = self.title
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(
            kind=str(d.get("kind", "unknown")),
            findings=tuple(
                Finding(str(f["kind"]), str(f["evidence"])) for f in d.get("findings", ())
            ),
            notes=tuple(str(n) for n in d.get("notes", ())),
            n_samples=int(d.get("n_samples", 0)),
            window_s=d.get("window_s"),
            measured=bool(d.get("measured", True)),
            metrics=dict(d.get("metrics") or {}),
        )


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _gpu_mean(s: Sample, key: str) -> float | None:
    return _mean(g.get(key) for g in s.get("gpus", ()))


def _nvl(s: Sample) -> tuple[float | None, float | None]:
    """The busiest GPU's NVLink use in a sample: (percent of capacity, bytes/s), each None if not
    read."""
    pct = [g.get("nvl_pct") for g in s.get("gpus", ()) if g.get("nvl_pct") is not None]
    rate = [
        (g.get("nvl_tx") or 0.0) + (g.get("nvl_rx") or 0.0)
        for g in s.get("gpus", ())
        if g.get("nvl_tx") is not None or g.get("nvl_rx") is not None
    ]
    return (max(pct) if pct else None), (max(rate) if rate else None)


def window(samples: Sequence[Sample]) -> tuple[list[Sample], bool]:
    """The measured window's samples (phase ``measure``); all samples when there is none yet."""
    measured = [s for s in samples if s.get("phase") == "measure"]
    return (measured, True) if measured else (list(samples), False)


def _input_bound(samples: Sequence[Sample], util: list[float | None]) -> Finding | None:
    known = [(s, u) for s, u in zip(samples, util, strict=True) if u is not None]
    gaps = [s for s, u in known if u < GAP_UTIL]
    if not known or len(gaps) / len(known) < GAP_SHARE:
        return None
    cores = _mean(s.get("cpu") for s in gaps)
    host = _mean(s.get("host_cpu") for s in gaps)
    busy_cpu = cores is not None and cores / 100.0 >= LOADER_CORES
    busy_host = host is not None and host >= HOST_BUSY
    if not (busy_cpu or busy_host):
        return None
    cpu_text = f"the job's processes used {cores / 100:.1f} cores" if cores is not None else ""
    host_text = f"host CPU {host:.0f}%" if host is not None else ""
    share = 100 * len(gaps) / len(known)
    return Finding(
        "input-bound",
        f"GPU util under {GAP_UTIL:.0f}% in {share:.0f}% of samples while "
        + ", ".join(t for t in (cpu_text, host_text) if t),
    )


def _communication_bound(samples: Sequence[Sample], notes: list[str]) -> Finding | None:
    nvl = [_nvl(s) for s in samples]
    if all(p is None and r is None for p, r in nvl):
        return None
    peak = max((r for _, r in nvl if r is not None), default=0.0)
    busy = [
        (p >= NVL_BUSY_PCT)
        if p is not None
        else (r is not None and r >= max(NVL_FLOOR, NVL_BUSY_REL * peak))
        for p, r in nvl
    ]
    sm = [_gpu_mean(s, "sm") for s in samples]
    share = sum(busy) / len(samples)
    if share < COMM_SHARE:
        return None
    if all(v is None for v in sm):
        notes.append(
            f"NVLink busy in {100 * share:.0f}% of samples, but SM activity was not read (no GPM):"
            " communication-bound not judged"
        )
        return None
    during = _mean(v for v, b in zip(sm, busy, strict=True) if b)
    other = _mean(v for v, b in zip(sm, busy, strict=True) if not b)
    if during is None:
        return None
    mostly = share >= COMM_MOSTLY and during <= SM_LOW  # links busy, SMs all but idle
    dropped = other is not None and other - during >= SM_DROP
    if not (mostly or dropped):
        return None
    text = f"NVLink busy in {100 * share:.0f}% of samples, SM activity {during:.0f}% then"
    if dropped:
        text += f" vs {other:.0f}% otherwise"
    return Finding("communication-bound", text)


def throttle_fractions(samples: Sequence[Sample]) -> dict[str, float] | None:
    """Per clock-event reason: the fraction of samples (with reasons read) in which any of the job's
    GPUs reported it. None when no sample read the reasons."""
    known = 0
    counts: dict[str, int] = {}
    for s in samples:
        reasons = [g.get("thr") for g in s.get("gpus", ())]
        if not any(r is not None for r in reasons):
            continue
        known += 1
        for name in {n for r in reasons if r for n in r}:
            counts[name] = counts.get(name, 0) + 1
    if not known:
        return None
    return {name: counts[name] / known for name in sorted(counts)}


def _throttled(samples: Sequence[Sample]) -> Finding | None:
    fractions = throttle_fractions(samples) or {}
    slow = {k: v for k, v in fractions.items() if k in THROTTLES and v >= THROTTLE_SHARE}
    if not slow:
        return None
    what = ", ".join(f"{k} in {100 * v:.0f}% of samples" for k, v in sorted(slow.items()))
    return Finding("throttled", f"clocks slowed: {what}")


def _memory_bound(dram: float | None, tensor: float | None) -> Finding | None:
    if dram is None or tensor is None or dram < DRAM_HIGH or tensor >= TENSOR_LOW:
        return None
    return Finding(
        "memory-bound", f"DRAM bandwidth {dram:.0f}% while tensor activity {tensor:.0f}%"
    )


def bottleneck(samples: Sequence[Sample]) -> Verdict | None:
    """The verdict for a job's samples (all of them: the measured window is picked here). None
    when there are no samples at all."""
    if not samples:
        return None
    chosen, measured = window(samples)
    ts = [float(s["t"]) for s in chosen if s.get("t") is not None]
    span = (max(ts) - min(ts)) if ts else None
    util = [_gpu_mean(s, "util") for s in chosen]
    metrics = {
        "gpu_util": _mean(util),
        "sm": _mean(_gpu_mean(s, "sm") for s in chosen),
        "tensor": _mean(_gpu_mean(s, "tensor") for s in chosen),
        "dram": _mean(_gpu_mean(s, "dram") for s in chosen),
        "cpu_cores": (lambda c: None if c is None else c / 100.0)(
            _mean(s.get("cpu") for s in chosen)
        ),
    }
    base: dict[str, Any] = {
        "n_samples": len(chosen),
        "window_s": span,
        "measured": measured,
        "metrics": metrics,
    }
    if not any(s.get("gpus") for s in chosen):
        return Verdict("unknown", notes=("no GPU in its samples (a CPU run)",), **base)
    if len(chosen) < MIN_SAMPLES:
        return Verdict(
            "unknown", notes=(f"{counted(len(chosen), 'sample')} in the window",), **base
        )
    notes: list[str] = []
    found = [
        f
        for f in (
            _input_bound(chosen, util),
            _communication_bound(chosen, notes),
            _throttled(chosen),
            _memory_bound(metrics["dram"], metrics["tensor"]),
        )
        if f is not None
    ]
    if metrics["dram"] is None:
        notes.append("DRAM and tensor activity not read (no GPM): memory-bound not judged")
    mean_util = metrics["gpu_util"]
    if found:
        return Verdict(found[0].kind, tuple(found), tuple(notes), **base)
    if mean_util is not None and mean_util >= GPU_BUSY:
        sm = metrics["sm"]
        extra = f", SM activity {sm:.0f}%" if sm is not None else ""
        busy = Finding(
            "gpu-bound", f"GPU util {mean_util:.0f}%{extra}; no input, link or clock limit"
        )
        return Verdict("gpu-bound", (busy,), tuple(notes), **base)
    what = f"GPU util {mean_util:.0f}%" if mean_util is not None else "GPU util not read"
    notes.insert(0, f"{what}; no input, link, clock or memory limit found")
    return Verdict("unclear", (), tuple(notes), **base)
