"""The jobs table tells look-alike jobs apart: a setup column, added once two jobs read alike,
in sight at 80 columns."""

from __future__ import annotations

from pathlib import Path

from tests.rows import job_row, run_config
from zbench.glyphs import glyphs
from zbench.jobs.api import JobInfo
from zbench.store import Store
from zbench.tui.services import LocalServices
from zbench.tui.widgets.jobs_table import JobsTable

from .conftest import make_app
from .fakes import FakeJob, FakeServices
from .helpers import screen_lines, settle


async def test_the_tui_jobs_table_adds_a_setup_column_for_look_alikes(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    Store(db).add_jobs([job_row(config=run_config(), state="done", ended=5.0)])
    app_ = make_app(services=LocalServices(db))  # type: ignore[arg-type]
    async with app_.run_test(size=(160, 50)) as pilot:
        app_.poll_jobs()
        await settle(pilot)
        table = app_.screen.query_one(JobsTable)
        assert "setup" not in table.columns  # one job: nothing to tell apart, no column
        Store(db).add_jobs([job_row(config=run_config(batch_size=16), state="done", ended=6.0)])
        app_.poll_jobs()
        await settle(pilot)
        newest_first = ["batch per GPU 16", "batch per GPU 8"]
        assert list(table.get_column("setup")) == newest_first


async def test_a_train_and_an_infer_job_do_not_read_alike(tmp_path: Path) -> None:
    """The table has no mode column: a train and an infer job of one workload showed the same
    row (vgg16 torch 0 fp32 done); the setup column now says which is which."""
    db = tmp_path / "z.db"
    Store(db).add_jobs(
        [
            job_row(config=run_config(mode=mode), mode=mode, state="done", ended=5.0)
            for mode in ("train", "infer")
        ]
    )
    app_ = make_app(services=LocalServices(db))  # type: ignore[arg-type]
    async with app_.run_test(size=(160, 50)) as pilot:
        app_.poll_jobs()
        await settle(pilot)
        table = app_.screen.query_one(JobsTable)
        assert list(table.get_column("setup")) == ["mode infer", "mode train"]  # newest first


async def test_the_setup_is_in_sight_at_80_columns(tmp_path: Path) -> None:
    """No table may hide how rows differ: at 80x24 the setup column lay past the 80 columns the
    others fill, so two look-alike jobs read the same unless the table was scrolled right."""
    db = tmp_path / "z.db"
    Store(db).add_jobs(
        [
            job_row(config=run_config(batch_size=b), state="done", ended=5.0, gpu_ids=[0])
            for b in (8, 16)
        ]
    )
    app_ = make_app(services=LocalServices(db))  # type: ignore[arg-type]
    async with app_.run_test(size=(80, 24)) as pilot:
        app_.poll_jobs()
        await settle(pilot)
        lines = screen_lines(app_)
        rows = [line for line in lines if "resnet50" in line]
        assert len(rows) == 2, lines
        assert "batch per GPU 16" in rows[0] and "batch per GPU 8" in rows[1]  # newest first
        assert all("done" in row for row in rows)  # the state stays in sight too


async def test_the_columns_fit_again_when_the_terminal_is_resized(tmp_path: Path) -> None:
    """At 80 columns with look-alikes the progress column gives way to the setup; at 160 it is
    back. Laying the columns out again keeps the selected job selected."""
    db = tmp_path / "z.db"
    Store(db).add_jobs(
        [job_row(config=run_config(batch_size=b), state="done", ended=5.0) for b in (8, 16, 32)]
    )
    app_ = make_app(services=LocalServices(db))  # type: ignore[arg-type]
    async with app_.run_test(size=(80, 24)) as pilot:
        app_.poll_jobs()
        await settle(pilot)
        table = app_.screen.query_one(JobsTable)
        await pilot.press("down")
        assert "progress" not in table.columns and table.selected_job_id == 2
        await pilot.resize_terminal(160, 50)
        await settle(pilot)
        assert list(table.columns)[-3:] == ["progress", "speed", "setup"]
        assert table.selected_job_id == 2
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert "progress" not in table.columns and table.selected_job_id == 2


def _late_look_alikes() -> list[JobInfo]:
    """Four resnet50 torch fp32 jobs: 3 differs from 2 only in the preset, 4 from 2 only in the
    batch, and 1 from the others in batch, steps, image size and data source, which a
    configuration lists before the preset: led by those, cut at 80 columns, the setups of 2 and 3
    read alike ("batch size 128, …")."""
    base = run_config(steps=100, image_size=224, data_source="synthetic-device", preset="review")
    configs = [
        {**base, "steps": 50, "image_size": 160, "data_source": "synthetic-host"},
        {**base, "batch_size": 128},
        {**base, "batch_size": 128, "preset": "max"},
        {**base, "batch_size": 256},
    ]
    return [
        FakeJob(i, "resnet50", state="done", phase="done", config=c)
        for i, c in enumerate(configs, start=1)
    ]


async def test_jobs_that_differ_only_in_a_late_field_read_apart_at_80_columns() -> None:
    """No table may hide how its rows differ: the setup cell leads with what tells a job from its
    nearest look-alikes (preset max vs review, batch 128 vs 256), so the cut does not hide it."""
    app_ = make_app(services=FakeServices(jobs=_late_look_alikes()))
    async with app_.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        rows = [line for line in screen_lines(app_) if "resnet50" in line]
        assert len(rows) == 4, rows
        # The id aside (ids always differ), what sets the setups apart is in sight.
        setups = [row.split("resnet50", 1)[1] for row in rows]
        assert len(set(setups)) == 4, setups


async def test_a_grid_of_look_alikes_reads_apart_at_80_columns() -> None:
    """Batch x preset: each job's nearest look-alikes differ in one field each, and the words
    of both do not fit the cell, so half the rows read alike cut; the values alone fit."""
    base = run_config(preset="review")
    jobs = [
        FakeJob(i, "resnet50", state="done", phase="done", config={**base, **c})
        for i, c in enumerate(
            (
                {"batch_size": 128},
                {"batch_size": 256},
                {"batch_size": 128, "preset": "max"},
                {"batch_size": 256, "preset": "max"},
            ),
            start=1,
        )
    ]
    app_ = make_app(services=FakeServices(jobs=jobs))
    async with app_.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        rows = [line for line in screen_lines(app_) if "resnet50" in line]
        assert len(rows) == 4, rows
        dot = glyphs().sep
        want = [f"{b} {dot} {p}" for p in ("max", "review") for b in (256, 128)]  # newest first
        assert all(f" {w} " in f"{row} " for row, w in zip(rows, want, strict=True)), rows
    wide = make_app(services=FakeServices(jobs=jobs))
    async with wide.run_test(size=(160, 50)) as pilot:  # room for the words: words
        await settle(pilot)
        rows = [line for line in screen_lines(wide) if "resnet50" in line]
        assert "batch per GPU 256, preset max" in rows[0]
