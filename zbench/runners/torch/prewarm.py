"""cuDNN's autotuner for the backward convolutions, run ahead in a thread while the first compiled
step loads its graphs: seconds off a warm ``--preset max`` start (see ``wanted`` for when it runs).

A warm start spends about 4 s in cuDNN's autotuner (docs/performance.md): PyTorch keeps the chosen
execution plans in the process, so each start builds them again. It keeps them per thread, too
(``thread_local BenchmarkCache`` in aten/src/ATen/native/cudnn/Conv_v8.cpp, as plans are not
thread-safe across cuDNN's engines), so a helper thread cannot tune the forward convolutions for
the thread that runs the step. The backward is different: autograd runs a GPU's backward functions
in its one worker thread for that GPU, whichever thread called ``backward()``. An eager forward and
backward of a copy of the model, in a helper thread started when the step is built, therefore
tunes the backward convolutions (two of every three plans) in the thread where the compiled step's
backward will look them up, while the main thread is busy in dynamo and inductor. Nothing is tuned
twice: that worker thread tunes each plan once, for whichever backward reaches it first.

The copy keeps the measured model's batch-norm statistics and weights untouched. The helper is
joined before the step's CUDA graph is captured (nothing may launch GPU work from another thread
during a capture), and its copy and activations are freed then. A failure in the helper (an
out-of-memory error on a small GPU: it holds a second batch's activations for a moment) is noted
in the run's settings and costs the run nothing else.
"""

from __future__ import annotations

import copy
import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch
from torch import nn

ENV = "ZBENCH_CUDNN_PREWARM"
# On by default where the second batch's activations fit beside the step's with room to spare: an
# image classifier (ResNet-50 at --preset max's batch 256 peaked at 10.6 GiB) on a GPU of 64 GiB
# or more. The segmentation networks' max batches hold far more activation memory per batch, and
# on a 24 GiB card a classifier's two batches may not fit: there it is asked for, not assumed.
DEFAULT_MIN_BYTES = 64 * 2**30
DEFAULT_KINDS = ("cls",)


def wanted(task_kind: str, gpu_bytes: int, compiled: bool) -> tuple[bool, str]:
    """Whether to prewarm, and why: ``ZBENCH_CUDNN_PREWARM=1``/``0`` decide; otherwise a compiled
    step of an image classifier on a GPU of ``DEFAULT_MIN_BYTES`` or more. Measured on one H100
    (start_split.py, two interleaved rounds): warm start 14.5 s -> 12.4 s, the step's rate the same
    (0.1%). Only a compiled step has the main thread busy in dynamo and inductor while the helper
    tunes; an eager step tunes its own convolutions at once, beside the helper (one eager ResNet-50
    start with it: 12.9 s of warm-up, 23.4 GB at its peak), so there it is not assumed."""
    asked = os.environ.get(ENV)
    if asked in ("0", "1"):
        return asked == "1", f"{ENV}={asked}"
    gib = DEFAULT_MIN_BYTES >> 30
    if compiled and task_kind in DEFAULT_KINDS and gpu_bytes >= DEFAULT_MIN_BYTES:
        return True, f"default: a compiled image classifier on a GPU of {gib} GiB or more"
    return False, f"default: off here (on for compiled image classifiers on GPUs of {gib} GiB+)"


class BackwardPrewarm:
    """One eager forward and backward of a copy of ``model`` on ``batch``, in a daemon thread."""

    def __init__(
        self,
        model: nn.Module,
        loss: Callable[[nn.Module, Any], torch.Tensor],
        batch: Any,
        autocast: Callable[[], AbstractContextManager[Any]],
        device: torch.device,
        why: str = "",
    ) -> None:
        self.why = why  # what turned it on (wanted()'s reason), for the run's settings
        self._copy: nn.Module | None = copy.deepcopy(model)  # here: the main thread owns `model`
        self._loss, self._batch, self._autocast, self._device = loss, batch, autocast, device
        self._thread = threading.Thread(target=self._run, name="zbench-cudnn-prewarm", daemon=True)
        self.seconds: float | None = None
        self.error: str | None = None
        self._joined = False
        self._t0 = 0.0  # when the helper started

    def start(self) -> BackwardPrewarm:
        self._t0 = time.perf_counter()
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            assert self._copy is not None
            cuda = self._device.type == "cuda"
            stream = torch.cuda.Stream(self._device) if cuda else None
            on_device: AbstractContextManager[Any] = (
                torch.cuda.device(self._device) if cuda else nullcontext()
            )
            on_stream: AbstractContextManager[Any] = (
                torch.cuda.stream(stream) if stream is not None else nullcontext()
            )
            with on_device, on_stream:
                with torch.enable_grad(), self._autocast():
                    out = self._loss(self._copy, self._batch)
                out.backward()
                if stream is not None:
                    stream.synchronize()
        except Exception as exc:  # an optimization only: the run goes on without it
            self.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        finally:
            self.seconds = round(time.perf_counter() - self._t0, 3)

    def join(self) -> None:
        """Wait for the helper and free its copy; called before the capture (idempotent)."""
        if self._joined:
            return
        self._thread.join()
        self._joined = True
        self._copy = self._batch = None
        if self._device.type == "cuda":
            torch.cuda.empty_cache()

    def note(self) -> dict[str, Any]:
        """What the run's settings say of it."""
        state = "failed" if self.error else "done" if self._joined else "running"
        out: dict[str, Any] = {"state": state, "seconds": self.seconds, "why": self.why}
        if self.error:
            out["error"] = self.error
        return out
