"""The GPU-to-GPU topology matrix, like ``nvidia-smi topo -m``: ``NV<n>`` for n NVLinks between two
GPUs (counted from each active link's remote PCI bus id), otherwise the PCIe path from
``nvmlDeviceGetTopologyCommonAncestor``: PIX (one switch), PXB (several switches), PHB (host bridge),
NODE (within a NUMA node), SYS (across the SMP interconnect)."""

from __future__ import annotations

from typing import Any

from zbench.telemetry.nvml_util import text

_LEVELS = (
    ("NVML_TOPOLOGY_INTERNAL", "X"),
    ("NVML_TOPOLOGY_SINGLE", "PIX"),
    ("NVML_TOPOLOGY_MULTIPLE", "PXB"),
    ("NVML_TOPOLOGY_HOSTBRIDGE", "PHB"),
    ("NVML_TOPOLOGY_NODE", "NODE"),
    ("NVML_TOPOLOGY_SYSTEM", "SYS"),
)


def _bus_key(bus_id: str) -> str:
    """``00000000:18:00.0`` and ``0000:18:00.0`` name the same device: compare bus:device.function."""
    return ":".join(bus_id.strip().lower().split(":")[-2:])


def nvlink_peers(nv: Any, handle: Any, links: list[int]) -> dict[str, int]:
    """Remote bus key -> number of active links to it."""
    peers: dict[str, int] = {}
    for link in links:
        try:
            pci = nv.nvmlDeviceGetNvLinkRemotePciInfo(handle, link)
        except nv.NVMLError:
            continue
        key = _bus_key(text(pci.busId))
        peers[key] = peers.get(key, 0) + 1
    return peers


def _switched_links(nv: Any, hi: Any, hj: Any, links: list[list[int]], i: int, j: int) -> int:
    """Links between two GPUs joined through NVSwitches (HGX boards): their links end at a switch,
    not at each other, so the remote bus ids never match. NVML's P2P status says whether the pair
    talks over NVLink; the pair then has as many links as the less-connected GPU."""
    if not (links[i] and links[j]) or not hasattr(nv, "nvmlDeviceGetP2PStatus"):
        return 0
    try:
        status = nv.nvmlDeviceGetP2PStatus(hi, hj, nv.NVML_P2P_CAPS_INDEX_NVLINK)
    except (nv.NVMLError, AttributeError):
        return 0
    return min(len(links[i]), len(links[j])) if status == nv.NVML_P2P_STATUS_OK else 0


def matrix(
    nv: Any, handles: list[Any], bus_ids: list[str], links: list[list[int]]
) -> list[list[str]]:
    """The GPU topology matrix: X on the diagonal, NV<n> for NVLinks, else the PCIe path (PIX..)."""
    names = {getattr(nv, const): label for const, label in _LEVELS if hasattr(nv, const)}
    peers = [nvlink_peers(nv, h, ls) for h, ls in zip(handles, links, strict=True)]
    out: list[list[str]] = []
    for i, hi in enumerate(handles):
        row = []
        for j, hj in enumerate(handles):
            if i == j:
                row.append("X")
                continue
            n = peers[i].get(_bus_key(bus_ids[j]), 0) or _switched_links(nv, hi, hj, links, i, j)
            if n:
                row.append(f"NV{n}")
                continue
            try:
                row.append(names.get(nv.nvmlDeviceGetTopologyCommonAncestor(hi, hj), "?"))
            except nv.NVMLError:
                row.append("n/a")
        out.append(row)
    return out
