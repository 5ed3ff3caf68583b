"""The probe: runs ``zbench.runners.probe`` in a subprocess, samples telemetry while it runs,
and puts each figure beside its theoretical peak (``telemetry.specs``, from NVML).

During every GPU-to-GPU copy the sampler (0.1 s) reads the NVLink TX counters of the source GPU; the
mean TX rate over the copy's window is reported next to the bandwidth the copy measured, so the two
independent figures check each other. Each copy lasts ``p2p_seconds`` (default 3 s, or
``$ZBENCH_PROBE_P2P_SECONDS``), long enough for a separate ``zbench monitor`` to catch it too.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zbench.contract.protocol import EventTail
from zbench.errors import ZbenchError
from zbench.telemetry.backends import open_backend, parse_gpus
from zbench.telemetry.sampler import Sampler
from zbench.telemetry.snapshot import NA, Snapshot

SAMPLE_INTERVAL = 0.1
PEAK_KEY = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "bf16": "bf16_tflops",
}


def _peaks(backend: Any) -> dict[int, dict[str, Any]]:
    """Per GPU index: the theoretical peaks and NVLink capacity, when NVML is there."""
    devices = getattr(backend, "devices", None)
    if not devices:
        return {}
    from zbench.telemetry.snapshot import to_dict
    from zbench.telemetry.specs import read_specs

    out = {}
    for d in devices:
        peaks = to_dict(read_specs(backend.nv, d.handle))
        cap = d.nvlink.capacity
        peaks["nvlink_bytes_s"] = (
            None if cap is NA or not d.nvlink.links else cap * len(d.nvlink.links)
        )
        out[d.index] = peaks
    return out


def nvlink_tx_during(snaps: list[Snapshot], gpu: int, t0: float, t1: float, interval: float) -> Any:
    """Mean NVLink TX of ``gpu`` over samples whose whole interval lies inside [t0, t1]."""
    rates = []
    for s in snaps:
        if t0 + interval <= s.t <= t1:
            for g in s.gpus:
                if g.index == gpu and g.nvlink.tx_bytes_s is not NA:
                    rates.append(float(g.nvlink.tx_bytes_s))  # type: ignore[arg-type]
    return statistics.mean(rates) if rates else None


def build_rows(results: list[dict[str, Any]], peaks: dict[int, dict[str, Any]],
               snaps: list[Snapshot], interval: float) -> list[dict[str, Any]]:  # fmt: skip
    rows = []
    for r in results:
        test = r["test"]
        gpu = r.get("gpu", r.get("src"))
        p = peaks.get(gpu, {}) if gpu is not None else {}
        row: dict[str, Any] = {"test": test, "gpu": gpu}
        if test == "matmul":
            row.update(name=f"matmul {r['dtype']}", unit="TFLOPS", value=r["tflops"],
                       peak=p.get(PEAK_KEY[r["dtype"]]))  # fmt: skip
        else:
            peak_key = {"memcpy": "mem_bw_bytes_s", "h2d": "pcie_bytes_s", "d2h": "pcie_bytes_s",
                        "p2p": "nvlink_bytes_s"}[test]  # fmt: skip
            peak = p.get(peak_key)
            if test == "p2p" and peak is None:
                peak = p.get("pcie_bytes_s")
            name = {"memcpy": "device memory copy", "h2d": "pinned host -> device",
                    "d2h": "device -> pinned host"}.get(test, f"GPU {r.get('src')} -> GPU {r.get('dst')}")  # fmt: skip
            row.update(name=name, unit="GB/s", value=r["bytes_s"] / 1e9,
                       peak=None if peak is None else peak / 1e9)  # fmt: skip
            if test == "p2p":
                tx = nvlink_tx_during(snaps, r["src"], r["t_start"], r["t_end"], interval)
                row["dst"] = r["dst"]
                row["nvlink_tx_gb_s"] = None if tx is None else tx / 1e9
        value, peak = row["value"], row.get("peak")
        row["ratio"] = value / peak if peak else None
        rows.append(row)
    return rows


class ProbeError(ZbenchError):
    """The probe could not run (no PyTorch, a bad ``--gpus``) or its runner failed."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class ProbeResult:
    rows: list[dict[str, Any]]  # each figure beside its peak (:func:`build_rows`)
    raw: list[dict[str, Any]]  # the runner's result events


# step, total, label: the runner's progress events, for a progress bar
ProgressFn = Callable[[int, int, str], None]


def measure(gpus: str | None = None, quick: bool = False, p2p_seconds: float | None = None,
            progress: ProgressFn | None = None) -> ProbeResult:  # fmt: skip
    """Run the probe's runner with the sampler on; raises :class:`ProbeError` (exit 1 or 2)."""
    if p2p_seconds is None:
        p2p_seconds = float(os.environ.get("ZBENCH_PROBE_P2P_SECONDS", "3"))
    if importlib.util.find_spec("torch") is None:
        raise ProbeError("needs PyTorch: pip install 'zbench[torch]'", exit_code=1)
    try:
        gpu_list = parse_gpus(gpus)
        backend = open_backend(gpus=None)
    except ValueError as exc:
        raise ProbeError(str(exc)) from None
    snaps: list[Snapshot] = []
    sampler = Sampler(backend, interval=SAMPLE_INTERVAL)
    sampler.subscribe(snaps.append)
    with tempfile.TemporaryDirectory(prefix="zbench-probe-") as tmp:
        events = Path(tmp) / "events.jsonl"
        log = Path(tmp) / "probe.log"
        cmd = [sys.executable, "-m", "zbench.runners.probe", "--events", str(events),
               "--p2p-seconds", str(p2p_seconds)]  # fmt: skip
        if gpu_list is not None:
            cmd += ["--gpus", ",".join(map(str, gpu_list))]
        if quick:
            cmd.append("--quick")
        sampler.start()
        try:
            results, error, rc = _supervise(cmd, events, log, progress)
        finally:
            sampler.stop()
            peaks = _peaks(backend)
            backend.close()
        log_tail = log.read_text(errors="replace").strip().splitlines()[-5:]
    if error or rc != 0:
        msg = error or (log_tail[-1] if log_tail else f"runner exited with {rc}")
        raise ProbeError(msg, exit_code=2 if rc == 2 else 1)
    return ProbeResult(build_rows(results, peaks, snaps, SAMPLE_INTERVAL), results)


def _supervise(cmd: list[str], events: Path, log: Path, progress: ProgressFn | None) -> tuple[list[dict[str, Any]], str | None, int]:  # fmt: skip
    tail = EventTail(events)
    results: list[dict[str, Any]] = []
    error = None
    with open(log, "w") as log_fh:
        proc = subprocess.Popen(cmd, stdout=log_fh, stderr=subprocess.STDOUT)
        try:
            while True:
                done = proc.poll() is not None
                for ev in tail.poll():
                    if ev["type"] == "progress":
                        if progress is not None:
                            progress(ev["step"], ev["total"], ev.get("label", ""))
                    elif ev["type"] == "result":
                        results.append(ev)
                    elif ev["type"] == "error":
                        error = ev.get("message", "failed")
                if done:
                    break
                time.sleep(0.1)
        except KeyboardInterrupt:
            proc.terminate()
            proc.wait(10)
            return results, "interrupted", 1
    return results, error, proc.returncode
