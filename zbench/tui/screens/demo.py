"""A demo job's live view from its events file: the Snake board, motion's source | driving | result
panels, or tracking's image with boxes; the learning or loss curve; the key figures.

The view is rebuilt from the events file on every visit (leaving and coming back, or a new SSH
session, resumes it): a thread worker tails the file and posts the new events; the handler renders.
Which widgets it shows is the demo table's ``view`` (``zbench.contract.demos``) (snake, pixels, boxes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Label

from zbench.contract.demos import known
from zbench.contract.protocol import EventTail
from zbench.jobs.states import FINISHED

from ..demo_view import DemoView
from ..widgets.board import LearningCurve, LossCurve, SnakeBoard
from ..widgets.fields import Fields, rows_of
from ..widgets.pixels import PixelView

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo  # the one job type

__all__ = ["DemoScreen", "DemoView"]

POLL_S = 0.25
PANELS = ("source", "driving", "result")
PANEL_TITLES = {"image": "tracked frame, a box per track in its id's colour"}  # the tracker's
TRAIN_PANELS = {"result": "prediction"}  # training frames name their third panel so


class DemoScreen(Screen[None]):
    """A demo job's live view: its board or frames, its figures, its learning or loss curve."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="demo.back"),
    ]
    DEFAULT_CSS = """
    DemoScreen #demo-body { height: 1fr; }
    DemoScreen #demo-side { width: 1fr; }
    DemoScreen #demo-figures { height: auto; padding: 0 1; }
    DemoScreen LearningCurve, DemoScreen LossCurve { height: 1fr; min-height: 8; }
    DemoScreen #demo-panels { width: 1fr; height: auto; max-height: 53%; padding: 0 1; }
    DemoScreen #demo-figures.-pixels { width: 46; height: 1fr; overflow-y: auto; }
    DemoScreen .demo-panel { width: auto; height: auto; margin-right: 1; }
    DemoScreen .demo-panel Label { color: $text-muted; }
    """

    class Events(Message):
        def __init__(self, events: list[dict[str, Any]]) -> None:
            super().__init__()
            self.events = events

    def __init__(
        self, job_id: int | None, events_path: str | Path | None, demo: str = "snake"
    ) -> None:
        super().__init__()
        self.selected_job_id = job_id
        entry = known(demo)
        self.kind = entry.view if entry is not None else "snake"
        self.view = DemoView(demo=demo)
        self.tail = EventTail(Path(events_path)) if events_path else None
        self._polling = False

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        if self.kind == "snake":
            with Horizontal(id="demo-body"):
                yield SnakeBoard(id="demo-board")
                with Vertical(id="demo-side"):
                    yield Fields(id="demo-figures")
                    yield LearningCurve()
        else:  # pictures on top, figures and the loss curve below
            with Vertical(id="demo-body"):
                with Horizontal(id="demo-panels"):
                    for name in PANELS if self.kind == "pixels" else ("image",):
                        with Vertical(classes="demo-panel"):
                            yield Label(PANEL_TITLES.get(name, name), id=f"label-{name}")
                            yield PixelView(id=f"panel-{name}")
                with Horizontal(id="demo-side"):
                    yield Fields(id="demo-figures", classes="-pixels")
                    yield LossCurve()
        yield Footer()

    def on_mount(self) -> None:
        job = f" · job {self.selected_job_id}" if self.selected_job_id is not None else ""
        self.sub_title = f"{self.view.demo or 'snake'} demo{job}"  # as the job view: "job 3"
        self._show_figures()
        self.refresh_jobs(getattr(self.app, "jobs", ()))
        self.poll()
        self.set_interval(POLL_S, self.poll)

    def refresh_jobs(self, jobs: Sequence[JobInfo]) -> None:
        """The app's jobs poll: once the job has ended, the view says so (and estimates no time
        left), whether or not its runner wrote an error event."""
        job = next((j for j in jobs if j.id == self.selected_job_id), None)
        if job is None or job.state not in FINISHED or self.view.ended_as is not None:
            return
        self.view.ended_as, self.view.ended_why = str(job.state), job.reason
        self._show_figures()

    def poll(self) -> None:
        if self.tail is None and self.selected_job_id is not None:
            # A queued job has no events file yet: the supervisor names it when the job starts.
            job = self.app.job(self.selected_job_id)  # type: ignore[attr-defined]
            if job is not None and job.events_path:
                self.tail = EventTail(Path(job.events_path))
        if self.tail is not None and not self._polling:  # polls never overlap
            self._polling = True
            self._read()

    @work(thread=True, exclusive=True, exit_on_error=False, group="demo-events")
    def _read(self) -> None:
        assert self.tail is not None
        events: list[dict[str, Any]] = []
        try:
            events = self.tail.poll()
        finally:
            self.post_message(self.Events(events))

    def on_demo_screen_events(self, message: Events) -> None:
        self._polling = False
        if not message.events:
            return
        self.view.apply(message.events)
        if self.kind == "snake" and self.view.board is not None:
            self.query_one(SnakeBoard).show(self.view.board)
        elif self.view.frame is not None and any(e.get("type") == "frame" for e in message.events):
            self._show_frame(self.view.frame)
        self._show_figures()
        if any(e.get("type") == "progress" for e in message.events):
            if self.kind == "snake":
                self.query_one(LearningCurve).show(self.view.curve)
            else:
                self.query_one(LossCurve).show(self.view.curve)

    def on_resize(self) -> None:
        if self.kind != "snake" and self.view.frame is not None:
            self._show_frame(self.view.frame)  # the panels' scale follows the screen's width

    def _show_figures(self) -> None:
        """The view's figures, each line wrapped between its fields (a time left read "~0:00:04"
        at one line's end and "left" at the next one's start)."""
        self.query_one("#demo-figures", Fields).show(rows_of(self.view.figures()))

    def _show_frame(self, frame: dict[str, Any]) -> None:
        views = list(self.query(PixelView))
        fit = (self.size.width - 2) // max(len(views), 1) - 1  # the panels' padding and margins
        for view in views:
            view.fit = max(fit, 8)
        if self.kind != "pixels":
            self.query_one("#panel-image", PixelView).show_event(frame)
            return
        panels = frame.get("panels") or {}
        for name in PANELS:
            key = name if name in panels else TRAIN_PANELS.get(name, name)
            self.query_one(f"#label-{name}", Label).update(key)
            self.query_one(f"#panel-{name}", PixelView).show_event(frame, key)
