from __future__ import annotations

import pytest

from zbench.jobs.gpus import allocate, visible_gpus


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
