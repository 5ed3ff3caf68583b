"""The demo screen for pixel demos, fed by a recorded motion events file (CPU smoke run): panels
as half-block cells, the loss curve and figures, the generation rate while animating (typed
events); tracking's image with boxes; an SVG snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Footer

from tests.demos.screens import (
    demo_job,
    events_view,
    job_app,
    live_view,
    open_live_view,
    show_events,
    write_events,
)
from tests.tui.helpers import run_and_press, settle
from zbench.tui.screens.demo import DemoScreen, DemoView
from zbench.tui.widgets.pixels import PixelView, cells, draw_boxes, to_pixels

EVENTS = Path(__file__).parent / "fixtures" / "motion_events.jsonl"


def motion_app():
    return job_app(demo_job(8, "motion", EVENTS, mode="train"))


def test_view_folds_motion_events() -> None:
    view = DemoView(demo="motion")
    view.apply([json.loads(line) for line in EVENTS.read_text().splitlines()])
    assert view.title == "Talking-head motion transfer" and view.phase == "done"
    assert view.frame is not None and set(view.frame["panels"]) == {"source", "driving", "result"}
    assert view.curve and view.curve[0]["loss"] is not None
    text = view.figures()
    assert "Frames/s (device, batch 1)" in text and "L1, affine baseline" in text
    assert "size 64" in text  # the recorded smoke run ran at 64x64


START = {"type": "start", "t": 100.0, "demo": "motion", "title": "Talking-head motion transfer"}
# Preview frames four a second: the rate the view shows while the demo trains.
PREVIEWS = [
    {"type": "frame", "t": 110.0 + i / 4, "demo": "motion", "stage": "animate", "step": i}
    for i in range(1, 6)
]


def motion_figures(*events: dict) -> str:
    view = DemoView()
    view.apply([START, *events])
    return view.figures()


def test_while_animating_the_view_shows_the_generation_rate_not_the_previews() -> None:
    animate = {"type": "phase", "t": 109.0, "phase": "animate", "drive": "scripted"}
    progress = {"type": "progress", "t": 111.5, "phase": "animate", "step": 120, "total": 150}
    text = motion_figures(animate, *PREVIEWS, {**progress, "elapsed_s": 0.5, "stream_fps": 240.3})
    assert "generated [b]240.3[/b] frames/s" in text
    assert "tracked" not in text and "preview" not in text and "loss" not in text
    # The loop's first frame is not out yet: the rate is not known, still the motion label.
    early = motion_figures(animate, {**progress, "step": 0, "stream_fps": None})
    assert "generated [b]-[/b] frames/s" in early and "loss" not in early


def test_while_training_the_motion_view_keeps_the_loss_line() -> None:
    train = {"type": "progress", "t": 103.0, "phase": "train", "step": 10, "total": 100}
    text = motion_figures(
        {"type": "phase", "t": 101.0, "phase": "train"}, {**train, "loss": 0.4321}
    )
    assert "loss 0.4321  preview frames/s -" in text and "generated" not in text


def test_half_blocks_carry_two_pixels_and_ascii_is_ascii() -> None:
    flat = [255, 0, 0, 0, 0, 255, 0, 255, 0, 10, 10, 10]  # 2x2: red blue / green grey
    [row] = cells(to_pixels(flat, 2, 2))
    assert [s.text for s in row] == ["▀", "▀"]
    assert row[0].style.color.triplet == (255, 0, 0) and row[0].style.bgcolor.triplet == (0, 255, 0)
    assert row[1].style.bgcolor.triplet == (10, 10, 10)
    [ascii_row] = cells(to_pixels(flat, 2, 2), ascii=True)
    assert all(s.text.isascii() and len(s.text) == 1 for s in ascii_row)
    assert len(cells(to_pixels(flat[:6], 2, 1))) == 1  # an odd row sits over black


def test_boxes_are_outlined_in_image_coordinates() -> None:
    pixels = to_pixels([0] * (8 * 6 * 3), 8, 6)
    out = draw_boxes(pixels, [[1, 1, 4, 3, 2], [7, 5, 9, 9, 3], [50, 50, 2, 2, 1]])
    assert out[1][1] == out[3][4] == out[1][4] != (0, 0, 0)  # corners of the first box
    assert out[2][2] == (0, 0, 0)  # its inside is untouched
    assert out[5][7] != (0, 0, 0)  # a box past the edge is clipped, one outside skipped
    assert pixels[1][1] == (0, 0, 0)  # a copy


async def test_a_motion_job_opens_its_panels_and_curve() -> None:
    app = motion_app()
    async with run_and_press(app, "enter", size=(160, 50)) as pilot:
        assert isinstance(app.screen, DemoScreen) and app.screen.kind == "pixels"
        await pilot.pause(0.5)
        await settle(pilot)
        views = list(app.screen.query(PixelView))
        assert len(views) == 3 and all(v.size == (48, 24) for v in views)


async def test_an_80x24_terminal_shows_every_figure_under_the_panels() -> None:
    """Three 48x24 panels are taller than an 80x24 screen's body: they are cut, never the
    figures (progress, loss, frames/s, the result's summary) below them."""
    app = motion_app()
    async with live_view(app, size=(80, 24)):
        figures = app.screen.query_one("#demo-figures")
        assert "Training steps: 6" in str(figures.render())
        assert figures.region.height >= figures.virtual_size.height  # nothing scrolled out
        assert figures.region.bottom <= app.screen.query_one(Footer).region.y


async def test_an_80_column_terminal_shows_all_three_panels_at_half_scale() -> None:
    """Three 48-pixel panels do not fit across 80 columns: each shows every other pixel, so the
    result panel and its label are on screen rather than cut off at the right edge."""
    app = motion_app()
    async with live_view(app, size=(80, 24)) as pilot:
        views = list(app.screen.query(PixelView))
        assert [v.size.width for v in views] == [24, 24, 24]
        assert all(v.region.right <= 80 for v in views)
        assert app.screen.query_one("#label-result").region.right <= 80
        await pilot.resize_terminal(160, 50)
        await settle(pilot)
        assert [v.size for v in views] == [(48, 24)] * 3  # full scale where they fit


async def test_tracking_view_draws_the_image_with_boxes(tmp_path: Path) -> None:
    frame = {
        "v": 1,
        "t": 1.0,
        "type": "frame",
        "demo": "tracking",
        "step": 3,
        "width": 32,
        "height": 16,
        "image": [90] * (32 * 16 * 3),
        "boxes": [[2, 2, 8, 6, 4], [20, 4, 6, 8, 9]],
    }
    events = write_events(tmp_path / "ev.jsonl", [frame])
    async with events_view(events, "tracking", size=(120, 30)) as (app, _):
        view = app.screen.query_one("#panel-image", PixelView)
        assert view.size == (32, 8)
        assert "tracks 2: 4 9" in str(app.screen.view.figures())


async def test_a_damaged_frame_neither_stops_the_app_nor_the_view(tmp_path: Path) -> None:
    """A frame with values of the wrong type (sizes, pixels, boxes) neither stops the app nor
    the view: damaged pixels draw black, boxes without a track id are skipped."""
    frame = {
        "v": 1,
        "t": 1.0,
        "type": "frame",
        "demo": "tracking",
        "width": 4,
        "height": "4",
        "image": [None, "x"] * 24,
        "boxes": [[0, 0, 2, 2, 3], [1, 1, 2, 2, "a"], 5, [1, "y", 2, 2, 1]],
    }
    motion = {**frame, "demo": "motion", "height": 2, "panels": {"source": "abc"}}
    events = write_events(tmp_path / "ev.jsonl", [frame])
    motion_events = write_events(tmp_path / "motion.jsonl", [motion])
    async with events_view(events, "tracking", size=(80, 24)) as (app, pilot):
        assert isinstance(app.screen, DemoScreen)
        assert "tracks 2: 3 1" in str(app.screen.view.figures())
        await show_events(pilot, motion_events, "motion")
        assert app.screen.query_one("#panel-source", PixelView).size == (4, 1)


@pytest.mark.parametrize("size", [(160, 50)], ids=["160x50"])
def test_motion_screen_snapshot(snap_compare, size) -> None:
    assert snap_compare(motion_app(), terminal_size=size, run_before=open_live_view)
