"""The jobs table: one keyed row per job, cells updated in place as jobs progress, its columns
fitted to its width (the setup that tells look-alike jobs apart stays in sight)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import DataTable

from zbench.glyphs import glyphs
from zbench.jobs.states import JobState
from zbench.textfit import Column, cut, fit

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo  # the one job type

# Column key -> how textfit (``zbench.textfit``) fits it to the table's width. Below the width the
# whole table needs, the setup (its one free-text column) is cut to its floor, then progress goes:
# what tells rows apart (id, name, GPUs, state, setup) and samples/s stay in sight at 80 columns.
COLUMNS: dict[str, Column] = {
    "id": Column("id"),
    "workload": Column("workload"),
    "framework": Column("fw"),
    "gpus": Column("GPUs"),
    "precision": Column("prec"),
    "state": Column("state"),
    "progress": Column("progress", priority=2),
    "speed": Column("samples/s", priority=1, right=True),  # titled by its speeds' one unit
}
RATE = "rate"  # the speed column's title when its speeds count unlike things: each says its unit
# What sets look-alike jobs apart (zbench.jobs.apart): a column added once two jobs read alike,
# last, so a table without look-alikes has none to fit.
SETUP = "setup"
SETUP_COLUMN = Column("setup", flex=True, min_width=12)
# A job's --tag (run, demo, suite), after its precision: a column once a listed job has one.
TAG = "tag"
TAG_COLUMN = Column("tag", priority=2)

# The least width of each column: DataTable keeps a column's width while its cells change, so a
# queued job would later clip "▶ measure" (the widths grow for a longer value, e.g. a long name).
WIDTHS = {
    "id": 3,
    "workload": 10,
    "framework": 5,
    "gpus": 5,
    "precision": 4,
    "state": 9,
    "progress": 14,
    "speed": 9,
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


def cells(job: JobInfo, setup: str = "", unit: str | None = "samples/s") -> dict[str, object]:
    """A job's cells in the jobs table, keyed by column (GPUs ``cpu`` for a CPU job); ``setup``:
    the options on which it differs from the jobs that read alike (``zbench.jobs.apart``);
    ``unit``: the speed column's one unit, None when the speeds say their own
    (``jobs.api.shared_rate_unit``)."""
    gpus = ",".join(str(g) for g in job.gpu_ids) if job.gpu_ids else "-"
    if job.gpu_ids == () and job.state != JobState.QUEUED:
        gpus = "cpu"  # allocated no GPU: a CPU job (as `zbench jobs` says)
    from zbench.jobs.api import speed_cell  # after the first frame, as show() imports it

    speed = speed_cell(job.samples_per_s, job.rate_unit, unit) or "-"
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
        TAG: job.tag or "",
        "state": Text(state, style=STATE_STYLE.get(job.state, "")),
        "progress": progress_text(job),
        "speed": Text(speed, justify="right"),
        SETUP: setup,
    }


class JobsTable(DataTable[object]):
    """The jobs table: one keyed row per job, newest first, cells updated in place; its columns
    fitted to its width (``zbench.textfit``), fitted again when the width changes."""

    DEFAULT_CSS = "JobsTable { height: 1fr; }"

    jobs: Sequence[JobInfo] = ()
    shown: tuple[tuple[str, int], ...] = ()  # the columns shown: key and width
    unit: str | None = "samples/s"  # the speeds' one unit, the speed column's title (None: RATE)

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self._columns(self._fit({}, []))

    def on_resize(self) -> None:
        self.show(self.jobs)

    def _fit(
        self, setups: dict[int, str], rows: list[dict[str, object]]
    ) -> tuple[tuple[str, int], ...]:
        """The columns (key, width) for the table's width: textfit's choice, every column at
        least its ``WIDTHS``."""
        columns: dict[str, Column] = {}
        for key in COLUMNS:
            columns[key] = self._column(key)
            if key == "precision" and any(job.tag for job in self.jobs):
                columns[TAG] = TAG_COLUMN
        columns = {**columns, SETUP: SETUP_COLUMN} if setups else columns
        keys = list(columns)
        cells = [[str(row[k]) for k in keys] for row in rows]
        floor = [" " * WIDTHS.get(k, 0) for k in keys]  # textfit sizes a column to its widest cell
        # DataTable pads each cell by one on both sides (textfit's gaps cover all but the two
        # edges) and keeps room for a vertical scrollbar.
        room = self.size.width - 2 - self.styles.scrollbar_size_vertical
        layout = fit(list(columns.values()), [*cells, floor], room if self.size.width else None)
        return tuple((keys[i], w) for i, w in zip(layout.keep, layout.widths, strict=True))

    def _column(self, key: str) -> Column:
        """A column of COLUMNS, the speed column titled by the speeds' unit."""
        if key != "speed":
            return COLUMNS[key]
        return replace(COLUMNS[key], header=self.unit or RATE)

    @staticmethod
    def _told(shown: dict[int, str], width: int) -> int:
        """How many setups still read apart when ``shown`` is cut to ``width``."""
        return len({cut(text, width, glyphs().ellipsis) for text in shown.values()})

    def _columns(self, shown: tuple[tuple[str, int], ...]) -> None:
        """Lay the columns out (again: their rows go with them, and ``show`` adds them back)."""
        self.clear(columns=True)
        for key, width in shown:
            column = {SETUP: SETUP_COLUMN, TAG: TAG_COLUMN}.get(key) or self._column(key)
            self.add_column(column.header, key=key, width=width)
        self.shown = shown

    def show(self, jobs: Sequence[JobInfo]) -> None:
        """Newest first; existing rows are updated cell by cell so the cursor stays put."""
        from zbench.jobs.apart import apart  # after the first frame (tests/test_import_rules.py)
        from zbench.jobs.api import shared_rate_unit

        self.jobs = jobs
        ordered = sorted(jobs, key=lambda j: j.id, reverse=True)
        # No mode column: in words; led by each job's nearest difference, as the cell is cut.
        setups = apart(jobs, frozenset(COLUMNS), lead=True)
        unit, self.unit = self.unit, shared_rate_unit(jobs)
        retitled = unit != self.unit
        rows = [cells(job, setups.get(job.id, ""), self.unit) for job in ordered]
        shown = self._fit(setups, rows)
        width = dict(shown).get(SETUP)
        if width and any(len(s) > width for s in setups.values()):
            # Cut, the words may read alike (batch x preset: each names one field); the values
            # alone may not. The view of one job (Enter) has its whole setup in words.
            terse = apart(jobs, frozenset(COLUMNS), terse=glyphs().sep)
            if self._told(terse, width) > self._told(setups, width):
                setups = terse
                rows = [cells(job, setups.get(job.id, ""), self.unit) for job in ordered]
        selected = None
        if shown != self.shown or retitled:  # the rows go with the columns: the cursor is put back
            selected = self.selected_job_id
            self._columns(shown)
        wanted = {str(j.id) for j in jobs}
        for key in [k.value for k in self.rows if k.value not in wanted]:
            self.remove_row(key)
        widths = dict(shown)
        for job, values in zip(ordered, rows, strict=True):
            key = str(job.id)
            values = {k: values[k] for k in widths}
            if SETUP in values:  # cut where it does not fit, and said so
                values[SETUP] = cut(str(values[SETUP]), widths[SETUP], glyphs().ellipsis)
            if key in self.rows:
                for col, value in values.items():
                    if self.get_cell(key, col) != value:
                        self.update_cell(key, col, value)
            else:
                self.add_row(*values.values(), key=key)
        if [str(j.id) for j in ordered] != [k.value for k in self.ordered_row_keys()]:
            self.sort("id", key=lambda v: -int(str(v)))
        if selected is not None and str(selected) in self.rows:
            self.move_cursor(row=self.get_row_index(str(selected)))

    def ordered_row_keys(self) -> list:  # type: ignore[type-arg]
        return [row.key for row in self.ordered_rows]

    @property
    def selected_job_id(self) -> int | None:
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        return int(str(key.value))
