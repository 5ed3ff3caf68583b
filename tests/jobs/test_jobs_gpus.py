from __future__ import annotations

import pytest

from zbench.jobs.gpus import allocate, offered_gpus, visible_gpus


def test_allocate_first_free() -> None:
    assert allocate(1, None, [0, 1, 2], busy=[0]) == (1,)
    assert allocate(2, None, [0, 1, 2], busy=[1]) == (0, 2)
    assert allocate(2, None, [0, 1], busy=[1]) is None


def test_allocate_requested_waits_unless_shared() -> None:
    assert allocate(1, [1], [0, 1], busy=[1]) is None
    assert allocate(1, [1], [0, 1], busy=[1], share=True) == (1,)
    assert allocate(1, [1], [0, 1], busy=[0]) == (1,)


def test_cpu_job_gets_no_gpu() -> None:
    assert allocate(0, None, [0], busy=[0]) == ()


def test_visible_gpus_follows_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert visible_gpus() == [2, 3]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert visible_gpus() == []


@pytest.mark.parametrize(
    ("env", "ids"),
    [
        ("-1", []),  # the usual way to hide every GPU; read as one UUID, GPU 0, before
        ("1,-1,0", [1]),
        ("0,x,1", [0]),
        ("GPU-aaaa,GPU-bbbb", [0, 1]),
        ("GPU-aaaa,-1,GPU-bbbb", [0]),
        (" 2 , 3 ", [2, 3]),
    ],
)
def test_visible_gpus_stops_where_cuda_stops(
    monkeypatch: pytest.MonkeyPatch, env: str, ids: list[int]
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", env)
    assert visible_gpus() == ids
    offered, why = offered_gpus()
    assert offered == ids and (why == f"CUDA_VISIBLE_DEVICES={env!r} hides every GPU") == (not ids)
