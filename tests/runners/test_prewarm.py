"""The backward's cuDNN prewarm (runners/torch/prewarm.py) on the CPU: it runs a copy of the model
in its own thread, leaves the measured model untouched, and a failure in it stays a note."""

from __future__ import annotations

import contextlib
import threading

import pytest

torch = pytest.importorskip("torch")

from zbench.runners.torch import prewarm  # noqa: E402


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 4),
    ).train()


def _loss(model: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(model(batch[0]), batch[1])


def test_it_runs_a_copy_in_a_thread_and_leaves_the_model_untouched() -> None:
    model = _model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    threads: list[str] = []

    def loss(m: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        threads.append(threading.current_thread().name)
        assert m is not model
        return _loss(m, batch)

    batch = (torch.randn(4, 3, 16, 16), torch.tensor([0, 1, 2, 3]))
    warm = prewarm.BackwardPrewarm(model, loss, batch, contextlib.nullcontext, torch.device("cpu"))
    assert warm.note()["state"] == "running"
    warm.start().join()
    warm.join()  # idempotent: GraphedStep may call it for a second step
    assert threads == ["zbench-cudnn-prewarm"]
    note = warm.note()
    assert note["state"] == "done" and note["seconds"] > 0 and "error" not in note
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # batch-norm statistics too
    assert all(p.grad is None for p in model.parameters())


def test_a_failure_is_a_one_line_note_not_an_exception() -> None:
    def loss(m: torch.nn.Module, batch: object) -> torch.Tensor:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore detail")

    warm = prewarm.BackwardPrewarm(
        _model(), loss, None, contextlib.nullcontext, torch.device("cpu")
    ).start()
    warm.join()
    note = warm.note()
    assert note["state"] == "failed"
    assert note["error"] == "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"


@pytest.mark.parametrize(("value", "wanted"), [("1", True), ("0", False), (None, False)])
def test_it_is_asked_for_by_its_environment_variable(
    value: str | None, wanted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(prewarm.ENV, raising=False)
    else:
        monkeypatch.setenv(prewarm.ENV, value)
    assert prewarm.wanted() is wanted
