"""The whole-step CUDA graph (runners/torch/graphs.py), its capture faked so the logic runs on the
CPU: warm-up, what must finish before the capture, one capture, replays, and the fallback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

from zbench.runners.torch import graphs  # noqa: E402


class _FakeGraphs:
    """torch.cuda's stream and graph calls, faked: capture runs the body once (as real capture
    does, recording instead of computing), replay counts; ``log`` records when a capture begins."""

    def __init__(self, fail: bool, log: list[str]) -> None:
        self.fail, self.replays, self.log = fail, 0, log
        outer = self

        class Graph:
            def replay(self) -> None:
                outer.replays += 1

        class Stream:
            def wait_stream(self, other: object) -> None:
                pass

        self.Graph, self.Stream = Graph, Stream

    def graph(
        self, graph: object, stream: object = None
    ) -> contextlib.AbstractContextManager[None]:
        @contextlib.contextmanager
        def capture() -> Iterator[None]:
            self.log.append("capture")
            if self.fail:
                raise RuntimeError("operation not permitted when stream is capturing\nmore")
            yield

        return capture()


def _step(
    fail: bool, monkeypatch: pytest.MonkeyPatch, before: bool
) -> tuple[graphs.GraphedStep, _FakeGraphs, list[str], list[str], tuple[torch.Tensor, ...]]:
    log: list[str] = []
    fake = _FakeGraphs(fail, log)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: fake.Stream())
    monkeypatch.setattr(torch.cuda, "stream", lambda s: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "CUDAGraph", fake.Graph)
    monkeypatch.setattr(torch.cuda, "graph", fake.graph)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    static = (torch.randn(8, 4), torch.randint(0, 2, (8,)))
    fresh = (torch.randn(8, 4), torch.randint(0, 2, (8,)))
    feed = iter([static, *([fresh] * 20)])
    fell_back: list[str] = []

    def body(batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        log.append("body")
        loss = torch.nn.functional.cross_entropy(model(batch[0]), batch[1])
        loss.backward()
        opt.step()
        return loss.detach()

    step = graphs.GraphedStep(
        body,
        feed,
        train=True,
        zero_grad=lambda: opt.zero_grad(set_to_none=True),
        autocast=contextlib.nullcontext,
        distributed=False,
        stream=fake.Stream(),  # type: ignore[arg-type]
        on_fallback=fell_back.append,
        before_capture=(lambda: log.append("before_capture")) if before else None,
    )
    return step, fake, log, fell_back, (static[0], fresh[0])


@pytest.mark.parametrize("fail", [False, True])
def test_graphed_step_captures_once_or_falls_back(
    fail: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, fake, log, fell_back, (static, fresh) = _step(fail, monkeypatch, before=False)
    for _ in range(3):
        step()
    bodies = log.count("body")
    if fail:
        assert fell_back and fell_back[0].startswith("RuntimeError: operation not permitted")
        assert "\n" not in fell_back[0] and fake.replays == 0
        assert bodies == graphs.WARMUP + 3  # warm-up, then every step ran uncaptured
    else:
        assert not fell_back
        assert bodies == graphs.WARMUP + 1  # warm-up and the one capture
        assert fake.replays == graphs.CHECK_REPLAYS + 3
        assert torch.equal(static, fresh)  # new batches are copied into the static ones


@pytest.mark.parametrize("fail", [False, True])
def test_before_capture_runs_once_after_the_warmup_and_before_the_capture(
    fail: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, _fake, log, _fell_back, _ = _step(fail, monkeypatch, before=True)
    for _ in range(3):
        step()
    warmup = ["body"] * graphs.WARMUP
    assert log[: graphs.WARMUP + 2] == [*warmup, "before_capture", "capture"]
    assert log.count("before_capture") == 1


@pytest.mark.parametrize(
    ("asked", "device", "kind", "changes", "distributed", "mode", "note"),
    [
        ("step", "cuda", "cls", {}, False, "step", "step: forward, backward and optimizer"),
        ("step", "cuda", "cls", {"mode": "infer"}, False, "step", "step: the forward replayed"),
        ("step", "cpu", "cls", {}, False, "off", "off: CUDA graphs need a GPU"),
        ("step", "cuda", "det", {}, False, "off", "off: lists of images"),
        ("step", "cuda", "cls", {"precision": "fp16"}, False, "off", "off: fp16's GradScaler"),
        ("step", "cuda", "cls", {"grad_compression": "bf16"}, True, "off", "off: the compression"),
        ("step", "cuda", "cls", {"grad_compression": "bf16"}, False, "step", "step:"),
        ("compile", "cuda", "cls", {}, False, "compile", "compile: torch.compile mode"),
        ("compile", "cpu", "cls", {}, False, "off", "off: torch.compile's CUDA graphs"),
        (None, "cuda", "cls", {}, False, "off", "off"),
    ],
)
def test_graph_mode_says_what_runs_and_why(
    asked: str | None,
    device: str,
    kind: str,
    changes: dict[str, str],
    distributed: bool,
    mode: str,
    note: str,
) -> None:
    import dataclasses

    from zbench.contract.config import RunConfig

    cfg = dataclasses.replace(
        RunConfig(workload="resnet50", mode="train", precision="bf16", compile_mode="default"),
        graphs=asked,
        **changes,
    )
    got_mode, got_note = graphs.graph_mode(cfg, device, kind, distributed)
    assert got_mode == mode and got_note.startswith(note)
