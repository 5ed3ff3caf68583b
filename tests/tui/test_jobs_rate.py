"""The TUI's jobs table says what each speed counts: a demo's board-steps/s or frames/s were
listed under "samples/s" beside the benchmarks' samples/s."""

from __future__ import annotations

from zbench.tui.widgets.jobs_table import JobsTable

from .conftest import make_app
from .fakes import FakeJob, FakeServices
from .helpers import settle


def _speeds(table: JobsTable) -> list[str]:
    return [str(cell) for cell in table.get_column("speed")]


async def test_speeds_of_unlike_units_each_say_their_unit() -> None:
    jobs = [
        FakeJob(1, "resnet50", samples_per_s=2210.5),
        FakeJob(2, "snake", framework="demo", mode="ppo", kind="demo", samples_per_s=5000.0),
    ]
    app_ = make_app(services=FakeServices(jobs=jobs))
    async with app_.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        table = app_.screen.query_one(JobsTable)
        speed = next(c for k, c in table.columns.items() if k == "speed")
        assert str(speed.label) == "rate"
        assert _speeds(table) == ["5,000.0 board-steps/s", "2,210.5 samples/s"]  # newest first


async def test_speeds_of_one_unit_are_titled_by_it() -> None:
    jobs = [FakeJob(1, "motion", framework="demo", mode="animate", kind="demo", samples_per_s=9.5)]
    app_ = make_app(services=FakeServices(jobs=jobs))
    async with app_.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        table = app_.screen.query_one(JobsTable)
        speed = next(c for k, c in table.columns.items() if k == "speed")
        assert str(speed.label) == "frames/s" and _speeds(table) == ["9.5"]
