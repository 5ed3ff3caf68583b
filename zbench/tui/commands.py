"""Command-palette entries, namespaced by subject ("job: cancel", "export: markdown").

Each entry runs the same action as its key, so the palette and the Footer never disagree.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from .keys import JOB_ACTIONS

# (title, help, action, the screen class name it needs or None for anywhere)
ENTRIES: tuple[tuple[str, str, str, str | None], ...] = (
    ("view: dashboard", "GPUs, host and jobs", "app.dashboard", None),
    ("view: results", "The results table and charts", "app.results", None),
    ("view: GPU processes", "Who holds which GPU; sort, filter, signal", "app.processes", None),
    ("process: sort", "Sort by the next column", "screen.sort", "ProcessesScreen"),
    ("process: filter", "Filter by user, command, PID or job", "screen.filter", "ProcessesScreen"),
    (
        "process: signal",
        "TERM, then KILL, the selected process (asks first)",
        "screen.signal",
        "ProcessesScreen",
    ),
    ("view: help", "Every key", "app.help", None),
    ("job: launch", "Launch benchmarks or a suite", "app.launch", None),
    (  # the dashboard's: a job's detail or demo view is already that job's (Enter is there too)
        "job: open detail",
        "Log, phase and throughput of the selected job",
        "app.job_detail",
        "DashboardScreen",
    ),
    ("job: cancel", "Cancel the selected job (asks first)", "app.cancel_job", None),
    ("job: refresh", "Poll jobs and telemetry now", "app.refresh", None),
    (
        "export: markdown",
        "Write the shown results as Markdown",
        "screen.export('md')",
        "ResultsScreen",
    ),
    ("export: csv", "Write the shown results as CSV", "screen.export('csv')", "ResultsScreen"),
    ("export: json", "Write the shown results as JSON", "screen.export('json')", "ResultsScreen"),
    ("export: to file…", "Choose the format and path", "screen.export_to", "ResultsScreen"),
    (
        "export: report",
        "Write report.md + report.html and view it",
        "screen.report",
        "ResultsScreen",
    ),
    ("results: sort", "Sort by the column under the cursor", "screen.sort", "ResultsScreen"),
    ("results: filter", "Filter the rows", "screen.filter", "ResultsScreen"),
    ("results: charts", "Show or hide the charts", "screen.toggle_charts", "ResultsScreen"),
)


class ZbenchCommands(Provider):
    """The command palette's zbench entries: the app's actions, and the current screen's."""

    def _entries(self) -> list[tuple[str, str, str]]:
        here = type(self.screen).__name__
        job = getattr(self.screen, "selected_job_id", None)  # the palette's own screen is on top
        return [
            (t, h, a)
            for t, h, a, needs in ENTRIES
            if (needs is None or needs == here)
            and (job is not None or a.removeprefix("app.") not in JOB_ACTIONS)
        ]

    async def _run(self, action: str) -> None:
        await self.app.run_action(action, self.screen)

    async def discover(self) -> Hits:
        for title, help_text, action in self._entries():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(title), partial(self._run, action), help=help_text
                )
