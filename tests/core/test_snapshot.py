from __future__ import annotations

import json
import pickle

from zbench.telemetry.snapshot import (
    NA,
    GpmSnapshot,
    GpuSnapshot,
    HostSnapshot,
    NvLinkSnapshot,
    ProcessTreeSnapshot,
    Snapshot,
    from_dict,
    is_na,
    to_dict,
    value_or,
)


def _snapshot() -> Snapshot:
    gpu = GpuSnapshot(
        index=1,
        name="NVIDIA H200",
        util_gpu=97.0,
        mem_used_bytes=10 << 30,
        nvlink=NvLinkSnapshot(active_links=18, tx_bytes_s=2.6e11, per_link_tx_bytes_s=(1.5e10, NA)),
        gpm=GpmSnapshot(sm_activity=81.5),
        throttle_reasons=("sw_power_cap",),
    )
    return Snapshot(
        t=1764500000.25,
        seq=7,
        host=HostSnapshot(cpu_pct=12.5, per_core_pct=(10.0, 15.0), load_avg=(0.5, 0.4, 0.3)),
        gpus=(gpu,),
        driver_version="580.159.04",
        trees=(ProcessTreeSnapshot(pid=42, cpu_pct=101.0, rss_bytes=1 << 30, n_procs=3),),
    )


def test_na_is_explicit_and_falsy() -> None:
    assert not NA
    assert str(NA) == "n/a"
    assert is_na(GpuSnapshot(index=0).power_w)
    assert GpuSnapshot(index=0).power_w is not 0  # noqa: F632 - NA must never be a zero
    assert value_or(NA, 3) == 3 and value_or(5.0, 3) == 5.0
    assert pickle.loads(pickle.dumps(NA)) is NA


def test_round_trip_through_json_keeps_every_field() -> None:
    snap = _snapshot()
    data = json.loads(json.dumps(to_dict(snap)))
    assert data["gpus"][0]["power_w"] is None  # NA is written as null
    again = from_dict(Snapshot, data)
    assert again == snap
    assert again.gpus[0].nvlink.per_link_tx_bytes_s[1] is NA
    assert again.gpus[0].throttle_reasons == ("sw_power_cap",)


def test_unknown_keys_ignored_missing_keys_default() -> None:
    data = to_dict(_snapshot())
    data["from_the_future"] = 1
    del data["gpus"][0]["gpm"]
    again = from_dict(Snapshot, data)
    assert again.gpus[0].gpm == GpmSnapshot()


def test_snapshots_are_frozen() -> None:
    import dataclasses

    import pytest

    with pytest.raises(dataclasses.FrozenInstanceError):
        _snapshot().seq = 3  # type: ignore[misc]
