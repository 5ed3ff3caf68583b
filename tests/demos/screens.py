"""What the demo screen's tests set up: a demo job, events files, the live view opened on either."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.tui.conftest import make_app
from tests.tui.fakes import FakeJob, FakeServices
from tests.tui.helpers import press, settle
from zbench.jobs.api import JobInfo
from zbench.tui.app import ZbenchApp
from zbench.tui.screens.demo import DemoScreen


def demo_job(id: int, workload: str, events: Path | None = None, **over: Any) -> JobInfo:
    """A demo job (no precision) whose runner writes ``events``; none yet when it is None."""
    events_path = None if events is None else str(events)
    return FakeJob(
        id,
        workload,
        framework="demo",
        kind="demo",
        precision=None,
        events_path=events_path,
        **over,
    )


def job_app(job: JobInfo) -> ZbenchApp:
    """The dashboard with ``job`` as its one job."""
    return make_app(services=FakeServices(jobs=[job]))


def write_events(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """``rows`` as an events file, a JSON line each, stamped "v": 1 where a row has no "v"."""
    path.write_text("".join(json.dumps({"v": 1, **row}) + "\n" for row in rows))
    return path


def progress(t: float, phase: str, step: int, total: int, **figures: Any) -> dict[str, Any]:
    """A progress event at ``step`` of ``total`` in ``phase``, with ``figures``."""
    return {"type": "progress", "t": t, "phase": phase, "step": step, "total": total, **figures}


async def open_live_view(pilot: Pilot[Any]) -> None:
    """Enter on the job list's newest job (the demo), then let the view read its events."""
    await settle(pilot)
    await press(pilot, "enter")
    await pilot.pause(0.5)
    await settle(pilot)


@asynccontextmanager
async def live_view(app: ZbenchApp, *, size: tuple[int, int]) -> AsyncIterator[Pilot[Any]]:
    """``app`` run at ``size`` with the live view of its newest job open."""
    async with app.run_test(size=size) as pilot:
        await open_live_view(pilot)
        yield pilot


async def show_events(pilot: Pilot[Any], events: Path, demo: str) -> None:
    """The live view of ``demo``'s ``events`` pushed over the screen, its events read."""
    pilot.app.push_screen(DemoScreen(None, events, demo))
    await pilot.pause(0.5)
    await settle(pilot)


@asynccontextmanager
async def events_view(
    events: Path, demo: str, *, size: tuple[int, int]
) -> AsyncIterator[tuple[ZbenchApp, Pilot[Any]]]:
    """A dashboard without jobs run at ``size``, the live view of ``events`` over it."""
    app = make_app(services=FakeServices(jobs=[]))
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await show_events(pilot, events, demo)
        yield app, pilot
