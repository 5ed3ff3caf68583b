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
    cpu = torch.device("cpu")
    warm = prewarm.BackwardPrewarm(model, loss, batch, contextlib.nullcontext, cpu, "asked")
    assert warm.note()["state"] == "running" and warm.note()["why"] == "asked"
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


GIB = 2**30


@pytest.mark.parametrize(
    ("value", "kind", "gpu_gib", "compiled", "on"),
    [
        ("1", "seg", 24, False, True),  # asked for: wherever it can run
        ("0", "cls", 141, True, False),  # refused: even where it is the default
        (None, "cls", 80, True, True),  # the default: a compiled classifier on an H100 or H200
        (None, "cls", 48, True, False),  # two batches' activations may not fit beside the model's
        (None, "seg", 141, True, False),  # U-Net's max batches hold far more activation memory
        (None, "cls", 80, False, False),  # eager: the step tunes at once, beside the helper
        ("yes", "cls", 24, True, False),  # not 0 or 1: the default decides
    ],
)
def test_when_it_runs(
    value: str | None,
    kind: str,
    gpu_gib: int,
    compiled: bool,
    on: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if value is None:
        monkeypatch.delenv(prewarm.ENV, raising=False)
    else:
        monkeypatch.setenv(prewarm.ENV, value)
    got, why = prewarm.wanted(kind, gpu_gib * GIB, compiled)
    assert got is on
    assert (prewarm.ENV in why) is (value in ("0", "1"))  # the run's settings say what decided
