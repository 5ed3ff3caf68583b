"""Demos under the one harness: the frame channel's rate limit, the result record, and the shared
error mapping (bad input: one line and exit 2; an exception: a crash event; out of memory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.demos.demo_process import run_demo_process
from zbench.contract.protocol import EventWriter, read_events
from zbench.runners.harness_demo import DemoAdapter, FrameChannel, run_demo


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, type: str, **fields: Any) -> None:
        self.events.append((type, fields))


def test_frame_channel_holds_frames_that_come_too_soon() -> None:
    now = [0.0]
    out = Recorder()
    channel = FrameChannel(out, rate_hz=4.0, clock=lambda: now[0])
    for i in range(10):  # ten frames in 90 ms: one written, the last one held
        now[0] = i * 0.01
        channel.send(i=i)
    assert [f["i"] for _, f in out.events] == [0]
    now[0] = 0.3
    assert channel.due() and channel.send(i=10)
    channel.flush()  # nothing held after a written frame
    assert [f["i"] for _, f in out.events] == [0, 10]
    now[0] = 0.31
    channel.send(i=11)
    channel.flush()  # the demo's last frame always reaches the view
    assert [f["i"] for _, f in out.events] == [0, 10, 11]
    assert channel.dropped == 8


class Fake(DemoAdapter):
    name, title = "fake", "A fake demo"

    def __init__(self, fail: BaseException | None = None, reason: str | None = None) -> None:
        self.fail, self.reason, self.closed = fail, reason, False

    def check(self) -> str | None:
        return self.reason

    def config(self) -> dict[str, Any]:
        return {"demo": "fake"}

    def run(self) -> dict[str, Any]:
        for step in range(200):  # as fast as it can: the channel decides what is written
            self.events.emit("frame", demo="fake", step=step)
            self.events.emit("progress", step=step, total=200, loss=1.0 / (step + 1))
        if self.fail is not None:
            raise self.fail
        self.events.emit("result", ignored=True)  # the harness writes the one result
        return {"fps": 12.5, "quality": {"l1": 0.05}}

    def summary(self, figures: dict[str, Any]) -> list[tuple[str, Any]]:
        return [("Frames/s", figures["fps"]), ("Missing", None)]

    def series(self, figures: dict[str, Any], progress: list[dict[str, float]]) -> list[Any]:
        return [("loss", "step", "loss", [(p["step"], p["loss"]) for p in progress])]

    def close(self) -> None:
        self.closed = True


def _run(tmp_path: Path, adapter: Fake) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "ev.jsonl"
    with EventWriter(path) as writer:
        status = run_demo(adapter, writer)
    return status, list(read_events(path))


def test_a_demo_run_is_start_setup_frames_result_done(tmp_path: Path) -> None:
    adapter = Fake()
    status, events = _run(tmp_path, adapter)
    assert status == 0 and adapter.closed
    types = [e["type"] for e in events]
    assert types[0] == "start" and types[-2:] == ["result", "phase"]
    frames = [e for e in events if e["type"] == "frame"]
    assert 1 <= len(frames) <= 3 and frames[-1]["step"] == 199  # rate-limited, ends on the last
    [result] = [e for e in events if e["type"] == "result"]
    assert result["demo"] == "fake" and result["fps"] == 12.5 and "ignored" not in result
    assert result["wall_s"] >= 0  # every demo's run time, for the demo table's "Min"
    assert result["summary"] == {"Frames/s": 12.5}
    assert len(result["series"]["loss"]["points"]) == 200


class Rated(Fake):
    """A demo whose speed is a nested figure (as tracking's ``fps.end_to_end``)."""

    rate = "fps.end"

    def run(self) -> dict[str, Any]:
        self.events.emit("progress", step=1, total=3, fps={"end": None})  # warm-up: no rate yet
        self.events.emit("progress", step=2, total=3, fps={"end": 40.0})
        self.events.emit("progress", step=3, total=3, fps={"end": 42.0}, samples_per_s=7.0)
        return {"fps": {"end": 41.5}}

    def series(self, figures: dict[str, Any], progress: list[dict[str, float]]) -> list[Any]:
        return []


def test_a_demos_rate_figure_is_the_speed_its_job_shows(tmp_path: Path) -> None:
    """Progress events and the result carry ``samples_per_s`` (the jobs table's speed) as the
    demo's rate figure; a rate the demo set itself is kept, and none is made up before it."""
    from zbench.contract.demos import demos

    status, events = _run(tmp_path, Rated())
    assert status == 0
    progress = [e for e in events if e["type"] == "progress"]
    assert [e.get("samples_per_s") for e in progress] == [None, 40.0, 7.0]
    [result] = [e for e in events if e["type"] == "result"]
    assert result["samples_per_s"] == 41.5
    # Each demo's rate is a figure its result's summary shows.
    table = demos()
    for demo in table.values():
        assert demo.rate in dict(demo.summary).values(), demo.name
    assert table["tracking"].rate == "fps.end_to_end" and table["motion"].rate == "stream_fps"


def test_bad_input_is_one_config_line_and_exit_2(tmp_path: Path, capsys) -> None:
    status, events = _run(tmp_path, Fake(reason="no checkpoint in x"))
    assert status == 2
    assert [(e["type"], e.get("kind")) for e in events] == [("error", "config")]
    assert capsys.readouterr().err.strip().splitlines() == ["zbench.runners: no checkpoint in x"]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (RuntimeError("boom\nmore"), "crash"),
        (type("OutOfMemoryError", (RuntimeError,), {})("CUDA out of memory"), "oom"),
        (KeyboardInterrupt(), "interrupted"),
    ],
)
def test_an_exception_ends_in_one_error_event(
    tmp_path: Path, exc: BaseException, kind: str
) -> None:
    adapter = Fake(fail=exc)
    status, events = _run(tmp_path, adapter)
    assert status == 1 and adapter.closed
    last = events[-1]
    assert last["type"] == "error" and last["kind"] == kind and "\n" not in last["message"]
    assert "result" not in [e["type"] for e in events]
    if kind == "crash":
        assert last["message"] == "RuntimeError: boom"


def test_motion_animate_without_a_checkpoint_exits_2_before_start(tmp_path: Path) -> None:
    events = tmp_path / "ev.jsonl"
    args = ["--animate", "--device", "cpu", "--checkpoint", str(tmp_path / "none")]
    proc = run_demo_process("motion", *args, events=events, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "motion.pt" in proc.stderr
    assert [(e["type"], e["kind"]) for e in read_events(events)] == [("error", "config")]


@pytest.mark.slow
def test_motion_smoke_run_on_the_cpu(tmp_path: Path) -> None:
    events = tmp_path / "ev.jsonl"
    args = ["--smoke", "--device", "cpu", "--checkpoint", str(tmp_path / "ckpt")]
    proc = run_demo_process("motion", *args, events=events, timeout=600)
    assert proc.returncode == 0, proc.stderr
    evs = list(read_events(events))
    frames = [e for e in evs if e["type"] == "frame"]
    assert frames and all(e["width"] == e["height"] == 48 for e in frames)
    assert set(frames[-1]["panels"]) == {"source", "driving", "result"}
    [result] = [e for e in evs if e["type"] == "result"]
    assert result["fps"] > 0 and "L1, model" in result["summary"]
    [start] = [e for e in evs if e["type"] == "start"]
    assert start["config"]["size"] == result["size"] == 64  # what ran is what shows
    assert (tmp_path / "ckpt" / "motion.pt").is_file()
