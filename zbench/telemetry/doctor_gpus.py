"""The GPU half of ``zbench doctor``: versions, per-GPU specs and peaks, topology, warnings."""

from __future__ import annotations

from typing import Any

from zbench.telemetry.nvml import NvmlBackend
from zbench.telemetry.nvml_util import text
from zbench.telemetry.snapshot import NA, GpuSnapshot, to_dict
from zbench.telemetry.specs import read_specs
from zbench.telemetry.topology import matrix

NOT_THROTTLING = {"idle", "app_clocks", "sync_boost", "display_clocks"}


def _q(nv: Any, fn: str, *args: Any) -> Any:
    try:
        return getattr(nv, fn)(*args)
    except Exception:  # any NVMLError, or an old library without the function
        return None


def versions(nv: Any) -> dict[str, Any]:
    """The driver's, CUDA's (driver) and NVML's versions; None where NVML does not say."""
    cuda = _q(nv, "nvmlSystemGetCudaDriverVersion")
    return {
        "driver": text(_q(nv, "nvmlSystemGetDriverVersion") or "") or None,
        "cuda_driver": f"{cuda // 1000}.{cuda % 1000 // 10}" if isinstance(cuda, int) else None,
        "nvml": text(_q(nv, "nvmlSystemGetNVMLVersion") or "") or None,
    }


def warnings_for(nv: Any, handle: Any, snap: GpuSnapshot) -> list[str]:
    """What on this GPU may skew a benchmark: persistence off, power cap, ECC errors, throttling."""
    out = []
    i = snap.index
    if _q(nv, "nvmlDeviceGetPersistenceMode", handle) == 0:
        out.append(
            f"GPU {i}: persistence mode is off (each new process pays driver start-up; "
            "`sudo nvidia-smi -pm 1`)"
        )
    default = _q(nv, "nvmlDeviceGetPowerManagementDefaultLimit", handle)
    enforced = _q(nv, "nvmlDeviceGetEnforcedPowerLimit", handle)
    if isinstance(default, int) and isinstance(enforced, int) and enforced < default:
        out.append(
            f"GPU {i}: power cap {enforced / 1000:.0f} W is below the default "
            f"{default / 1000:.0f} W"
        )
    if snap.ecc_errors is not NA and snap.ecc_errors:
        out.append(f"GPU {i}: {snap.ecc_errors} uncorrected ECC errors since the driver loaded")
    if snap.throttle_reasons is not NA:
        active = [r for r in snap.throttle_reasons if r not in NOT_THROTTLING]  # type: ignore[union-attr]
        if active:
            out.append(f"GPU {i}: clocks are being held down now ({', '.join(active)})")
    if snap.lost:
        out.append(f"GPU {i}: not answering NVML (lost)")
    return out


def gpu_report(backend: NvmlBackend) -> dict[str, Any]:
    """The doctor's GPU half: versions, each GPU's specs and peaks, the topology, warnings."""
    nv = backend.nv
    snap = backend.sample()
    gpus = []
    warnings: list[str] = []
    opened = [d for d in backend.devices if d.opened]
    for dev, g in zip(backend.devices, snap.gpus, strict=True):
        if not dev.opened:  # lost while opening: nothing more can be read from it
            gpus.append({"index": g.index, "name": g.name, "lost": True})
            warnings += warnings_for(nv, dev.handle, g)
            continue
        specs = read_specs(nv, dev.handle)
        gpus.append(
            {
                "index": g.index,
                "name": g.name,
                "uuid": g.uuid,
                "bus_id": g.bus_id,
                **to_dict(specs),
                "power_limit_w": to_dict(g.power_limit_w),
                "nvlink_links": len(dev.nvlink.links) if dev.nvlink.supported else None,
                "nvlink_link_bytes_s": to_dict(dev.nvlink.capacity),
                "gpm_supported": dev.gpm.supported,
            }
        )
        warnings += warnings_for(nv, dev.handle, g)
    topo = matrix(
        nv,
        [d.handle for d in opened],
        [d.bus_id for d in opened],
        [d.nvlink.links for d in opened],
    )
    return {
        "nvml": versions(nv),
        "gpus": gpus,
        "topology": {"labels": [f"GPU{d.index}" for d in opened], "matrix": topo},
        "warnings": warnings,
    }
