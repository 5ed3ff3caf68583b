"""A `zbench probe` job is one of the jobs: the TUI's jobs table lists it from the store."""

from __future__ import annotations

from pathlib import Path

from tests.rows import job_row
from zbench.contract.probe_options import ProbeConfig
from zbench.store import Store
from zbench.tui.services import LocalServices
from zbench.tui.widgets.jobs_table import JobsTable

from .conftest import make_app
from .helpers import settle


async def test_the_jobs_table_lists_a_probe_job(tmp_path: Path) -> None:
    db = tmp_path / "z.db"
    store = Store(db)
    [jid] = store.add_jobs(
        [
            job_row(
                workload="probe",
                mode="probe",
                config=ProbeConfig(quick=True).as_dict(),
                state="done",
                ended=5.0,
                gpu_ids=[0, 1],
            )
        ]
    )
    app = make_app(services=LocalServices(db))  # type: ignore[arg-type]
    async with app.run_test(size=(160, 50)) as pilot:
        app.poll_jobs()
        await settle(pilot)
        table = app.screen.query_one(JobsTable)
        assert table.row_count == 1
        cells = " ".join(str(c) for c in table.get_row_at(0))
        assert str(jid) in cells and "probe" in cells
