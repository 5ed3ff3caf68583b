"""The jobs table tells look-alike jobs apart: a setup column, added once two jobs read alike,
in sight at 80 columns."""

from __future__ import annotations

from pathlib import Path

from tests.rows import job_row, run_config
from zbench.store import Store
from zbench.tui.services import LocalServices
from zbench.tui.widgets.jobs_table import JobsTable

from .conftest import make_app
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
        assert list(table.get_column("setup")) == ["batch size 16", "batch size 8"]  # newest first


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
        assert "batch size 16" in rows[0] and "batch size 8" in rows[1]  # newest first
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
