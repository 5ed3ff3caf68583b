"""Two parts of the app kept apart from app.py: signalling GPU processes, and remembered state.

Both are mixed into ``ZbenchApp`` and use its ``services``, ``feed``, ``runners`` and ``notify``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message

from zbench.settings import State, save_state

if TYPE_CHECKING:  # annotations only: the snapshot classes are built when the feed opens
    from zbench.telemetry.snapshot import GpuProcess


class ProcessActionsMixin:
    """The app's GPU-process actions: ask, then send TERM (KILL once TERM was sent) to a process."""

    services: Any
    feed: Any
    runners: dict[int, int]

    @dataclass
    class Signalled(Message):
        """A signal reached a GPU process."""

        pid: int
        name: str

    def signal_process(self, proc: GpuProcess, name: str) -> None:
        """Ask, then send TERM (or KILL, once TERM was sent) to a GPU process."""
        from .screens.confirm import ConfirmScreen

        if getattr(self.feed, "replay", False):
            self.notify(
                "these processes are from a recorded trace, not this machine: nothing to signal",
                severity="warning",
            )
            return
        job = self.runners.get(proc.pid) or (
            self.runners.get(proc.pgid) if isinstance(proc.pgid, int) else None
        )
        whose = f", job #{job}" if job is not None else ""
        hint = " (cancel the job with c on the dashboard to keep its record)" if job else ""
        prompt = f"Send {name} to pid {proc.pid} ({proc.user or '?'}{whose}: {proc.name})?{hint}"

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._signal(proc.pid, name)

        self.push_screen(ConfirmScreen(prompt), done)

    @work(thread=True, group="signal", exit_on_error=False)
    def _signal(self, pid: int, name: str) -> None:
        try:
            self.services.signal_process(pid, name)
        except Exception as exc:  # SignalRefused says why in one line
            self.post_message(
                self.ServiceDone(  # type: ignore[attr-defined]
                    f"not sent: {exc}", error=True
                )
            )
            return
        self.post_message(self.Signalled(pid, name))

    def on_process_actions_mixin_signalled(self, message: Signalled) -> None:
        from .screens.processes import ProcessesScreen

        for screen in self.screen_stack:
            if isinstance(screen, ProcessesScreen) and message.name == "TERM":
                screen.termed.add(message.pid)
        again = " (k again sends KILL)" if message.name == "TERM" else ""
        self.notify(f"sent {message.name} to pid {message.pid}{again}")


class RememberMixin:
    """The app's remembered state (theme, launch form, sorts, filters), saved as it changes."""

    state: State
    _state_file: Path | None

    def _theme_changed(self, theme: object) -> None:
        name = getattr(theme, "name", None)
        if isinstance(name, str) and name != self.state.theme:
            self.remember(theme=name)

    def remember(
        self,
        *,
        theme: str | None = None,
        launch: dict[str, str] | None = None,
        process_sort: int | None = None,
        process_filter: str | None = None,
        results: dict[str, object] | None = None,
    ) -> None:
        """Change what is remembered and write it back (in a worker: never on the UI thread)."""
        if theme is not None:
            self.state.theme = theme
        if launch is not None:
            self.state.launch = dict(launch)
        if process_sort is not None:
            self.state.processes["sort"] = process_sort
        if process_filter is not None:
            self.state.processes["filter"] = process_filter
        if results is not None:
            self.state.results = dict(results)
        if self._state_file is not None:
            self._save_state(State.from_json(self.state.to_json()))

    @work(thread=True, exclusive=True, group="state", exit_on_error=False)
    def _save_state(self, snapshot: State) -> None:
        try:
            save_state(snapshot, self._state_file)
        except OSError as exc:
            self.post_message(self.ServiceDone(f"settings not saved: {exc}", error=True))
