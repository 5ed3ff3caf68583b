"""The jobs table: one keyed row per job, cells updated in place as jobs progress."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import DataTable

from zbench.glyphs import glyphs
from zbench.jobs.states import JobState

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo  # the one job type

COLUMNS = (
    ("id", "id"),
    ("workload", "workload"),
    ("framework", "fw"),
    ("gpus", "GPUs"),
    ("precision", "prec"),
    ("state", "state"),
    ("progress", "progress"),
    ("speed", "samples/s"),
)
# What sets look-alike jobs apart (zbench.jobs.apart): a column added once two jobs read alike
# (past the 80 columns the others fill), so a table without look-alikes has none to clip.
SETUP = ("setup", "setup")

# Fixed widths: DataTable sizes auto columns from the first rows, so a queued job would later clip
# "▶ measure". Sized for the longest usual value; the first eight columns fit in 80 terminal columns.
WIDTHS = {
    "id": 3,
    "workload": 10,
    "framework": 5,
    "gpus": 5,
    "precision": 4,
    "state": 9,
    "progress": 14,
    "speed": 9,
    "setup": 36,
}

STATE_STYLE = {
    JobState.RUNNING: "bold",
    JobState.QUEUED: "dim",
    JobState.DONE: "",
    JobState.FAILED: "bold",
    JobState.OOM: "bold",
    JobState.TIMEOUT: "bold",
    JobState.CRASHED: "bold",
    JobState.LOST: "bold",
    JobState.CANCELLED: "dim",
}


def progress_text(job: JobInfo, width: int = 6) -> str:
    """A job's progress as a small bar and step/total; ``-`` before steps are known."""
    if not job.total:
        return "-"  # no step counts yet (the state column already names the phase)
    step = job.step or 0
    filled = round(min(1.0, step / job.total) * width)
    g = glyphs()
    return f"{g.bar_full * filled}{g.bar_empty * (width - filled)} {step}/{job.total}"


def cells(job: JobInfo, setup: str = "") -> dict[str, object]:
    """A job's cells in the jobs table, keyed by column (GPUs ``cpu`` for a CPU job); ``setup``:
    the options on which it differs from the jobs that read alike (``zbench.jobs.apart``)."""
    gpus = ",".join(str(g) for g in job.gpu_ids) if job.gpu_ids else "-"
    if job.gpu_ids == () and job.state != JobState.QUEUED:
        gpus = "cpu"  # allocated no GPU: a CPU job (as `zbench jobs` says)
    speed = f"{job.samples_per_s:,.1f}" if job.samples_per_s else "-"
    # A running job shows its phase (setup, warmup, measure): the one thing worth knowing about it.
    state = (
        f"{glyphs().running} {job.phase}"
        if job.state == JobState.RUNNING and job.phase
        else job.state
    )
    return {
        "id": str(job.id),
        "workload": job.workload,
        "framework": job.framework,
        "gpus": gpus,
        "precision": job.precision or "-",
        "state": Text(state, style=STATE_STYLE.get(job.state, "")),
        "progress": progress_text(job),
        "speed": Text(speed, justify="right"),
        SETUP[0]: setup,
    }


class JobsTable(DataTable[object]):
    """The jobs table: one keyed row per job, newest first, cells updated in place."""

    DEFAULT_CSS = "JobsTable { height: 1fr; }"

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label in COLUMNS:
            self.add_column(label, key=key, width=WIDTHS.get(key))

    def show(self, jobs: Sequence[JobInfo]) -> None:
        """Newest first; existing rows are updated cell by cell so the cursor stays put."""
        wanted = {str(j.id) for j in jobs}
        for key in [k.value for k in self.rows if k.value not in wanted]:
            self.remove_row(key)
        from zbench.jobs.apart import apart  # after the first frame (tests/test_import_rules.py)

        ordered = sorted(jobs, key=lambda j: j.id, reverse=True)
        setups = apart(jobs, frozenset(key for key, _ in COLUMNS))  # no mode column: in words
        key_, label = SETUP
        if setups and key_ not in self.columns:
            self.add_column(label, key=key_, width=WIDTHS[key_])
        for job in ordered:
            key = str(job.id)
            values = cells(job, setups.get(job.id, ""))
            if key_ not in self.columns:
                del values[key_]
            if key in self.rows:
                for col, value in values.items():
                    if self.get_cell(key, col) != value:
                        self.update_cell(key, col, value)
            else:
                self.add_row(*values.values(), key=key)
        if [str(j.id) for j in ordered] != [k.value for k in self.ordered_row_keys()]:
            self.sort("id", key=lambda v: -int(str(v)))

    def ordered_row_keys(self) -> list:  # type: ignore[type-arg]
        return [row.key for row in self.ordered_rows]

    @property
    def selected_job_id(self) -> int | None:
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return int(str(key.value))
