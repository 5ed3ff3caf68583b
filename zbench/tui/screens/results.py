"""The review's results table: filter, sort by any column, export the shown rows, chart them.

It reloads on its own while open (a job that finishes shows up) and on ctrl+r; the sort and filter
are remembered for next time; an export never overwrites a file without asking."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, Select, Static

from zbench.results.export import FORMAT_NAMES, SUFFIX_FORMATS
from zbench.results.format import (
    COLUMNS,
    NUMERIC,
    RUN,
    Col,
    drop_rank,
    fitted_columns,
    sort_key,
    table_columns,
    tells_apart,
)
from zbench.textfit import counted, fit

from ..widgets.charts import ScalingChart, ThroughputBars
from .confirm import ConfirmScreen


def row_cells(row: Any, columns: Sequence[Col] = COLUMNS) -> list[str]:
    """The row's cells as the Markdown export and `zbench results` print them (one column table,
    with ``table_columns``' setup columns where the rows differ)."""
    return [text(get(row)) for _, get, text in columns]


def matches(row: Any, words: str, columns: Sequence[Col] = COLUMNS) -> bool:
    """Every word of the filter appears in some cell (case-insensitive)."""
    raw = [str(getattr(row, k, "")) for k in ("workload", "framework", "mode", "precision")]
    hay = " ".join([*row_cells(row, columns), *raw]).lower()  # "tf" finds TensorFlow rows too
    return all(word in hay for word in words.lower().split())


def sorted_rows(rows: Sequence[Any], column: Col, reverse: bool) -> list[Any]:
    """Rows by a column's values, missing values last either way (reversing the whole order
    put them first)."""
    get = column[1]
    present = sorted((r for r in rows if get(r) is not None), key=sort_key(column), reverse=reverse)
    return [*present, *(r for r in rows if get(r) is None)]


RELOAD_S = 5.0  # how often an open results screen reads the store again


def default_path(fmt: str) -> Path:
    """Where an export goes unless the user says: zbench-results.<fmt> in the current folder."""
    return Path.cwd() / f"zbench-results.{fmt}"


def free_path(path: Path) -> Path:
    """``path`` if nothing is there, else the first free ``name-2.ext``, ``name-3.ext``, ..."""
    n = 2
    candidate = path
    while candidate.exists():
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        n += 1
    return candidate


def _column(columns: Sequence[Col], title: str | None) -> Col | None:
    return next((c for c in columns if c[0] == title), None)


class ResultsScreen(Screen[None]):
    """The results table: filter, sort by any column, export the shown rows, chart, report."""

    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (40, "-tall")]

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="results.back"),
        Binding("slash", "filter", "Filter", id="results.filter", key_display="/"),
        Binding("s", "sort", "Sort", id="results.sort"),
        Binding("m", "export('md')", "Markdown", id="results.export_md"),
        Binding("v", "export('csv')", "CSV", id="results.export_csv"),
        Binding("j", "export('json')", "JSON", id="results.export_json"),
        Binding("e", "export_to", "Export to…", id="results.export_to"),
        Binding("g", "toggle_charts", "Charts", id="results.charts"),
        Binding("w", "report", "Write report", id="results.report"),
    ]

    @dataclass
    class Loaded(Message):
        rows: Sequence[Any]
        error: str | None = None

    @dataclass
    class Exported(Message):
        path: Path | None
        count: int
        error: str | None = None

    def __init__(self, remembered: dict[str, Any] | None = None) -> None:
        super().__init__()
        remembered = remembered or {}
        self.all_rows: Sequence[Any] = ()
        self.shown: list[Any] = []
        # The columns: the one table, with a column per setup field the rows differ in.
        self.columns: tuple[Col, ...] = COLUMNS  # in the order they show (``_fitted``)
        self.headers: tuple[str, ...] = tuple(t for t, _, _ in COLUMNS)
        self.out_of_view = 0  # columns right of the view, a sideways scroll away
        # Sorted by a column's title (titles stay; indices move when setup columns come and go).
        sort = remembered.get("sort")
        self.sort_by: str | None = sort if isinstance(sort, str) and sort else None
        self.reverse = bool(remembered.get("reverse", False)) and self.sort_by is not None
        text = remembered.get("filter", "")
        self._filter = text if isinstance(text, str) else ""

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        yield Input(
            self._filter,
            placeholder="/ filter: words that must appear in a row",
            id="filter",
            compact=True,
        )
        yield DataTable(id="results", zebra_stripes=True, cursor_type="column")
        yield Static(id="results-empty", markup=False)  # why the table has no row, when it has none
        with Horizontal(id="charts"):
            yield ThroughputBars(id="throughput")
            yield ScalingChart(id="scaling")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "results"
        table = self.query_one(DataTable)
        for i, title in enumerate(self.headers):
            table.add_column(title, key=str(i))
        table.fixed_columns = 1  # the model stays in view when a narrow screen scrolls sideways
        table.focus()
        self._load()
        interval = getattr(self.app, "interval", None)
        if interval:
            self.set_interval(max(interval, RELOAD_S), self.reload)

    def reload(self) -> None:
        """Read the store again (the timer, and ctrl+r)."""
        self._load()

    @work(thread=True, exclusive=True, group="results", exit_on_error=False)
    def _load(self) -> None:
        try:
            self.post_message(self.Loaded(list(self.app.services.query_results())))  # type: ignore[attr-defined]
        except Exception as exc:
            self.post_message(self.Loaded((), f"results unavailable: {exc}"))

    def on_results_screen_loaded(self, message: Loaded) -> None:
        if message.error:
            self.notify(message.error, severity="error")
        if message.error is None and list(message.rows) == list(self.all_rows) and self.all_rows:
            return  # nothing new: keep the table (and the cursor) as it is
        self.all_rows = message.rows
        self.apply()
        if message.error:  # the store could not be read: not "no results yet"
            self.query_one("#results-empty", Static).display = False

    def apply(self) -> None:
        """Filter, sort, and show; ``self.shown`` is exactly what the table shows (and exports)."""
        table = self.query_one(DataTable)
        column = table.cursor_column  # clear() moves the cursor home; keep the sorted column
        columns, headers, self.out_of_view = self._fitted(table)
        if (columns, headers) != (self.columns, self.headers):
            self.columns, self.headers = columns, headers
            table.clear(columns=True)
            for i, title in enumerate(headers):
                table.add_column(title, key=str(i))
            # The model stays in view when a narrow screen scrolls sideways (and the run's number
            # with it, where it is in view).
            table.fixed_columns = 2 if columns[0] is RUN else 1
        words = self.query_one("#filter", Input).value
        rows = [r for r in self.all_rows if matches(r, words, columns)]
        sorted_by = _column(columns, self.sort_by)
        if sorted_by is not None:
            rows = sorted_rows(rows, sorted_by, self.reverse)
        self.shown = rows
        table.clear()
        for i, row in enumerate(rows):
            cells = row_cells(row, columns)
            table.add_row(
                *(
                    Text(c, justify="right" if t in NUMERIC or t == RUN[0] else "left")
                    for c, (t, _, _) in zip(cells, columns, strict=True)
                ),
                key=str(i),
            )
        table.move_cursor(column=column)
        self.query_one(ThroughputBars).show(rows)
        self.query_one(ScalingChart).show(rows)
        empty = self.query_one("#results-empty", Static)
        empty.display = not rows
        if not self.all_rows:
            empty.update(
                "No results yet: l launches a benchmark (or run `zbench suite quick`); "
                "finished jobs show up here."
            )
        elif not rows:
            empty.update(f"No row matches the filter {words.strip()!r}: / edits it.")
        arrow = ""
        if sorted_by is not None:
            arrow = f", sorted by {sorted_by[0]} {'↓' if self.reverse else '↑'}"
        more = f", {counted(self.out_of_view, 'column')} to the right" if self.out_of_view else ""
        self.sub_title = f"results: {len(rows)} of {len(self.all_rows)} rows{arrow}{more}"

    def _fitted(self, table: DataTable[Any]) -> tuple[tuple[Col, ...], tuple[str, ...], int]:
        """The columns in the order they show, their headers, and how many lie right of the view.

        A narrow terminal fits the table as ``zbench results`` does (``zbench.textfit``, the
        same short headers and drop order, a setup column that alone tells rows apart always
        in): what fits comes first, in the review's order, and the rest follow it, a sideways
        scroll away, so Samples/s is in sight at 80 columns."""
        setup = table_columns(self.all_rows)
        keep = tells_apart(setup, [row_cells(row, setup) for row in self.all_rows], drop_rank)
        columns = (RUN, *setup)  # the run's number, as `zbench results` prints it
        titles = [t for t, _, _ in columns]
        body = [row_cells(row, columns) for row in self.all_rows]
        # DataTable pads each cell by one on both sides (textfit's gaps cover all but the two
        # edges) and keeps room for a vertical scrollbar.
        room = table.size.width - 2 - table.styles.scrollbar_size_vertical
        layout = fit(fitted_columns(titles, keep), body, room if table.size.width else None)
        rest = [i for i in range(len(columns)) if i not in layout.keep]
        order = [*layout.keep, *rest]
        headers = (*layout.headers, *(titles[i] for i in rest))
        return tuple(columns[i] for i in order), headers, len(rest)

    def on_resize(self) -> None:
        self.apply()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.apply()
        if event.value != self._filter:
            self._filter = event.value
            self._remember()

    def _remember(self) -> None:
        remember = getattr(self.app, "remember", None)
        if remember is not None:
            remember(
                results={"sort": self.sort_by, "reverse": self.reverse, "filter": self._filter}
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_sort(self) -> None:
        """Sort by the column under the cursor; again on the same column reverses."""
        table = self.query_one(DataTable)
        title = self.columns[table.cursor_column][0]
        self.reverse = not self.reverse if title == self.sort_by else False
        self.sort_by = title
        self.apply()
        self._remember()

    def action_toggle_charts(self) -> None:
        self.toggle_class("-charts-hidden" if self.has_class("-tall") else "-charts-shown")

    def action_export(self, fmt: str, path: str | None = None) -> None:
        """m/v/j: to the default name, or the next free one (``zbench-results-2.md``)."""
        if not self.shown:  # as report: an empty table must not read as an export of runs
            self.notify("no rows to export", severity="warning")
            return
        target = Path(path) if path else free_path(default_path(fmt))
        self._export(list(self.shown), fmt, target)

    def action_export_to(self) -> None:
        def done(choice: tuple[str, str] | None) -> None:
            if choice is None:
                return
            fmt, path = choice
            try:
                target = Path(path).expanduser()
                if target.is_dir():  # a folder: the export goes in it, under a name not taken
                    target = free_path(target / default_path(fmt).name)
                database = self.app.services.is_database(target)  # type: ignore[attr-defined]
                exists = target.exists()
            except (OSError, RuntimeError, ValueError) as exc:  # ~nobody/r.md, a name too long
                reason = getattr(exc, "strerror", None) or exc
                self.notify(f"export failed: {path}: {reason}", severity="error")
                return
            if database:
                self.notify(
                    f"{target} is a database: writing the export over it would lose it",
                    severity="error",
                )
                return
            if not exists:
                self.action_export(fmt, str(target))
                return

            def answered(yes: bool | None) -> None:
                if yes:
                    self.action_export(fmt, str(target))

            self.app.push_screen(ConfirmScreen(f"{target} exists. Overwrite it?"), answered)

        self.app.push_screen(ExportScreen(), done)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, rows: list[Any], fmt: str, path: Path) -> None:
        try:
            text = self.app.services.render(rows, fmt)  # type: ignore[attr-defined]
            path.expanduser().write_text(text, encoding="utf-8")
        except Exception as exc:
            self.post_message(self.Exported(None, 0, f"export failed: {exc}"))
            return
        self.post_message(self.Exported(path, len(rows)))

    def on_results_screen_exported(self, message: Exported) -> None:
        if message.error:
            self.notify(message.error, severity="error")
        else:
            self.notify(f"wrote {message.count} rows to {message.path}", title="export")

    # --- the whole report (report.md + report.html) of the shown rows --------------------------

    @dataclass
    class Reported(Message):
        markdown: Path | None
        error: str | None = None

    def action_report(self) -> None:
        if not self.shown:
            self.notify("no rows to report", severity="warning")
            return
        self.notify(f"writing the report of {len(self.shown)} rows…", title="report")
        # A folder of its own: an earlier report (of other rows, perhaps edited) is kept.
        self._report(list(self.shown), free_path(Path.cwd() / "zbench-report"))

    @work(thread=True, exclusive=True, group="report", exit_on_error=False)
    def _report(self, rows: list[Any], folder: Path) -> None:
        try:
            path = self.app.services.report(rows, folder)  # type: ignore[attr-defined]
        except Exception as exc:
            self.post_message(self.Reported(None, f"report failed: {exc}"))
            return
        self.post_message(self.Reported(path))

    def on_results_screen_reported(self, message: Reported) -> None:
        if message.error or message.markdown is None:
            self.notify(message.error or "report failed", severity="error")
            return
        from .report_view import ReportViewScreen

        self.notify(f"wrote {message.markdown} and report.html", title="report")
        self.app.push_screen(ReportViewScreen(message.markdown))


class ExportScreen(ModalScreen[tuple[str, str] | None]):
    """Pick a format and a path (default: zbench-results.<ext> in the current directory)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Export", id="export.save"),
        Binding("escape", "cancel", "Close", id="export.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Export the shown rows (ctrl+s writes, esc closes)")
            yield Select(
                [(v, k) for k, v in FORMAT_NAMES.items()],
                value="md",
                allow_blank=False,
                id="fmt",
                compact=True,
            )
            yield Input(value=str(default_path("md")), id="path", compact=True)
            with Horizontal(id="buttons"):
                yield Button("Export (ctrl+s)", variant="success", id="save", compact=True)
                yield Button("Close (esc)", id="close", compact=True)
        yield Footer()  # the dialog's keys: the screen's below do nothing while it is open

    def on_select_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#path", Input)
        current = Path(path.value)
        if current.suffix.lstrip(".") in FORMAT_NAMES:
            path.value = str(current.with_suffix(f".{event.value}"))

    def on_input_changed(self, event: Input.Changed) -> None:
        """The format follows the name typed (``r.csv``: CSV), as ``zbench export -o`` does."""
        named = SUFFIX_FORMATS.get(Path(event.value.strip()).suffix.lower())
        if named in FORMAT_NAMES:
            self.query_one("#fmt", Select).value = named

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.dismiss(None)

    def action_save(self) -> None:
        fmt = str(self.query_one("#fmt", Select).value)
        self.dismiss((fmt, self.query_one("#path", Input).value.strip() or str(default_path(fmt))))

    def action_cancel(self) -> None:
        self.dismiss(None)
