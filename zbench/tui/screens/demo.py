"""A demo job's live view: the board, the learning curve and the key figures, from its events file.

The view is rebuilt from the events file on every visit (leaving and coming back, or a new SSH
session, resumes it): a thread worker tails the file and posts the new events; the handler renders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from zbench.contract.protocol import EventTail

from ..format import escape
from ..widgets.board import LearningCurve, SnakeBoard

POLL_S = 0.25


@dataclass
class DemoView:
    """What the screen shows, folded from events (pure: tests feed it events directly)."""

    title: str = "demo"
    config: dict[str, Any] = field(default_factory=dict)
    phase: str = "setup"
    board: dict[str, Any] | None = None
    curve: list[dict[str, Any]] = field(default_factory=list)
    latest: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    env_rate: float | None = None

    def apply(self, events: list[dict[str, Any]]) -> None:
        for ev in events:
            kind = ev.get("type")
            if kind == "start":
                self.title = str(ev.get("title") or ev.get("demo") or "demo")
                self.config = dict(ev.get("config") or {})
            elif kind == "phase":
                self.phase = str(ev.get("phase"))
                if ev.get("env_steps_per_s") is not None:
                    self.env_rate = float(ev["env_steps_per_s"])
            elif kind == "frame" and isinstance(ev.get("board"), dict):
                self.board = ev["board"]
                self.latest.update({k: ev.get(k) for k in ("t_s", "mean_score", "best_score")})
            elif kind == "progress":
                point = {k: ev.get(k) for k in ("t_s", "env_steps", "mean_score", "best_score")}
                point["steps_per_s"] = ev.get("samples_per_s")
                self.curve.append(point)
                self.latest.update(point, games=ev.get("games"))
            elif kind == "result":
                self.result = ev
            elif kind == "error":
                self.error = ev

    def figures(self) -> str:
        c, f = self.config, self.latest
        faithful = " faithful" if c.get("faithful") else ""
        lines = [
            f"[b]{escape(self.title)}[/b]",
            f"{c.get('algo', '?')}{faithful}  board {c.get('board', '?')}  "
            f"envs {c.get('envs') or 'default'}  {c.get('device', '')}",
            f"phase [b]{self.phase}[/b]  t {_num(f.get('t_s'))} s",
            f"score now {_num((self.board or {}).get('score'))}  "
            f"mean {_num(f.get('mean_score'))}  best [b]{_num(f.get('best_score'))}[/b]",
            f"env steps {_num(f.get('env_steps'))}  steps/s {_num(f.get('steps_per_s'))}",
            f"games {_num(f.get('games'))}  env alone {_num(self.env_rate)} steps/s",
        ]
        if self.result:
            beat = self.result.get("time_to_beat_review_s")
            lines.append(f"[$success]done[/]: beat the review's 8 after {_num(beat)} s")
        if self.error:
            lines.append(f"[$error]{escape(str(self.error.get('kind')))}: "
                         f"{escape(str(self.error.get('message')))}[/]")  # fmt: skip
        return "\n".join(lines)


def _num(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(str(value))


class DemoScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="demo.back"),
    ]
    DEFAULT_CSS = """
    DemoScreen #demo-body { height: 1fr; }
    DemoScreen #demo-side { width: 1fr; }
    DemoScreen #demo-figures { height: auto; padding: 0 1; }
    DemoScreen LearningCurve { height: 1fr; min-height: 8; }
    """

    class Events(Message):
        def __init__(self, events: list[dict[str, Any]]) -> None:
            super().__init__()
            self.events = events

    def __init__(self, job_id: int | None, events_path: str | Path | None) -> None:
        super().__init__()
        self.selected_job_id = job_id
        self.view = DemoView()
        self.tail = EventTail(Path(events_path)) if events_path else None
        self._polling = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="demo-body"):
            yield SnakeBoard(id="demo-board")
            with Vertical(id="demo-side"):
                yield Static(self.view.figures(), id="demo-figures")
                yield LearningCurve()
        yield Footer()

    def on_mount(self) -> None:
        self.poll()
        self.set_interval(POLL_S, self.poll)

    def poll(self) -> None:
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
        if self.view.board is not None:
            self.query_one(SnakeBoard).show(self.view.board)
        self.query_one("#demo-figures", Static).update(self.view.figures())
        if any(e.get("type") == "progress" for e in message.events):
            self.query_one(LearningCurve).show(self.view.curve)
