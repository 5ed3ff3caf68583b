"""The tracking demo's live view: while it tracks, the rates the demo measures (frames tracked per
second, each stage's alone), not the rate its preview frames reach the view; the loss while it
trains. Fed typed events and a recorded CPU smoke run's (its data directory's paths replaced)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.demos.screens import demo_job, job_app, live_view, open_live_view, progress, write_events
from zbench.tui.screens.demo import DemoScreen, DemoView

EVENTS = Path(__file__).parent / "fixtures" / "tracking_events.jsonl"
START = {"type": "start", "t": 100.0, "demo": "tracking", "title": "Multi-object tracking"}
# Preview frames four a second: the rate the view used to show while the demo tracked.
FRAMES = [
    {"type": "frame", "t": 110.0 + i / 4, "demo": "tracking", "step": i, "boxes": []}
    for i in range(1, 6)
]
RATES = {"detector": 1650.2, "embedder": 2210.7, "tracker": 3480.4, "end_to_end": 412.3}


def recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EVENTS.read_text().splitlines()]


def upto(events: list[dict[str, Any]], step: int) -> list[dict[str, Any]]:
    """The events up to the first ``track`` progress event at ``step`` (a run still tracking)."""
    at = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "progress" and e["phase"] == "track" and e["step"] == step
    )
    return events[: at + 1]


def figures(events: list[dict[str, Any]]) -> str:
    view = DemoView()
    view.apply(events)
    return view.figures()


def test_while_tracking_the_view_shows_the_trackers_rates_not_the_previews() -> None:
    track = progress(111.5, "track", 600, 900, elapsed_s=1.5, fps=RATES)
    events = [START, {"type": "phase", "t": 101.0, "phase": "track"}, *FRAMES]
    view = DemoView()
    view.apply([*events, track])
    text = view.figures()
    assert view.fps == 4.0  # the preview's rate, which the line no longer shows
    assert "tracked [b]412.3[/b] frames/s" in text
    assert "detector 1,650  embedder 2,211 frames/s\nassociation 3,480 frames/s" in text
    assert "preview" not in text and "loss" not in text


def test_the_warm_up_chunk_shows_no_rate_yet() -> None:
    warm = progress(105.0, "track", 1, 900, elapsed_s=4.0, fps=dict.fromkeys(RATES), warmup=True)
    text = figures([START, {"type": "phase", "t": 101.0, "phase": "track"}, *FRAMES[:1], warm])
    assert "tracked [b]-[/b] frames/s  (warm-up, timed apart)" in text
    assert "detector" not in text and "preview" not in text


def test_training_shows_the_loss_as_before() -> None:
    train = progress(103.0, "train_detector", 10, 100, elapsed_s=2.0, loss=0.4321)
    text = figures([START, {"type": "phase", "t": 101.0, "phase": "train_detector"}, train])
    assert "loss 0.4321  preview frames/s -" in text and "tracked" not in text


def test_a_recorded_run_shows_its_live_rates_then_the_results() -> None:
    events = recorded()
    training = next(i for i, e in enumerate(events) if e.get("phase") == "train_embedder")
    assert "loss 7.1  preview frames/s -" in figures(events[: training + 2])  # its one step
    assert "(warm-up, timed apart)" in figures(upto(events, 1))
    live = figures(upto(events, 5))  # one frame of the timed chunk tracked
    assert "tracked [b]0.7[/b] frames/s" in live and "detector 1.6" in live
    assert "association 1,475 frames/s" in live and "preview" not in live
    done = figures(events)  # the phase's last event carries the result's own figures
    assert "tracked [b]2.8[/b] frames/s" in done and "detector 6.4  embedder 5.2" in done
    assert "Tracking frames/s (end to end, after warm-up): [b]2.8[/b]" in done


def mid_run_app(tmp_path: Path):
    events = write_events(tmp_path / "ev.jsonl", upto(recorded(), 5))
    return job_app(demo_job(9, "tracking", events, mode="deepsort"))


async def test_an_80x24_terminal_shows_the_rates_while_tracking(tmp_path: Path) -> None:
    app = mid_run_app(tmp_path)
    async with live_view(app, size=(80, 24)):
        assert isinstance(app.screen, DemoScreen)
        figures = app.screen.query_one("#demo-figures")
        text = str(figures.render())
        assert "tracked 0.7 frames/s" in text and "association 1,475" in text
        assert figures.region.height >= figures.virtual_size.height  # nothing scrolled out


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_tracking_screen_snapshot(snap_compare, size, tmp_path: Path) -> None:
    assert snap_compare(mid_run_app(tmp_path), terminal_size=size, run_before=open_live_view)


async def test_the_loss_curve_draws_the_detector_and_the_embedder_apart(tmp_path: Path) -> None:
    """The tracker trains its detector, then its embedder, each from step 1; the curve drew both
    as one "loss" line, the embedder's first loss joined back to step 1."""
    from tests.tui.helpers import screen_lines
    from zbench.tui.widgets.board import loss_lines

    trained = [
        progress(101.0 + n, phase, n, 3, loss=loss)
        for phase, losses in (("train_detector", (2.0, 1.5, 1.0)), ("train_embedder", (7.0, 6.0)))
        for n, loss in enumerate(losses, 1)
    ]
    view = DemoView()
    view.apply([START, *trained])
    assert loss_lines(view.curve) == {
        "detector": ([1.0, 2.0, 3.0], [2.0, 1.5, 1.0]),
        "embedder": ([1.0, 2.0], [7.0, 6.0]),
    }
    app = job_app(demo_job(9, "tracking", write_events(tmp_path / "ev.jsonl", [START, *trained])))
    async with live_view(app, size=(120, 40)):
        legend = "\n".join(screen_lines(app))
    assert "detector" in legend and "embedder" in legend


def test_a_demo_with_one_training_phase_draws_one_loss_line() -> None:
    from zbench.tui.widgets.board import loss_lines

    view = DemoView()
    view.apply([START, *(progress(100.0 + n, "train", n, 2, loss=1.0 / n) for n in (1, 2))])
    assert loss_lines(view.curve) == {"loss": ([1.0, 2.0], [1.0, 0.5])}
