"""Theoretical peaks from what NVML reports: architecture, SM count, clocks, memory bus.

peak FLOP/s      = SMs x max SM clock x FLOPs per SM per clock (by architecture, below)
peak memory B/s  = bus width / 8 x max memory clock x 2

Per-SM throughput, dense (no sparsity), FLOPs = 2 x FMA. Sources: NVIDIA architecture whitepapers
(Volta GV100, Turing TU102, Ampere GA100 and GA102, Ada AD102, Hopper H100, Blackwell).
  arch (CC)          FP32 lanes  FP16/BF16 tensor FMA/clk/SM   check
  Volta (7.0)        64          512 (no BF16)                 V100 SXM2: 80 SM x 1530 MHz -> 15.7 / 125 TF
  Turing (7.5)       64          512 (no BF16)                 RTX 8000: 72 x 1770 -> 16.3 / 130.5 TF
  Ampere GA100 (8.0) 64          1024                          A100: 108 x 1410 -> 19.5 / 312 TF
  Ampere GA10x (8.6) 128         512                           RTX 3090: 82 x 1695 -> 35.6 / 142 TF
  Ada (8.9)          128         512                           RTX 4090: 128 x 2520 -> 82.6 / 330 TF
  Hopper (9.0)       128         2048                          H100/H200 SXM: 132 x 1980 -> 66.9 TF FP32;
                                                               tensor at 1830 MHz -> 989 TF (see below)
  Blackwell (10.x)   128         4096                          B200: 148 SM
  Blackwell (12.x)   128         1024
GeForce parts run FP16 tensor math with FP32 accumulation at half rate; the figures are the FP16-
accumulate (Quadro/datacenter) rates, i.e. an upper bound.

NVIDIA quotes Hopper SXM tensor peaks at 1830 MHz, below the 1980 MHz maximum SM clock that the FP32
figure uses (H100 whitepaper, table 3: 66.9 TF FP32 and 989.4 TF dense FP16/BF16); ``TENSOR_CLOCK_CAP``
reproduces that so the ratio shown beside a measurement is against the published figure.

Memory: NVML reports the memory clock at half the data rate for both HBM and GDDR (H100 SXM: 5120 bits,
2619 MHz -> 3.35 TB/s; A100: 5120 bits, 1215 MHz -> 1.56 TB/s; V100: 4096 bits, 877 MHz -> 0.90 TB/s;
RTX 8000: 384 bits, 7001 MHz -> 672 GB/s; H200: 6144 bits -> ~4.8 TB/s), hence the factor 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from zbench.telemetry.snapshot import NA, Metric

# (major, minor or None for any) -> (name, FP32 lanes/SM, tensor FP16 FMA/clk/SM, BF16 tensor?)
_ARCH: dict[tuple[int, int | None], tuple[str, int, int, bool]] = {
    (6, None): ("Pascal", 64, 0, False),
    (7, 0): ("Volta", 64, 512, False),
    (7, 2): ("Volta", 64, 512, False),
    (7, 5): ("Turing", 64, 512, False),
    (8, 0): ("Ampere", 64, 1024, True),
    (8, 6): ("Ampere", 128, 512, True),
    (8, 7): ("Ampere", 128, 512, True),
    (8, 9): ("Ada", 128, 512, True),
    (9, 0): ("Hopper", 128, 2048, True),
    (10, None): ("Blackwell", 128, 4096, True),
    (12, None): ("Blackwell", 128, 1024, True),
}
TENSOR_CLOCK_CAP_MHZ = {(9, 0): 1830.0}
MEMORY_DATA_RATE = 2
# PCIe per-lane transfer rate (GT/s) and line-code efficiency, per generation (PCI-SIG): gen 5 x16
# -> 32 GT/s x 16 x 128/130 / 8 = 63 GB/s per direction.
_PCIE = {
    1: (2.5, 0.8),
    2: (5.0, 0.8),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
}


def pcie_bytes_s(gen: int | None, width: int | None) -> Metric:
    """Per-direction PCIe bandwidth in bytes/s for a link generation and width; NA if unknown."""
    if not gen or not width or gen not in _PCIE:
        return NA
    gts, eff = _PCIE[gen]
    return gts * 1e9 * width * eff / 8


@dataclass(frozen=True)
class GpuSpecs:
    """A GPU's architecture, SMs, clocks and memory, and the theoretical peaks they give."""

    architecture: str
    compute_capability: str
    sm_count: int | None
    max_sm_clock_mhz: float | None
    max_mem_clock_mhz: float | None
    mem_bus_width_bits: int | None
    mem_total_bytes: int | None
    fp32_tflops: Metric = NA
    fp16_tflops: Metric = NA  # dense tensor
    bf16_tflops: Metric = NA  # dense tensor
    tf32_tflops: Metric = NA  # dense tensor, half the FP16 rate on Ampere and newer
    mem_bw_bytes_s: Metric = NA
    pcie_bytes_s: Metric = NA  # per direction, from the link's max generation and width


def _arch(cc: tuple[int, int]) -> tuple[str, int, int, bool] | None:
    return _ARCH.get(cc) or _ARCH.get((cc[0], None))


def architecture(cc: tuple[int, int]) -> str:
    """The architecture named by a compute capability (``unknown (sm_XY)`` if not in the table)."""
    a = _arch(cc)
    return a[0] if a else f"unknown (sm_{cc[0]}{cc[1]})"


def fp32_lanes_per_sm(cc: tuple[int, int]) -> int | None:
    """FP32 lanes per SM for a compute capability; None if it is not in the table."""
    a = _arch(cc)
    return a[1] if a else None


def compute(
    cc: tuple[int, int],
    cores: int | None,
    max_sm_clock_mhz: float | None,
    max_mem_clock_mhz: float | None,
    bus_width_bits: int | None,
    mem_total_bytes: int | None = None,
    pcie_gen: int | None = None,
    pcie_width: int | None = None,
) -> GpuSpecs:
    """GpuSpecs from NVML's figures: SM count, theoretical FP32/FP16/BF16/TF32 and memory peaks."""
    a = _arch(cc)
    sms = cores // a[1] if (a and cores) else None
    fp32: Metric = NA
    fp16: Metric = NA
    bf16: Metric = NA
    tf32: Metric = NA
    bw: Metric = NA
    if a and sms and max_sm_clock_mhz:
        _, lanes, tensor_fma, has_bf16 = a
        fp32 = sms * lanes * 2 * max_sm_clock_mhz * 1e6 / 1e12
        if tensor_fma:
            clock = min(max_sm_clock_mhz, TENSOR_CLOCK_CAP_MHZ.get(cc, max_sm_clock_mhz))
            fp16_value = sms * tensor_fma * 2 * clock * 1e6 / 1e12
            fp16 = fp16_value
            if has_bf16:
                bf16 = fp16_value
                tf32 = fp16_value / 2
    if max_mem_clock_mhz and bus_width_bits:
        bw = bus_width_bits / 8 * max_mem_clock_mhz * 1e6 * MEMORY_DATA_RATE
    return GpuSpecs(
        architecture=architecture(cc),
        compute_capability=f"{cc[0]}.{cc[1]}",
        sm_count=sms,
        max_sm_clock_mhz=max_sm_clock_mhz,
        max_mem_clock_mhz=max_mem_clock_mhz,
        mem_bus_width_bits=bus_width_bits,
        mem_total_bytes=mem_total_bytes,
        fp32_tflops=fp32,
        fp16_tflops=fp16,
        bf16_tflops=bf16,
        tf32_tflops=tf32,
        mem_bw_bytes_s=bw,
        pcie_bytes_s=pcie_bytes_s(pcie_gen, pcie_width),
    )


def read_specs(nv: object, handle: object) -> GpuSpecs:
    """Query NVML for the inputs of :func:`compute`; a missing input leaves its peaks ``NA``."""

    def q(name: str, *args: object) -> object:
        try:
            return getattr(nv, name)(handle, *args)
        except Exception:  # NVMLError of any kind, or an old library without the call
            return None

    cc_raw = q("nvmlDeviceGetCudaComputeCapability")
    cc = (int(cc_raw[0]), int(cc_raw[1])) if isinstance(cc_raw, tuple | list) else (0, 0)
    mem = q("nvmlDeviceGetMemoryInfo")
    return compute(
        cc,
        _int(q("nvmlDeviceGetNumGpuCores")),
        _float(q("nvmlDeviceGetMaxClockInfo", getattr(nv, "NVML_CLOCK_SM", 1))),
        _float(q("nvmlDeviceGetMaxClockInfo", getattr(nv, "NVML_CLOCK_MEM", 2))),
        _int(q("nvmlDeviceGetMemoryBusWidth")),
        _int(getattr(mem, "total", None)),
        _int(q("nvmlDeviceGetGpuMaxPcieLinkGeneration") or q("nvmlDeviceGetMaxPcieLinkGeneration")),
        _int(q("nvmlDeviceGetMaxPcieLinkWidth")),
    )


def _int(v: object) -> int | None:
    return int(v) if isinstance(v, int | float) and v else None


def _float(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and v else None
