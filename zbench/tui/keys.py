"""The app-wide key bindings, apart from the app so that the help screen lists them without
importing the app (which imports the screens)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

APP_BINDINGS: list[BindingType] = [
    Binding("q", "quit", "Quit", id="app.quit"),
    Binding("d", "dashboard", "Dashboard", id="app.dashboard"),
    Binding("l", "launch", "Launch", id="app.launch"),
    Binding("r", "results", "Results", id="app.results"),
    Binding("p", "processes", "Processes", id="app.processes"),
    Binding("ctrl+r", "refresh", "Refresh now", id="app.refresh", show=False),
    Binding("question_mark", "help", "Help", id="app.help", key_display="?"),
]
# Actions on the current screen's selected job: off where none is (greyed in the Footer by the
# app's check_action, left out of the command palette).
JOB_ACTIONS = frozenset({"job_detail", "cancel_job"})
