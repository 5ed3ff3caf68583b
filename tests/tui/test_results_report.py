"""Results: `w` writes the report of exactly the shown rows and opens it in the Markdown viewer."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Markdown, MarkdownViewer

from zbench.tui.screens.report_view import ReportViewScreen
from zbench.tui.screens.results import ResultsScreen

from .conftest import make_app
from .helpers import press, run_and_press, settle


async def test_write_report_of_the_shown_rows_and_view_it(zbench_home: Path) -> None:
    app = make_app()
    async with run_and_press(app, "r", "slash", *"tf", "enter", "w", size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ReportViewScreen)
        viewer = app.screen.query_one(MarkdownViewer)
        assert isinstance(viewer.document, Markdown)
        assert viewer.document.source.startswith("# zbench report")
        await press(pilot, "escape")
        assert isinstance(app.screen, ResultsScreen)
    lines = (zbench_home / "zbench-report" / "report.md").read_text().splitlines()
    assert lines[2:] == ["- resnet50 tf x1", "- resnet50 tf x2", "- fasterrcnn tf x1"]


async def test_report_from_the_command_palette(zbench_home: Path) -> None:
    app = make_app()
    async with run_and_press(app, "r", "ctrl+p", *"export: report", size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        await press(pilot, "enter")
        await settle(pilot)
        assert isinstance(app.screen, ReportViewScreen)


async def test_a_second_report_keeps_the_first(zbench_home: Path) -> None:
    """`w` twice (another filter the second time): each report has its own folder; the second
    used to overwrite the first's report.md and report.html without a word."""
    app = make_app()
    async with run_and_press(app, "r", "slash", *"tf", "enter", "w", size=(120, 40)) as pilot:
        await press(pilot, "escape", "slash", "ctrl+u", *"vgg16", "enter", "w")
        assert isinstance(app.screen, ReportViewScreen)
        assert "zbench-report-2" in str(app.screen.sub_title)
    first = (zbench_home / "zbench-report" / "report.md").read_text().splitlines()
    second = (zbench_home / "zbench-report-2" / "report.md").read_text().splitlines()
    assert first[2:] == ["- resnet50 tf x1", "- resnet50 tf x2", "- fasterrcnn tf x1"]
    assert second[2:] == ["- vgg16 torch x1", "- vgg16 torch x1"]
