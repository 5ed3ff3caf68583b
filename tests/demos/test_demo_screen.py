"""The TUI's demo screen, fed by a recorded events file: opened from the job list, resumed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.demos.screens import (
    demo_job,
    events_view,
    job_app,
    live_view,
    open_live_view,
    progress,
    show_events,
    write_events,
)
from tests.tui.conftest import make_app
from tests.tui.fakes import NOW, FakeServices
from tests.tui.helpers import press, run_and_press, settle
from zbench.demos.snake.render import render_board
from zbench.jobs.api import JobInfo
from zbench.jobs.states import FINISHED
from zbench.tui.launch_form import build_request
from zbench.tui.screens.demo import DemoScreen, DemoView

EVENTS = Path(__file__).parent / "fixtures" / "snake_events.jsonl"


def demo_app():
    return job_app(demo_job(7, "snake", EVENTS, mode="ppo"))


def test_view_folds_events() -> None:
    view = DemoView()
    view.apply([json.loads(line) for line in EVENTS.read_text().splitlines()])
    assert view.title == "Snake by reinforcement learning"
    assert view.phase == "measure" and len(view.curve) == 10
    assert view.board is not None and view.board["score"] == 11
    text = view.figures()
    assert "best [b]55[/b]" in text and "mean 24.0" in text


def test_board_renders_head_body_fruit_and_ascii() -> None:
    board = json.loads(EVENTS.read_text().splitlines()[-1])["board"]
    lines = render_board(board).plain.splitlines()
    assert len(lines) == 14 and all(len(line) == 26 for line in lines)
    assert lines[3][1 + 2 * 3 : 1 + 2 * 3 + 2] == "● "  # the fruit at row 2, column 3
    ascii_lines = render_board(board, ascii=True).plain.splitlines()
    assert ascii_lines[6][1 + 2 * 7 : 1 + 2 * 7 + 2] == "@@"  # the head at row 5, column 7
    assert all(ch.isascii() for line in ascii_lines for ch in line)


async def test_enter_on_a_demo_job_opens_its_live_view() -> None:
    app = demo_app()
    async with run_and_press(app, "enter", size=(80, 24)) as pilot:
        assert isinstance(app.screen, DemoScreen)
        await pilot.pause(0.5)
        await settle(pilot)
        assert app.screen.view.board is not None  # resumed from the events file
        await press(pilot, "escape")
        assert not isinstance(app.screen, DemoScreen)


def test_launch_dialog_builds_a_demo_job() -> None:
    form = {
        "gpu-ids": "",
        "data": "synthetic-device",
        "path": "",
        "framework": "torch",
        "mode": "train",
    }
    request, error = build_request("", ["snake"], form)
    assert error == "" and request is not None
    [config] = request.configs
    assert config.as_dict()["kind"] == "demo"


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_demo_screen_snapshot(snap_compare, size) -> None:
    assert snap_compare(demo_app(), terminal_size=size, run_before=open_live_view)


# A Snake run's events up to a progress event that estimates the time left (10 of 100 steps, the
# rate from its earlier look at 5).
MID_RUN: list[dict[str, object]] = [
    {"type": "start", "t": 100.0, "demo": "snake", "title": "Snake", "config": {}},
    {"type": "phase", "t": 101.0, "phase": "measure"},
    progress(106.0, "measure", 5, 100, elapsed_s=5.0),
    progress(111.0, "measure", 10, 100, elapsed_s=10.0),
]


async def test_a_demo_stopped_mid_run_shows_no_time_left(tmp_path: Path) -> None:
    """An interrupted (or failed) demo writes nothing after its error: the view names the error
    and no longer estimates a time left from the last progress event."""
    rows = [*MID_RUN, {"type": "error", "t": 112.0, "kind": "interrupted", "message": "cancelled"}]
    events = write_events(tmp_path / "ev.jsonl", rows)
    async with events_view(events, "snake", size=(80, 24)) as (app, _):
        text = str(app.screen.query_one("#demo-figures").render())
        assert "phase measure 10/100  elapsed 0:00:12" in text
        assert "interrupted: cancelled" in text and "left" not in text


async def test_a_damaged_board_draws_as_an_empty_one(tmp_path: Path) -> None:
    """A frame whose board has the wrong types (size, rows, head, length) neither stops the
    app nor the view: the board draws empty and the next good frame draws as usual."""
    good = json.loads(EVENTS.read_text().splitlines()[-1])
    bad = {**good, "board": {"size": "12", "age": [None, "x"], "head": 5, "length": "long"}}
    events = write_events(tmp_path / "ev.jsonl", [bad])
    async with events_view(events, "snake", size=(80, 24)) as (app, pilot):
        assert isinstance(app.screen, DemoScreen)
        board = app.screen.query_one("#demo-board")
        assert str(board.render()).startswith("┌┐")  # no cells: an empty board
        with events.open("a") as fh:
            fh.write(json.dumps(good) + "\n")
        await pilot.pause(0.5)
        await settle(pilot)
        assert str(board.render()).count("██") == 14  # the good frame's snake, head and body


async def test_damaged_figures_neither_stop_the_app_nor_the_view(tmp_path: Path) -> None:
    """Events whose fields have the wrong type (a config, a phase, progress figures, a result's
    summary) are read as far as they go: a figure that is not a number is not drawn."""
    rows = [
        {"type": "start", "t": 100.0, "demo": "snake", "title": "Snake", "config": "ppo"},
        {"type": "phase", "t": 101.0, "phase": 5, "env_steps_per_s": "fast"},
        {
            "type": "progress",
            "t": 102.0,
            "step": "a",
            "total": "b",
            "elapsed_s": 1.0,
            "samples_per_s": "x",
            "t_s": "q",
            "mean_score": "m",
            "best_score": 3,
        },
        {"type": "result", "t": 103.0, "summary": ["x"]},
    ]
    events = write_events(tmp_path / "ev.jsonl", rows)
    async with events_view(events, "snake", size=(80, 24)) as (app, pilot):
        assert isinstance(app.screen, DemoScreen)
        text = str(app.screen.query_one("#demo-figures").render())
        assert "phase 5 a/b" in text and "best 3" in text and "steps/s -" in text
        await show_events(pilot, events, "motion")
        assert isinstance(app.screen, DemoScreen) and app.screen.kind == "pixels"


async def test_a_demo_opened_while_queued_follows_its_events_once_it_starts() -> None:
    """A queued job has no events file yet: the live view opened then shows the demo as soon
    as the job starts and its events file is known, without leaving and coming back."""
    queued = demo_job(7, "snake", mode="ppo")
    services = FakeServices(jobs=[dataclasses.replace(queued, state="queued")])
    app = make_app(services=services)
    async with run_and_press(app, "enter", size=(80, 24)) as pilot:
        assert isinstance(app.screen, DemoScreen) and app.screen.view.board is None
        services.jobs = [dataclasses.replace(queued, events_path=str(EVENTS))]
        app.poll_jobs()
        await settle(pilot)
        await pilot.pause(0.6)
        await settle(pilot)
        assert app.screen.view.board is not None
        assert "waiting" not in str(app.screen.query_one("#demo-board").render())


def running_demo(tmp_path: Path) -> JobInfo:
    """A running Snake job whose events file ends at a progress event with a time-left estimate
    (then its runner was killed by SIGKILL: it wrote no error event)."""
    return demo_job(7, "snake", write_events(tmp_path / "ev.jsonl", MID_RUN))


@pytest.mark.parametrize("state", [str(s) for s in FINISHED])
async def test_a_demo_whose_job_ended_without_an_error_shows_no_time_left(
    tmp_path: Path, state: str
) -> None:
    """A runner killed by SIGKILL writes no error event: the view kept its last progress event's
    time left after the job had ended. The job's final state (the jobs layer's) ends it too."""
    job = running_demo(tmp_path)
    services = FakeServices(jobs=[job])
    app = make_app(services=services)
    async with live_view(app, size=(80, 24)) as pilot:
        assert isinstance(app.screen, DemoScreen)
        figures = app.screen.query_one("#demo-figures")
        assert "~0:01:30 left" in str(figures.render())  # running: 10 of 100 steps in 10 s
        reason = "killed by SIGKILL"
        services.jobs = [dataclasses.replace(job, state=state, ended=NOW, reason=reason)]
        app.poll_jobs()
        await settle(pilot)
        text = str(figures.render())
        assert "phase measure 10/100  elapsed 0:00:11" in text and "left" not in text
        if state != "done":
            assert f"{state}: {reason}" in text  # why it ended, as the job list says


async def test_a_demo_opened_after_its_job_ended_shows_no_time_left(tmp_path: Path) -> None:
    job = dataclasses.replace(running_demo(tmp_path), state="crashed", reason="killed by SIGKILL")
    app = job_app(job)
    async with live_view(app, size=(80, 24)):
        assert isinstance(app.screen, DemoScreen)
        text = str(app.screen.query_one("#demo-figures").render())
        assert "10/100" in text and "left" not in text
