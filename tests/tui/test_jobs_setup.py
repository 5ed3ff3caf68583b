"""The jobs table tells look-alike jobs apart: a setup column, added once two jobs read alike."""

from __future__ import annotations

from pathlib import Path

from tests.rows import job_row, run_config
from zbench.store import Store
from zbench.tui.services import LocalServices
from zbench.tui.widgets.jobs_table import JobsTable

from .conftest import make_app
from .helpers import settle


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
