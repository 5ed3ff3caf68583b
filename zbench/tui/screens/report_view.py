"""The written report in Textual's Markdown viewer (tables and headings; images stay in report.html)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header, MarkdownViewer


class ReportViewScreen(Screen[None]):
    """The written report.md in a Markdown viewer, its table of contents on ``t``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="report.back"),
        Binding("t", "toggle_toc", "Contents", id="report.toc"),
    ]

    def __init__(self, markdown_path: Path) -> None:
        super().__init__()
        self.markdown_path = markdown_path

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        # Images are links to PNGs a terminal cannot show; the HTML next to the file has them.
        yield MarkdownViewer(
            self.markdown_path.read_text(encoding="utf-8"),
            show_table_of_contents=False,
            id="report",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"report: {self.markdown_path} (images in report.html)"
        self.query_one(MarkdownViewer).focus()

    def action_toggle_toc(self) -> None:
        viewer = self.query_one(MarkdownViewer)
        viewer.show_table_of_contents = not viewer.show_table_of_contents
