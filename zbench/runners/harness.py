"""The one runner harness: check, resolve, start, setup, compile, warm-up, windows, result.

A framework (or a demo) is an :class:`Adapter`; the harness owns the order of events, the timed
loop and the mapping of every failure to one ``error`` event and an exit status (docs/runner-protocol.md).
"""

from __future__ import annotations

import dataclasses
import sys
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from zbench.contract import measure
from zbench.contract.config import RunConfig
from zbench.contract.events import Start
from zbench.contract.protocol import EventWriter
from zbench.contract.resolve import check_options, check_shape, resolve, workload_info
from zbench.contract.workloads import WORKLOADS
from zbench.runners.datasets import DatasetError

PROGRESS_EVERY_S = 0.5


class BadInput(Exception):
    """Bad options or input found by an adapter: a ``config`` error, exit status 2."""


class Unavailable(Exception):
    """The framework or the device is missing: an ``unavailable`` error, exit status 1."""


@dataclass(frozen=True)
class Prepared:
    """What an adapter found while preparing (devices, precision, data), for the ``start`` event."""

    data: str  # synthetic-device | synthetic-host | real:<layout>
    num_classes: int
    precision_detail: str
    tf32: dict[str, bool]
    memory_format: str
    gpus: int  # replicas in the whole job
    process_batch: int  # samples one step of this process makes
    settings: dict[str, Any]  # the switches that change speed
    environment: dict[str, Any]
    start_extra: dict[str, Any] = field(default_factory=dict)  # framework-only start fields


class StepTimer(ABC):
    """Device-side per-step times (e.g. CUDA events), read after the window's closing sync."""

    source: ClassVar[str] = "device"

    @abstractmethod
    def begin(self, i: int) -> None: ...

    @abstractmethod
    def end(self, i: int) -> None: ...

    @abstractmethod
    def times_s(self) -> list[float]: ...

    def done_through(self, i: int) -> tuple[int, float] | None:
        """Without waiting: how many of steps ``0..i`` the device has finished, and the seconds
        from the start of step 0 to the end of the last of them (None: it cannot tell)."""
        return None


class Adapter(ABC):
    """One framework (or demo) under the harness. ``events`` is set by the harness before
    :meth:`prepare`: a demo writes its ``frame`` events there from its step."""

    framework: ClassVar[str]
    rank: int = 0  # only rank 0 writes events other than errors
    events: Any = None

    @abstractmethod
    def prepare(self, cfg: RunConfig) -> Prepared:
        """Devices, precision and the dataset index; raise BadInput / Unavailable."""

    @abstractmethod
    def build(self, cfg: RunConfig) -> Callable[[], Any]:
        """Model, optimizer and data; returns one step (its return value is given to :meth:`sync`)."""

    @abstractmethod
    def sync(self, last: Any) -> None:
        """Wait until the device has finished everything queued (``last``: the last step's value)."""

    def choose_batch(self, cfg: RunConfig, candidates: tuple[int, ...]) -> int | None:
        """``--preset max`` without ``--batch-size``: measure ``candidates`` (per-GPU batches) and
        return the fastest, recording what was tried in the prepared settings; None keeps
        ``cfg.batch_size`` (the first candidate)."""
        return None

    def compile_steps(self, cfg: RunConfig) -> int:
        """Steps timed apart as ``compile_s`` before the warm-up (0: ``compile_s`` is null)."""
        return 0

    def barrier(self) -> None:
        """Under several processes, meet the other ranks (the device synchronized)."""
        return None

    def step_timer(self, steps: int) -> StepTimer | None:
        return None  # host times

    def reduce_window(self, stats: dict[str, Any]) -> dict[str, Any]:
        """Whole-job figures of one window (several processes: all samples, slowest window)."""
        return {**stats, "samples_per_s_rank0": stats["samples_per_s"]}

    def late_settings(self) -> dict[str, Any]:
        """Settings known only after the run (compile-cache hits), merged into the result's."""
        return {}

    def peak_memory(self) -> tuple[int | None, int | None]:
        """(allocated, reserved) peak bytes of the fullest device; None where not tracked."""
        return None, None

    def is_oom(self, exc: BaseException) -> bool:
        return False

    def bad_input(self, exc: BaseException) -> str | None:
        """A one-line reason when ``exc`` is bad input found while running (a damaged dataset file
        read by a loader worker), else None."""
        if isinstance(exc, DatasetError):
            return dataset_message(str(exc))
        return None

    def close(self) -> None:
        """Release what :meth:`prepare` set up (process groups); called on every outcome."""
        return None


def dataset_message(text: str) -> str:
    """The one line of a dataset error that a loader re-raised with its worker's traceback around
    it (PyTorch's DataLoader, TensorFlow's ``{{function_node ...}}`` prefix)."""
    for line in reversed(text.strip().splitlines()):
        if "DatasetError: " in line:
            return line.split("DatasetError: ", 1)[1].strip()
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text


class _ErrorsOnly:
    """Ranks other than 0 report only their errors (rank 0 speaks for the run)."""

    def __init__(self, writer: EventWriter, rank: int) -> None:
        self._writer, self._rank = writer, rank

    def emit(self, type: str, **fields: Any) -> None:
        if type == "error":
            self._writer.emit("error", rank=self._rank, **fields)

    def send(self, event: Any) -> None:
        pass

    def phase(self, name: str, **fields: Any) -> None:
        pass

    def progress(self, *args: Any, **fields: Any) -> None:
        pass

    def error(self, kind: str, message: str, **fields: Any) -> None:
        self.emit("error", kind=kind, message=message, **fields)


def _bad_input(out: Any, message: str) -> int:
    """Bad options or input: one line on stderr and a ``config`` error; exit status 2."""
    print(f"zbench.runners: {message}", file=sys.stderr)
    out.error("config", message)
    return 2


def run(adapter: Adapter, config: RunConfig, writer: EventWriter) -> int:
    """Run ``config`` with ``adapter``; every outcome is an event. The exit status: 0 done, 1 the
    work failed, 2 bad input."""
    out: Any = writer if adapter.rank == 0 else _ErrorsOnly(writer, adapter.rank)
    adapter.events = out
    reason = check_shape(config) or check_options(config)
    if reason:
        return _bad_input(out, reason)
    cfg = resolve(config)
    batch = cfg.config.batch_size or 1
    hint = f"try --batch-size {max(1, batch // 2)}" if batch > 1 else "use a smaller --image-size"
    return guard(
        adapter,
        out,
        lambda: _run(adapter, cfg.config, cfg.choices, out, cfg.batch_candidates),
        oom=(
            f"out of device memory at batch size {batch} per GPU; {hint}",
            {"batch_size": batch, "hint": hint},
        ),
    )


def guard(
    adapter: Any,
    out: Any,
    body: Callable[[], int],
    *,
    oom: tuple[str, dict[str, Any]] = ("out of device memory", {}),
) -> int:
    """Run ``body`` and map every failure to one ``error`` event and an exit status (the one
    mapping of benchmarks and demos): bad input -> ``config``, 2; anything else 1."""
    try:
        return body()
    except Unavailable as exc:
        out.error("unavailable", str(exc))
        return 1
    except BadInput as exc:
        return _bad_input(out, str(exc))
    except KeyboardInterrupt:
        out.error("interrupted", "stopped by a signal before the run finished")
        return 1
    except Exception as exc:
        message = adapter.bad_input(exc)
        if message is not None:
            return _bad_input(out, message)
        if adapter.is_oom(exc):
            out.error("oom", oom[0], **oom[1])
            return 1
        traceback.print_exc()
        out.error("crash", f"{type(exc).__name__}: {exc}".splitlines()[0][:500])
        return 1
    finally:
        adapter.close()


def _run(
    adapter: Adapter,
    cfg: RunConfig,
    choices: dict[str, str],
    out: Any,
    candidates: tuple[int, ...] = (),
) -> int:
    info = WORKLOADS[cfg.workload]
    prep = adapter.prepare(cfg)
    if len(candidates) > 1 and (chosen := adapter.choose_batch(cfg, candidates)):
        per_replica = prep.process_batch // (cfg.batch_size or 1)  # tf: one process, N replicas
        prep = dataclasses.replace(prep, process_batch=per_replica * chosen)
        cfg = dataclasses.replace(cfg, batch_size=chosen)
        choices = {
            **choices,
            "batch_size": f"{chosen} per GPU: the fastest measured (settings: batch_search)",
        }
    assert cfg.batch_size and cfg.steps and cfg.image_size and cfg.precision and cfg.repeat
    assert cfg.warmup is not None
    global_batch = cfg.batch_size * prep.gpus
    out.send(
        Start(
            framework=adapter.framework,
            workload=cfg.workload,
            workload_info=workload_info(cfg.workload),
            config=cfg.as_dict(),
            preset_choices=choices,
            data=prep.data,
            precision_detail=prep.precision_detail,
            tf32=prep.tf32,
            memory_format=prep.memory_format,
            num_classes=prep.num_classes,
            gpus=prep.gpus,
            global_batch=global_batch,
            unit=info.unit,
            settings=prep.settings,
            environment=prep.environment,
            extra=prep.start_extra,
        )
    )
    out.phase("setup")
    step = adapter.build(cfg)
    compile_s = None
    if n := adapter.compile_steps(cfg):
        out.phase("compile", steps=n)
        t0 = time.perf_counter()
        adapter.sync(_unmeasured(step, n, out))
        compile_s = time.perf_counter() - t0
    out.phase("warmup", steps=cfg.warmup)
    adapter.sync(_unmeasured(step, cfg.warmup, out))
    out.phase("measure", steps=cfg.steps, repeats=cfg.repeat)
    total = cfg.steps * cfg.repeat
    out.progress(0, total)  # the step count restarts: the warm-up's last count is not the window's
    windows: list[dict[str, Any]] = []
    stopped = False
    try:
        for r in range(cfg.repeat):
            windows.append(
                _window(adapter, step, cfg.steps, prep, out, r * cfg.steps, total, global_batch)
            )
    except KeyboardInterrupt:  # cancel or timeout (SIGTERM): the whole windows are measured
        if not windows:
            raise
        stopped = True
    allocated, reserved = adapter.peak_memory()
    facts = measure.RunFacts(
        workload=cfg.workload,
        framework=adapter.framework,
        mode=cfg.mode,
        unit=info.unit,
        batch_size=cfg.batch_size,
        gpus=prep.gpus,
        precision=cfg.precision,
        precision_detail=prep.precision_detail,
        data=prep.data,
        image_size=cfg.image_size,
        xla=bool(cfg.xla),
        warmup_steps=cfg.warmup,
        settings={**prep.settings, **adapter.late_settings()},
    )
    result = measure.build_result(
        windows,
        facts,
        compile_s=compile_s,
        peak_allocated=allocated,
        peak_reserved=reserved,
        planned=cfg.repeat,
    )
    out.send(result)
    if stopped:
        out.error(
            "interrupted",
            f"stopped by a signal after {len(windows)} of {cfg.repeat} measured windows "
            "(its result holds those)",
        )
        return 1
    out.phase("done")
    return 0


def _live_rate(timer: StepTimer | None, i: int, global_batch: int, host_s: float) -> float | None:
    """The live rate shown while a window runs, without a sync. The host's count of steps issued
    runs ahead of an asynchronous device by its queue (a live ResNet-50 inference rate read 17%
    over the result on an H200), so where the timer can say which steps the device has finished,
    the rate is theirs; None until one has. Ranks step in lockstep; the result has the exact
    figure."""
    seen = timer.done_through(i) if timer is not None else None
    if seen is None:
        return (i + 1) * global_batch / host_s if timer is None and host_s > 0 else None
    finished, seconds = seen
    return finished * global_batch / seconds if finished and seconds > 0 else None


def _unmeasured(step: Callable[[], Any], steps: int, out: Any) -> Any:
    """Compile or warm-up steps, with their progress (a CPU step at the review's sizes takes
    seconds, so a silent warm-up looked stuck) but no rate: nothing here is measured. On a GPU the
    count is of steps launched, ahead of those done until the queue fills."""
    last = None
    if steps:  # --warmup 0: no phase to count
        out.progress(0, steps)
    shown = time.perf_counter()
    for i in range(steps):
        last = step()
        if (now := time.perf_counter()) - shown >= PROGRESS_EVERY_S:
            shown = now
            out.progress(i + 1, steps)
    return last


def _window(
    adapter: Adapter,
    step: Callable[[], Any],
    steps: int,
    prep: Prepared,
    out: Any,
    done: int,
    total: int,
    global_batch: int,
) -> dict[str, Any]:
    """One measured window: synchronized (and the ranks met) at both edges; per-step host times,
    or the adapter's device times (a host time of asynchronous GPU work is only its queueing)."""
    adapter.sync(None)
    adapter.barrier()
    timer = adapter.step_timer(steps)
    times: list[float] = []
    last = None
    t0 = shown = time.perf_counter()
    for i in range(steps):
        s = time.perf_counter()
        if timer is not None:
            timer.begin(i)
        last = step()
        if timer is not None:
            timer.end(i)
        now = time.perf_counter()
        times.append(now - s)
        if now - shown >= PROGRESS_EVERY_S or i == steps - 1:
            shown = now
            out.progress(done + i + 1, total, _live_rate(timer, i, global_batch, now - t0))
    adapter.sync(last)
    window_s = time.perf_counter() - t0
    if timer is not None:
        times = timer.times_s()
    stats: dict[str, Any] = measure.window_stats(times, prep.process_batch, window_s)
    stats["step_time_source"] = timer.source if timer is not None else "host"
    return adapter.reduce_window(stats)
