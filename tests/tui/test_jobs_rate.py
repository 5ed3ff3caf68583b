"""The TUI's jobs table says what each speed counts (a demo's board-steps/s or frames/s were
listed under "samples/s" beside the benchmarks' samples/s) and shows a job's tag, as `zbench jobs`
does."""

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


async def test_a_tagged_job_shows_its_tag_in_sight_at_80_columns() -> None:
    """`zbench jobs` had a Tag column; the TUI's table had none: two runs of one setup, tagged
    "before" and "after" a driver update, read alike but for their ids."""
    jobs = [
        FakeJob(1, "resnet50", tag="before", state="done", phase="done"),
        FakeJob(2, "resnet50", tag="after", state="done", phase="done"),
    ]
    app_ = make_app(services=FakeServices(jobs=jobs))
    async with app_.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app_.screen.query_one(JobsTable)
        assert [str(c) for c in table.get_column("tag")] == ["after", "before"]
        keys = [k.value for k in table.columns]
        assert keys.index("tag") == keys.index("precision") + 1
    untagged = make_app(services=FakeServices(jobs=[FakeJob(1, "resnet50")]))
    async with untagged.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "tag" not in untagged.screen.query_one(JobsTable).columns
