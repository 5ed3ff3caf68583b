"""The harness with a framework-free adapter: event order, windows and their spread, every failure
mapped to one error event and its exit status, a demo's frame events, and the one result record."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.runners.events import RESULT_FIELDS, check_stream, the_error
from zbench.contract import events as typed
from zbench.contract.config import RunConfig
from zbench.contract.measure import RunFacts, build_result, window_stats
from zbench.contract.protocol import EventWriter, read_events
from zbench.runners import harness
from zbench.runners.datasets import DatasetError


class Counting(harness.Adapter):
    """Counts steps; ``fail`` raises from the given step on; every step emits a frame (a demo)."""

    framework: ClassVar[str] = "fake"

    def __init__(self, fail: BaseException | None = None, at: int = 0) -> None:
        self.steps = 0
        self.fail, self.at, self.closed = fail, at, False

    def prepare(self, cfg: RunConfig) -> harness.Prepared:
        return harness.Prepared(
            data="synthetic-device",
            num_classes=10,
            precision_detail="fp32",
            tf32={"matmul_allow_tf32": False, "cudnn_allow_tf32": False},
            memory_format="contiguous",
            gpus=1,
            process_batch=cfg.batch_size or 1,
            settings={"autotune": True},
            environment={"fake": "1", "tensorflow": "fake"},
        )

    def build(self, cfg: RunConfig) -> Callable[[], Any]:
        def step() -> int:
            self.steps += 1
            if self.fail is not None and self.steps > self.at:
                raise self.fail
            self.events.emit("frame", step=self.steps)
            return self.steps

        return step

    def sync(self, last: Any) -> None:
        pass

    def is_oom(self, exc: BaseException) -> bool:
        return "out of memory" in str(exc)

    def close(self) -> None:
        self.closed = True


def _run(tmp_path: Path, adapter: Counting, **options: Any) -> tuple[int, list[dict[str, Any]]]:
    options = {"warmup": 2, **options}
    cfg = RunConfig(workload="resnet50", device="cpu", batch_size=4, steps=3, **options)
    with EventWriter(tmp_path / "e") as writer:
        rc = harness.run(adapter, cfg, writer)
    assert adapter.closed
    return rc, list(read_events(tmp_path / "e"))


def test_phases_windows_and_spread(tmp_path: Path) -> None:
    adapter = Counting()
    rc, events = _run(tmp_path, adapter)
    assert rc == 0
    result = check_stream([e for e in events if e["type"] != "frame"], framework="fake")
    assert adapter.steps == 2 + 3 * 3  # warm-up, then the default 3 windows
    assert result["repeats"] == 3 and len(result["samples_per_s_all"]) == 3
    rates = result["samples_per_s_all"]
    assert result["samples_per_s"] == sorted(rates)[1]  # the median window
    spread = 100 * (max(rates) - min(rates)) / sorted(rates)[1]
    assert result["samples_per_s_spread_pct"] == pytest.approx(spread)
    assert result["settings"] == events[0]["settings"] == {"autotune": True}
    assert result["compile_s"] is None and result["samples"] == 12
    assert len([e for e in events if e["type"] == "frame"]) == adapter.steps


def test_repeats_option_and_progress_total(tmp_path: Path) -> None:
    rc, events = _run(tmp_path, Counting(), repeat=1)
    assert rc == 0
    assert [e["total"] for e in events if e["type"] == "progress"][-1] == 3


def test_warm_up_steps_report_progress_without_a_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CPU step at the review's sizes takes seconds: the warm-up showed no progress at all."""
    monkeypatch.setattr(harness, "PROGRESS_EVERY_S", 0.0)  # every step reports
    rc, events = _run(tmp_path, Counting(), repeat=1)
    assert rc == 0
    check_stream([e for e in events if e["type"] != "frame"], framework="fake")
    order = [
        (e["phase"], e.get("steps")) if e["type"] == "phase" else (e["step"], e["total"])
        for e in events
        if e["type"] in ("phase", "progress")
    ]
    assert order[:9] == [
        ("setup", None),
        ("warmup", 2),
        (0, 2),  # each phase's count starts at 0: the jobs table shows it from the start
        (1, 2),
        (2, 2),
        ("measure", 3),
        (0, 3),
        (1, 3),
        (2, 3),
    ]


def test_no_warm_up_sends_no_warm_up_progress(tmp_path: Path) -> None:
    """--warmup 0 sent a progress of 0 steps out of 0."""
    rc, events = _run(tmp_path, Counting(), warmup=0, repeat=1)
    assert rc == 0
    assert all(e["total"] > 0 for e in events if e["type"] == "progress")


@pytest.mark.parametrize(
    ("exc", "kind", "rc", "message"),
    [
        (
            RuntimeError("CUDA out of memory"),
            "oom",
            1,
            "at batch size 4 per GPU; try --batch-size 2",
        ),
        (ValueError("bad\nsecond"), "crash", 1, "ValueError: bad"),
        (KeyboardInterrupt(), "interrupted", 1, "stopped by a signal"),
        (harness.Unavailable("no GPU"), "unavailable", 1, "no GPU"),
        (harness.BadInput("--gpus asks for 2+ GPUs"), "config", 2, "--gpus asks for 2+ GPUs"),
        (
            # A dataset error re-raised by a loader with its worker's traceback around it.
            DatasetError(
                "Caught DatasetError in DataLoader worker process 0.\nOriginal Traceback "
                "(most recent call last):\n  File x, line 1\n"
                "zbench.runners.datasets.DatasetError: cannot decode image /d/a.jpg: truncated\n"
            ),
            "config",
            2,
            "cannot decode image /d/a.jpg: truncated",
        ),
    ],
)
def test_failures_map_to_one_error_and_exit_status(
    exc: BaseException, kind: str, rc: int, message: str, tmp_path: Path
) -> None:
    code, events = _run(tmp_path, Counting(fail=exc, at=1))
    assert code == rc
    error = the_error(events)
    assert error["kind"] == kind and message in error["message"]
    assert "result" not in [e["type"] for e in events]


def test_a_stop_after_whole_windows_keeps_them(tmp_path: Path) -> None:
    # SIGTERM (cancel, timeout) in the second of three windows: the first window's figures were
    # lost with the rest; the result now holds the whole windows and says how many were planned.
    code, events = _run(tmp_path, Counting(fail=KeyboardInterrupt(), at=2 + 3 + 1))
    assert code == 1
    [result] = [e for e in events if e["type"] == "result"]  # no "done" phase: it was stopped
    assert not [f for f in RESULT_FIELDS if f not in result]
    assert result["repeats"] == 1 and result["repeats_planned"] == 3
    assert result["steps"] == 3 and len(result["samples_per_s_all"]) == 1
    error = the_error(events)
    assert error["kind"] == "interrupted"
    assert "after 1 of 3 measured windows" in error["message"]
    assert [e["type"] for e in events][-2:] == ["result", "error"]


def test_a_run_that_ends_keeps_no_planned_count(tmp_path: Path) -> None:
    _, events = _run(tmp_path, Counting())
    [result] = [e for e in events if e["type"] == "result"]
    assert result["repeats_planned"] is None


def test_bad_shape_is_checked_before_prepare(tmp_path: Path) -> None:
    cfg = RunConfig(workload="unet2d", device="cpu", image_size=40)
    with EventWriter(tmp_path / "e") as writer:
        assert harness.run(Counting(), cfg, writer) == 2
    assert "multiple of 16" in the_error(list(read_events(tmp_path / "e")))["message"]


def test_dataset_message_of_a_tf_op_error() -> None:
    text = (
        "{{function_node __wrapped__IteratorGetNext_output_types_2_device_/job:localhost}} "
        "DatasetError: missing dataset file: /d/x.jpg\nTraceback (most recent call last):\n"
        '  File "a.py", line 3\nzbench.runners.datasets.DatasetError: missing dataset file: /d/x.jpg'
        "\n\t [[{{node PyFunc}}]] [Op:IteratorGetNext]"
    )
    assert harness.dataset_message(text) == "missing dataset file: /d/x.jpg"


def test_the_one_result_record_has_every_field() -> None:
    facts = RunFacts(
        "resnet50",
        "torch",
        "train",
        "images",
        8,
        2,
        "fp32",
        "fp32 (TF32 off)",
        "synthetic-device",
        224,
        False,
        10,
        {"autotune": True},
    )
    windows = [window_stats([0.1, 0.1], 8, 0.2), window_stats([0.1, 0.2], 8, 0.3)]
    result = build_result(windows, facts, compile_s=None, peak_allocated=5, peak_reserved=7)
    fields = result.to_fields()
    assert set(RESULT_FIELDS) <= fields.keys()
    assert fields.keys() == {f.name for f in dataclasses.fields(typed.Result)} - {"extra", "t"}
    assert fields["global_batch"] == 16 and fields["samples_per_s_per_gpu"] == pytest.approx(
        fields["samples_per_s"] / 2
    )
    assert fields["peak_mem_bytes"] == 5 and fields["repeats"] == 2
    back = typed.from_dict({"v": 1, "t": 0.0, "type": "result", **fields, "new_field": 1})
    assert isinstance(back, typed.Result) and back.extra == {"new_field": 1}
    assert back.samples_per_s == fields["samples_per_s"]
    assert typed.from_dict({"type": "result"}) is None  # required fields missing


def test_the_live_rate_counts_what_the_device_finished() -> None:
    """The host issues steps ahead of an asynchronous device; the live rate must not count them."""

    class Behind(harness.StepTimer):
        def __init__(self, seen: tuple[int, float] | None) -> None:
            self.seen = seen

        def begin(self, i: int) -> None: ...

        def end(self, i: int) -> None: ...

        def times_s(self) -> list[float]:
            return []

        def done_through(self, i: int) -> tuple[int, float] | None:
            return self.seen

    # 40 steps issued in 1 s, but the device finished 30 of them in that second: 30 x 8 / 1.0.
    assert harness._live_rate(Behind((30, 1.0)), 39, 8, 1.0) == 240.0
    assert harness._live_rate(Behind((0, 0.0)), 39, 8, 1.0) is None  # none finished yet
    assert harness._live_rate(Behind(None), 39, 8, 1.0) is None  # a device timer that cannot tell
    assert harness._live_rate(None, 39, 8, 2.0) == 160.0  # host timing: the host's count is exact
