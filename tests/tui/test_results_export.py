"""Results: filter, sort by the cursor's column, export exactly the shown rows (keys and palette)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input

from zbench.tui.screens.results import ExportScreen, ResultsScreen

from .conftest import make_app
from .helpers import press, run_and_press, settle


async def test_filter_sort_and_export_markdown(zbench_home: Path) -> None:
    app = make_app()
    async with run_and_press(app, "r", size=(160, 50)) as pilot:
        assert isinstance(app.screen, ResultsScreen)
        await press(pilot, "slash", *"torch train", "enter")
        await press(pilot, *["right"] * 8, "s", "s")  # samples/s, then reversed
        await press(pilot, "m")
    lines = (zbench_home / "zbench-results.md").read_text().splitlines()
    assert lines == [
        "md|resnet50|torch|2|4398.0",
        "md|resnet50|torch|1|2259.0",
        "md|vgg16|torch|1|890.0",
        "md|unet2d|torch|1|140.0",
    ]


async def test_export_to_a_chosen_path_as_csv(zbench_home: Path) -> None:
    app = make_app()
    target = zbench_home / "out" / "r.csv"
    target.parent.mkdir()
    async with run_and_press(app, "r", "slash", *"tf", "enter", "e", size=(80, 24)) as pilot:
        assert isinstance(app.screen, ExportScreen)
        await press(pilot, "enter", "down", "enter")  # Markdown -> CSV
        path = app.screen.query_one("#path", Input)
        path.value = str(target)
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, ResultsScreen)
    assert target.read_text().splitlines() == [
        "csv|resnet50|tf|1|1890.0",
        "csv|resnet50|tf|2|2010.0",
        "csv|fasterrcnn|tf|1|61.0",
    ]


async def test_export_over_a_database_is_refused_without_asking(zbench_home: Path) -> None:
    import sqlite3

    target = zbench_home / "runs.db"
    sqlite3.connect(target).execute("create table t (x)").connection.close()
    before = target.read_bytes()
    app = make_app()
    async with run_and_press(app, "r", "e", size=(80, 24)) as pilot:
        app.screen.query_one("#path", Input).value = str(target)
        await press(pilot, "ctrl+s")
        # No "exists. Overwrite it?" to say yes to by reflex: refused, the table still shown.
        assert isinstance(app.screen, ResultsScreen)
        await settle(pilot)
    assert target.read_bytes() == before


async def test_export_from_the_command_palette(zbench_home: Path) -> None:
    app = make_app()
    async with run_and_press(app, "r", "ctrl+p", *"export: json", size=(160, 50)) as pilot:
        await pilot.pause(0.3)
        await press(pilot, "enter")
    assert len((zbench_home / "zbench-results.json").read_text().splitlines()) == 8


async def test_results_screen_prints_the_markdown_exports_cells(zbench_home: Path) -> None:
    """One column table: the TUI shows each row's cells exactly as the Markdown export writes them
    (`BF16`, not `bf16`; `n/a`, not `-`)."""
    from zbench.results.api import ResultRow
    from zbench.results.export import render_md

    row = ResultRow(
        "resnet50",
        "torch",
        "train",
        1,
        "NVIDIA H200",
        "bf16",
        256,
        3901.0,
        gpu_util=None,
        run_id=7,
        job_id=7,
        created=1.0,
    )
    app = make_app()
    app.services.results = [row]  # type: ignore[attr-defined]
    async with run_and_press(app, "r", size=(200, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        shown = [str(c) for c in table.get_row_at(0)]
    md_line = next(line for line in render_md([row]).splitlines() if line.startswith("| 7 |"))
    md_cells = [c.strip() for c in md_line.strip("|").split("|")]
    assert shown == md_cells[: len(shown)]  # the run's number first, as in Markdown
    assert "BF16" in shown and "n/a" in shown


async def test_quick_exports_never_overwrite(zbench_home: Path) -> None:
    first = zbench_home / "zbench-results.md"
    first.write_text("mine\n")
    app = make_app()
    async with run_and_press(app, "r", "m", size=(160, 50)) as pilot:
        await app.workers.wait_for_complete()
        await press(pilot, "m")
        await app.workers.wait_for_complete()
    assert first.read_text() == "mine\n"
    assert len((zbench_home / "zbench-results-2.md").read_text().splitlines()) == 8
    assert (zbench_home / "zbench-results-3.md").exists()


async def test_export_to_an_existing_file_asks_first(zbench_home: Path) -> None:
    from zbench.tui.screens.confirm import ConfirmScreen

    target = zbench_home / "r.md"
    target.write_text("mine\n")
    app = make_app()
    async with run_and_press(app, "r", size=(160, 50)) as pilot:
        for answer, expect_mine in (("n", True), ("y", False)):
            await press(pilot, "e")
            app.screen.query_one("#path", Input).value = str(target)
            await press(pilot, "ctrl+s")
            assert isinstance(app.screen, ConfirmScreen)
            assert "exists. Overwrite it?" in str(app.screen.prompt)
            await press(pilot, answer)
            await app.workers.wait_for_complete()
            assert (target.read_text() == "mine\n") is expect_mine


async def test_export_to_a_folder_writes_into_it(zbench_home: Path) -> None:
    """A folder as the path: the export goes in it under a free name, without asking. It used to
    ask "<folder> exists. Overwrite it?" and, on yes, fail with "[Errno 21] Is a directory"."""
    folder = zbench_home / "out"
    folder.mkdir()
    (folder / "zbench-results.md").write_text("mine\n")
    app = make_app()
    async with run_and_press(app, "r", "slash", *"tf", "enter", "e", size=(160, 50)) as pilot:
        app.screen.query_one("#path", Input).value = str(folder)
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, ResultsScreen)
        await settle(pilot)
        [note] = app._notifications
        assert note.message == f"wrote 3 rows to {folder / 'zbench-results-2.md'}"
    assert (folder / "zbench-results.md").read_text() == "mine\n"
    assert (folder / "zbench-results-2.md").read_text().splitlines()[0] == "md|resnet50|tf|1|1890.0"


async def test_a_missing_value_sorts_last_both_ways(zbench_home: Path) -> None:
    """GPU util sorted down: the run without it (n/a) stays at the bottom; it came first."""
    app = make_app()
    async with run_and_press(app, "r", *["right"] * 9, size=(160, 50)) as pilot:
        for presses, arrow in ((1, "↑"), (1, "↓")):
            await press(pilot, *["s"] * presses)
            assert app.screen.sub_title.endswith(f"sorted by GPU util % {arrow}")
            assert isinstance(app.screen, ResultsScreen)
            assert [r.workload for r in app.screen.shown][-1] == "fasterrcnn"  # gpu_util None
            assert app.screen.shown[0].gpu_util == 95.0


async def test_ctrl_r_reloads_the_results(zbench_home: Path) -> None:
    from .fakes import FakeServices

    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "r", size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, ResultsScreen) and len(screen.shown) == 8
        services.results = services.results[:3]
        await press(pilot, "ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.shown) == 3 and "3 of 3 rows" in screen.sub_title


async def test_rows_that_differ_in_image_size_show_it(zbench_home: Path) -> None:
    from zbench.results.api import ResultRow

    from .fakes import FakeServices

    def row(run: int, size: int) -> ResultRow:
        config = {"device": "cpu", "image_size": size, "steps": 3}
        return ResultRow(
            "resnet50", "torch", "train", 0, None, "fp32", 8, 40.0 + run, run_id=run, config=config
        )

    app = make_app(services=FakeServices(results=[row(1, 32), row(2, 48)]))
    async with run_and_press(app, "r", size=(160, 50)):
        assert isinstance(app.screen, ResultsScreen)
        table = app.screen.query_one(DataTable)
        titles = [str(c.label) for c in table.ordered_columns]
        assert "Image size" in titles
        at = titles.index("Image size")
        assert [str(table.get_row_at(i)[at]) for i in range(2)] == ["32", "48"]


async def test_a_filter_that_hides_every_row_exports_nothing(zbench_home: Path) -> None:
    """An export of no rows wrote a file with an empty table, as if it held runs."""
    app = make_app()
    notes: list[str] = []
    async with run_and_press(app, "r", "slash", *"no such model", "enter", size=(160, 50)) as pilot:
        assert isinstance(app.screen, ResultsScreen) and not app.screen.shown
        app.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        app.screen.notify = app.notify  # type: ignore[method-assign]
        await press(pilot, "m", "v", "j")
        await app.workers.wait_for_complete()
    assert not list(zbench_home.glob("zbench-results*"))
    assert notes == ["no rows to export"] * 3


async def test_the_export_format_follows_the_name_typed(zbench_home: Path) -> None:
    """A path typed as r.csv with the format left at Markdown wrote Markdown into r.csv (the CLI's
    -o r.csv writes CSV). The format follows the name, and the picker shows it."""
    from textual.widgets import Select

    app = make_app()
    async with run_and_press(app, "r", "slash", *"tf", "enter", "e", size=(80, 24)) as pilot:
        path = app.screen.query_one("#path", Input)
        path.focus()
        await press(pilot, "ctrl+u", *"r.csv")  # the field cleared, then the name typed
        assert app.screen.query_one("#fmt", Select).value == "csv"
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, ResultsScreen)
    assert (zbench_home / "r.csv").read_text().splitlines()[0] == "csv|resnet50|tf|1|1890.0"


async def test_an_export_path_that_cannot_be_looked_at_is_refused_in_a_line(
    zbench_home: Path,
) -> None:
    """~nosuchuser/r.md (a typo for ~/) or a name longer than the file system allows ended the
    whole app with a traceback when the dialog's path was checked; each is one error line now."""
    app = make_app()
    async with run_and_press(app, "r", size=(80, 24)) as pilot:
        for path, reason in (
            ("~nosuchuser/r.md", "Could not determine home directory"),
            ("r" * 300 + ".md", "File name too long"),
        ):
            await press(pilot, "e")
            app.screen.query_one("#path", Input).value = path
            await press(pilot, "ctrl+s")
            assert isinstance(app.screen, ResultsScreen)
            note = list(app._notifications)[-1]
            assert note.severity == "error" and note.message.startswith("export failed: ")
            assert reason in note.message
        assert app.is_running
    assert not list(zbench_home.glob("*.md"))


async def test_an_empty_results_table_says_why(zbench_home: Path) -> None:
    """With no results the screen showed only the column headers; a filter that hides every row
    looked the same."""
    from textual.widgets import Static

    from .fakes import FakeServices

    services = FakeServices(results=[])
    app = make_app(services=services)
    async with run_and_press(app, "r", size=(160, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        empty = app.screen.query_one("#results-empty", Static)
        assert empty.display and "No results yet: l launches" in str(empty.render())
        await press(pilot, "l")  # the key it names does what it says
        assert type(app.screen).__name__ == "LaunchScreen"
    app = make_app()
    async with run_and_press(app, "r", size=(160, 50)) as pilot:
        screen = app.screen
        empty = screen.query_one("#results-empty", Static)
        assert not empty.display
        await press(pilot, "slash", *"[nomatch]", "enter")
        assert empty.display
        assert str(empty.render()) == "No row matches the filter '[nomatch]': / edits it."
        await press(pilot, "slash", *["backspace"] * 9, "enter")
        assert not empty.display and len(screen.shown) == 8


async def test_sorting_by_gpus_orders_the_counts_as_numbers(zbench_home: Path) -> None:
    """The GPUs column sorted as text put 16 before 2; a run over machines (2x4) sorts as its 8."""
    from zbench.results.api import ResultRow

    from .fakes import FakeServices

    def row(run: int, gpus: int, nodes: int = 1) -> ResultRow:
        result = {"nodes": [{"gpus": gpus // nodes}] * nodes} if nodes > 1 else {}
        return ResultRow(
            "resnet50",
            "torch",
            "train",
            gpus,
            "NVIDIA H200",
            "bf16",
            256,
            1000.0 * gpus,
            run_id=run,
            result=result,
        )

    rows = [row(1, 16), row(2, 2), row(3, 8, nodes=2), row(4, 1), row(5, 4)]
    app = make_app(services=FakeServices(results=rows))
    async with run_and_press(app, "r", size=(200, 50)) as pilot:
        await press(pilot, *["right"] * 4, "s")
        table = app.screen.query_one(DataTable)
        at = [str(c.label) for c in table.ordered_columns].index("GPUs")
        shown = [str(table.get_row_at(i)[at]) for i in range(table.row_count)]
    assert shown == ["1", "2", "4", "2x4", "16"]


def test_text_cells_sort_with_their_numbers_as_numbers() -> None:
    from zbench.tui.screens.results import sorted_rows

    col = ("Setup", lambda r: r, str)
    got = sorted_rows(["image 128", None, "image 64", "Image 32"], col, reverse=False)
    assert got == ["Image 32", "image 64", "image 128", None]
