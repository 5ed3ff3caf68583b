"""The NVML backend against the fake pynvml: each failure the hardware can throw at it."""

from __future__ import annotations

import sys
import time

import psutil
import pytest

from tests.fakes.fake_nvml import FakeNvml
from zbench.telemetry.backends import HostOnlyBackend, open_backend
from zbench.telemetry.host import MIN_CPU_WINDOW_S
from zbench.telemetry.nvml import NvmlBackend
from zbench.telemetry.snapshot import NA


def _two_samples(fake: FakeNvml, backend: NvmlBackend, dt: float = 0.5):  # type: ignore[no-untyped-def]
    backend.sample()
    fake.advance(dt)
    return backend.sample()


def test_reads_every_metric(fake: FakeNvml) -> None:
    g0 = fake.gpus[0]
    g0.util_gpu, g0.util_mem, g0.power_mw, g0.throttle = 97, 41, 650_500, 0x4 | 0x40
    g0.pcie_tx_kb = 1000
    g0.processes = [(4242, 3 * 2**30, 88)]
    g0.gpm = {2: 91.5, 3: 30.0, 5: 80.0, 10: 45.0, 11: 0.0, 12: 2.0, 13: 0.5}
    backend = open_backend()
    assert isinstance(backend, NvmlBackend) and backend.notice is None
    snap = _two_samples(fake, backend)
    g = snap.gpus[0]
    assert (g.index, g.name, g.uuid, g.bus_id) == (0, "NVIDIA H200", "GPU-aaaa", "00000000:18:00.0")
    assert (g.util_gpu, g.util_mem) == (97.0, 41.0)
    assert g.mem_total_bytes == 143771 * 2**20
    assert g.power_w == pytest.approx(650.5) and g.power_limit_w == pytest.approx(700.0)
    assert g.throttle_reasons == ("sw_power_cap", "hw_thermal")
    assert g.pcie_tx_bytes_s == 1000 * 1024
    assert g.fan_pct is NA  # SXM boards have no fan: unsupported, not 0
    assert (
        g.gpm.sm_activity == 91.5 and g.gpm.tensor_activity == 80.0 and g.gpm.fp64_activity == 0.0
    )
    assert g.processes[0].pid == 4242 and g.processes[0].sm_util == 88.0
    assert g.processes[0].used_memory_bytes == 3 * 2**30
    assert g.ecc_errors == 0
    assert snap.driver_version == "550.54.15"
    assert snap.host.ram_total_bytes


def test_nvlink_rates_per_link_total_and_percent(fake: FakeNvml) -> None:
    fake.gpus[0].tx_rate = 14.8e9  # per link
    fake.gpus[1].rx_rate = 14.8e9
    backend = NvmlBackend(fake.module)
    first = backend.sample()
    assert first.gpus[0].nvlink.tx_bytes_s is NA  # no interval yet
    fake.advance(0.5)
    nv0 = backend.sample().gpus[0].nvlink
    assert nv0.active_links == 18
    assert nv0.link_capacity_bytes_s == pytest.approx(26.562e9)
    assert nv0.tx_bytes_s == pytest.approx(18 * 14.8e9, rel=1e-4)
    assert nv0.rx_bytes_s == 0
    assert len(nv0.per_link_tx_bytes_s) == 18
    assert nv0.per_link_tx_bytes_s[5] == pytest.approx(14.8e9, rel=1e-4)
    assert nv0.tx_pct == pytest.approx(100 * 14.8 / 26.562, rel=1e-3)


def test_counter_going_backwards_is_na_for_that_interval(fake: FakeNvml) -> None:
    fake.gpus[0].tx_rate = 1e9
    backend = NvmlBackend(fake.module)
    _two_samples(fake, backend)
    fake.gpus[0].tx_kib = [0.0] * 18  # driver reset the counters
    fake.advance(0.5)
    nv = backend.sample().gpus[0].nvlink
    assert nv.tx_bytes_s is NA and nv.per_link_tx_bytes_s[0] is NA and nv.tx_pct is NA
    fake.advance(0.5)
    assert backend.sample().gpus[0].nvlink.tx_bytes_s == pytest.approx(18e9, rel=1e-4)


def test_gpm_unsupported_is_na_and_not_queried(fake: FakeNvml) -> None:
    for g in fake.gpus:
        g.gpm_supported = False
    backend = NvmlBackend(fake.module)
    g = _two_samples(fake, backend).gpus[0]
    assert g.gpm.sm_activity is NA and g.gpm.tensor_activity is NA
    assert "nvmlGpmMetricsGet" not in fake.calls


def test_not_supported_metrics_are_na(fake: FakeNvml) -> None:
    for fn in (
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetTotalEccErrors",
        "nvmlDeviceGetFieldValues",
    ):
        fake.fail(fn, fake.NOT_SUPPORTED)
    fake.fail("nvmlDeviceGetCurrentClocksEventReasons", fake.NOT_SUPPORTED)
    fake.fail("nvmlDeviceGetCurrentClocksThrottleReasons", fake.NOT_SUPPORTED)
    backend = NvmlBackend(fake.module)
    g = _two_samples(fake, backend).gpus[0]
    assert g.power_w is NA and g.ecc_errors is NA and g.throttle_reasons is NA
    assert g.nvlink.link_capacity_bytes_s == pytest.approx(26.5625e9)  # fallback: NVLink version
    assert g.nvlink.tx_bytes_s is NA
    assert g.util_gpu == 0.0  # the rest still reads


def test_process_utilization_not_found_is_na(fake: FakeNvml) -> None:
    fake.gpus[0].processes = [(77, None, None)]
    g = NvmlBackend(fake.module).sample().gpus[0]
    assert g.processes[0].sm_util is NA and g.processes[0].used_memory_bytes is NA


def test_lost_gpu_mid_run_others_keep_sampling(fake: FakeNvml) -> None:
    backend = NvmlBackend(fake.module)
    backend.sample()
    fake.lose(1)
    fake.gpus[0].util_gpu = 55
    snap = backend.sample()
    assert snap.gpus[1].lost and snap.gpus[1].util_gpu is NA and snap.gpus[1].name == "NVIDIA H200"
    assert not snap.gpus[0].lost and snap.gpus[0].util_gpu == 55.0
    assert snap.notice == "GPU 1 lost (not answering NVML)"
    n_calls = len(fake.calls)
    snap = backend.sample()
    assert snap.gpus[1].lost
    # A lost GPU is not asked again; only GPU 0 and the host are read.
    assert fake.calls[n_calls:].count("nvmlDeviceGetUtilizationRates") == 1


@pytest.mark.parametrize("code", [FakeNvml.LIBRARY_NOT_FOUND, FakeNvml.DRIVER_NOT_LOADED])
def test_no_driver_is_host_only(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    fake = FakeNvml(init_error=code)
    monkeypatch.setitem(sys.modules, "pynvml", fake.module)
    backend = open_backend()
    assert isinstance(backend, HostOnlyBackend)
    assert backend.notice is not None and backend.notice.endswith("host-only mode")
    assert "\n" not in backend.notice
    snap = backend.sample()
    assert snap.gpus == () and snap.notice == backend.notice
    # Taken as the reader is made, the first sample has no CPU window to measure over: no figure,
    # rather than the 0% a window of a few milliseconds reads.
    assert snap.host.cpu_pct is NA and snap.host.per_core_pct == ()
    time.sleep(MIN_CPU_WINDOW_S)
    later = backend.sample().host
    assert later.cpu_pct is not NA and len(later.per_core_pct) == psutil.cpu_count()


def test_no_gpus_is_host_only(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml(gpus=[])
    monkeypatch.setitem(sys.modules, "pynvml", fake.module)
    backend = open_backend()
    assert isinstance(backend, HostOnlyBackend) and "no NVIDIA GPU" in (backend.notice or "")


def test_gpu_selection(fake: FakeNvml) -> None:
    assert [g.index for g in NvmlBackend(fake.module, gpus=[1]).sample().gpus] == [1]
    with pytest.raises(
        ValueError, match=r"--gpu-ids: no GPU 4 on this machine \(it offers GPUs 0,1\)"
    ):
        NvmlBackend(fake.module, gpus=[4])
    assert not fake.initialized  # shut down again after the failed open


def test_process_tree_cpu_and_rss() -> None:
    import os

    backend = HostOnlyBackend("test")
    backend.sample(trees=(os.getpid(),))
    # Burn 0.1 s of CPU time, not a fixed amount of work: on a loaded 2-core machine a fixed
    # 300,000 squares got less than one 10 ms clock tick of CPU, and the tree read 0%.
    start = time.process_time()
    while time.process_time() - start < 0.1:
        sum(i * i for i in range(10_000))
    tree = backend.sample(trees=(os.getpid(), 2**22 + 12345)).trees
    assert tree[0].pid == os.getpid() and tree[0].n_procs >= 1
    assert tree[0].rss_bytes > 10 * 2**20 and tree[0].cpu_pct > 0  # type: ignore[operator]
    assert tree[1].cpu_pct is NA and tree[1].n_procs == 0  # no such process


def test_pcie_slow_api_is_called_at_most_every_period(fake: FakeNvml) -> None:
    fake.gpus[0].pcie_tx_kb = 1000
    backend = NvmlBackend(fake.module)
    for _ in range(5):
        snap = backend.sample()
    assert snap.gpus[0].pcie_tx_bytes_s == 1000 * 1024
    slow_calls = fake.calls.count("nvmlDeviceGetPcieThroughput")
    assert slow_calls == 2 * len(fake.gpus)  # tx + rx, once per GPU in the first period


def test_pcie_value_refreshes_after_the_period(fake: FakeNvml) -> None:
    from zbench.telemetry.pcie import PERIOD_S, PcieReader

    now = [100.0]
    nv = fake.module
    reader = PcieReader(nv, nv.nvmlDeviceGetHandleByIndex(0), frozenset(), clock=lambda: now[0])
    fake.gpus[0].pcie_tx_kb = 10
    assert reader.read() == (NA, NA)  # nothing measured yet
    reader.refresh()
    assert reader.read()[0] == 10 * 1024
    fake.gpus[0].pcie_tx_kb = 20
    now[0] += PERIOD_S / 2
    reader.refresh()
    assert reader.read()[0] == 10 * 1024  # reused: the 20 ms call is not made yet
    now[0] += PERIOD_S / 2
    reader.refresh()
    assert reader.read()[0] == 20 * 1024


@pytest.mark.parametrize("fn", ["nvmlDeviceGetHandleByIndex", "nvmlDeviceGetName"])
def test_gpu_lost_at_start_is_shown_lost_not_a_crash(fake: FakeNvml, fn: str) -> None:
    fake.fail(fn, FakeNvml.GPU_IS_LOST, gpu=1)
    fake.gpus[0].util_gpu = 42
    backend = NvmlBackend(fake.module)
    snap = backend.sample()
    assert snap.gpus[1].lost and snap.gpus[1].util_gpu is NA
    assert snap.gpus[0].util_gpu == 42.0
    assert snap.notice == "GPU 1 lost (not answering NVML)"
    backend.close()


def test_memory_used_is_what_nvidia_smi_shows_and_reserved_is_apart(fake: FakeNvml) -> None:
    # An idle H200: the driver reserves 615 MiB; nvidia-smi (and NVML v2) say 0 MiB used.
    fake.gpus[0].mem_used, fake.gpus[0].mem_reserved = 0, 615 * 2**20
    gpu = open_backend().sample().gpus[0]
    assert gpu.mem_used_bytes == 0 and gpu.mem_reserved_bytes == 615 * 2**20


def test_memory_falls_back_to_v1_on_a_driver_without_v2(fake: FakeNvml) -> None:
    fake.gpus[0].mem_used, fake.gpus[0].mem_reserved = 0, 615 * 2**20
    fake.gpus[0].mem_v2 = False
    gpu = open_backend().sample().gpus[0]
    assert gpu.mem_used_bytes == 615 * 2**20 and gpu.mem_reserved_bytes is NA
