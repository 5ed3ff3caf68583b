"""The zbench Textual app: wiring between the telemetry feed, the services and the screens.

Threads: the telemetry Sampler samples in its own thread and queues snapshots; the UI drains the queue
on a timer. Everything that may block (opening NVML, SQLite, files) runs in thread workers that post a
message; the message handlers change widgets. Polls never overlap: a poll is skipped while one runs.
The first workers start once the dashboard's first frame is painted (see ``on_mount``).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import App
from textual.binding import BindingType
from textual.message import Message

from zbench.settings import Config, SettingsError, State, config_path, save_state
from zbench.textfit import plural

from .app_mixins import ProcessActionsMixin, RememberMixin
from .commands import ZbenchCommands
from .feed import Feed
from .keys import APP_BINDINGS, JOB_ACTIONS
from .screens.dashboard import DashboardScreen
from .services import FINISHED, LaunchRequest, NothingToRun, Services
from .state import TelemetryState

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo  # the one job type

JOBS_MIN_INTERVAL = 1.0  # the jobs table polls SQLite at most once a second


class ZbenchApp(RememberMixin, ProcessActionsMixin, App[int]):
    """The zbench TUI: the dashboard and its screens, fed live telemetry, jobs and results."""

    CSS_PATH = Path(__file__).with_name("zbench.tcss")  # absolute: subclasses live elsewhere
    TITLE = "zbench"
    COMMANDS = App.COMMANDS | {ZbenchCommands}
    BINDINGS: ClassVar[list[BindingType]] = APP_BINDINGS

    @dataclass
    class FeedReady(Message):
        feed: Feed | None
        error: str | None = None

    @dataclass
    class JobsLoaded(Message):
        jobs: Sequence[JobInfo]
        error: str | None = None
        runners: dict[int, int] | None = None  # runner pid -> job id of the running jobs

    @dataclass
    class SuitesLoaded(Message):
        names: list[str]

    @dataclass
    class ServiceDone(Message):
        """A submit or cancel finished: a notification to show, and whether it failed."""

        text: str
        error: bool = False

    def __init__(
        self,
        services: Services,
        *,
        feed: Feed | None = None,
        feed_factory: Callable[[], Feed] | None = None,
        interval: float | None = 0.5,
        clock: Callable[[], float] = time.time,
        state: State | None = None,
        state_file: Path | None = None,
    ) -> None:
        """``interval=None`` disables the timers (tests step the app by hand); ``clock`` gives the
        time used for elapsed times, so tests can freeze it. ``state`` is what was remembered
        (theme, launch form, sort and filter); with ``state_file`` changes are written back."""
        super().__init__()
        self.state = state or State()
        self._state_file = state_file
        if self.state.theme and self.state.theme in self.available_themes:
            self.theme = self.state.theme
        self.services = services
        self.feed = feed
        self._feed_factory = feed_factory
        self.interval = interval
        self.clock = clock
        self.telemetry = TelemetryState()
        self.jobs: Sequence[JobInfo] = ()
        self.runners: dict[int, int] = {}
        self.suites: list[str] = []
        self._jobs_busy = False
        self._ticking = False
        self._jobs_error: str | None = None

    # --- start-up and polling ------------------------------------------------------------------

    async def on_mount(self) -> None:
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        await self.push_screen(DashboardScreen())
        if self.feed is not None:
            await self._use_feed(self.feed)
        elif self._feed_factory is not None:
            self.screen_dashboard.show_notice("starting telemetry…")
            self.call_after_refresh(self._open_feed)
        # The workers start once the first frame is painted: their imports (the telemetry backend,
        # the store) and their set-up (NVML, SQLite) would otherwise hold the interpreter lock
        # while the first frame is laid out.
        self.call_after_refresh(self._load_suites)
        self.call_after_refresh(self.poll_jobs)
        if self.interval:
            self.set_interval(self.interval, self.tick)
            self.set_interval(max(self.interval, JOBS_MIN_INTERVAL), self.poll_jobs)

    @property
    def screen_dashboard(self) -> DashboardScreen:
        return next(s for s in self.screen_stack if isinstance(s, DashboardScreen))

    @work(thread=True, exclusive=True, group="feed", exit_on_error=False)
    def _open_feed(self) -> None:
        assert self._feed_factory is not None
        try:
            self.post_message(self.FeedReady(self._feed_factory()))
        except Exception as exc:  # shown to the user; the dashboard keeps the jobs table
            self.post_message(self.FeedReady(None, f"telemetry unavailable: {exc}"))

    async def on_zbench_app_feed_ready(self, message: FeedReady) -> None:
        if message.feed is None:
            self.screen_dashboard.show_notice(message.error)
            return
        await self._use_feed(message.feed)

    async def _use_feed(self, feed: Feed) -> None:
        self.feed = feed
        self.screen_dashboard.show_notice(feed.notice)
        await self.tick()

    async def tick(self) -> None:
        """Drain new snapshots (never blocks: the sampler thread only fills a queue). A tick that
        comes while the last one still awaits (mounting GPU panels) is skipped."""
        if not self.is_running:  # exiting: the screens are being pruned, nothing to draw into
            return
        if self._ticking or self.feed is None or not self.telemetry.extend(self.feed.drain()):
            return
        self._ticking = True
        try:
            for screen in list(self.screen_stack):
                refresh = getattr(screen, "refresh_telemetry", None)
                if refresh is not None:
                    await refresh(self.telemetry)
        finally:
            self._ticking = False

    def poll_jobs(self) -> None:
        if self._jobs_busy:  # the last poll has not returned: skip this tick
            return
        self._jobs_busy = True
        self._load_jobs()

    @work(thread=True, group="jobs", exit_on_error=False)
    def _load_jobs(self) -> None:
        try:
            jobs = list(self.services.list_jobs())
            try:
                runners = dict(self.services.runner_pids())
            except Exception:  # the process table then names no jobs; the jobs table still works
                runners = {}
            self.post_message(self.JobsLoaded(jobs, runners=runners))
        except Exception as exc:
            self.post_message(self.JobsLoaded((), f"jobs unavailable: {exc}"))

    def on_zbench_app_jobs_loaded(self, message: JobsLoaded) -> None:
        self._jobs_busy = False
        if not self.is_running:  # a poll that returns as the app exits (see tick)
            return
        if message.error:
            if message.error != self._jobs_error:  # say it once, not on every poll
                self.notify(message.error, severity="error", timeout=10)
            self._jobs_error = message.error
            return
        self._jobs_error = None
        selected = self.focused_job_id
        self.jobs = message.jobs
        if message.runners is not None:
            self.runners = message.runners
        for screen in self.screen_stack:
            refresh = getattr(screen, "refresh_jobs", None)
            if refresh is not None:
                refresh(self.jobs)
        if (selected is None) != (self.focused_job_id is None):
            self.refresh_bindings()  # the job keys (check_action) turn on or off: redraw the Footer

    @work(thread=True, group="suites", exit_on_error=False)
    def _load_suites(self) -> None:
        try:
            self.post_message(self.SuitesLoaded(self.services.suite_names()))
        except Exception:  # no suites module yet: the launch dialog offers single runs only
            self.post_message(self.SuitesLoaded([]))

    def on_zbench_app_suites_loaded(self, message: SuitesLoaded) -> None:
        self.suites = message.names

    def on_unmount(self) -> None:
        if self.feed is not None:
            self.feed.close()

    # --- actions -------------------------------------------------------------------------------

    def job(self, job_id: int | None) -> JobInfo | None:
        return next((j for j in self.jobs if j.id == job_id), None)

    @property
    def focused_job_id(self) -> int | None:
        """The job the current screen is about: the dashboard's selected row or the detail's job."""
        return getattr(self.screen, "selected_job_id", None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in JOB_ACTIONS and self.focused_job_id is None:
            return None  # shown greyed out
        return True

    async def action_dashboard(self) -> None:
        while not isinstance(self.screen, DashboardScreen):
            await self.pop_screen()

    def action_launch(self) -> None:
        from .screens.launch import LaunchScreen

        snap = self.telemetry.latest
        gpus = None if snap is None else [g.index for g in snap.gpus]
        self.push_screen(
            LaunchScreen(self.suites, gpus=gpus, remembered=self.state.launch),
            self._launch,
        )

    def _launch(self, request: LaunchRequest | None) -> None:
        if request is not None:
            self._submit(request)

    @work(thread=True, group="submit", exit_on_error=False)
    def _submit(self, request: LaunchRequest) -> None:
        try:
            queued = self.services.submit(request)
        except NothingToRun as exc:  # as `zbench suite` says it: nothing queued, not a failure
            self.post_message(self.ServiceDone(f"suite {exc}", error=True))
            return
        except Exception as exc:
            self.post_message(self.ServiceDone(f"launch failed: {exc}", error=True))
            return
        what = f"suite {request.suite}: " if request.suite else ""
        ids = queued.ids
        text = f"{what}queued {plural(len(ids), 'job')} {', '.join(map(str, ids))}"
        if queued.skipped:  # the launch dialog said how many; here, which and why
            text += f"; skipped here: {'; '.join(queued.skipped)}"
        self.post_message(self.ServiceDone(text))

    def on_zbench_app_service_done(self, message: ServiceDone) -> None:
        self.notify(message.text, severity="error" if message.error else "information")
        self.poll_jobs()

    def action_job_detail(self) -> None:
        from zbench.contract import kinds  # not on the first frame

        from .screens.demo import DemoScreen
        from .screens.job_detail import JobDetailScreen

        job_id = self.focused_job_id
        if job_id is None or isinstance(self.screen, JobDetailScreen | DemoScreen):
            return
        job = self.job(job_id)
        if job is not None and kinds.get(job.kind).view == "demo":  # the demo's live view
            self.push_screen(DemoScreen(job_id, job.events_path, job.workload))
        else:
            self.push_screen(JobDetailScreen(job_id))

    def action_cancel_job(self) -> None:
        from .screens.confirm import ConfirmScreen

        job_id = self.focused_job_id
        job = self.job(job_id)
        if job is None:  # a detail screen opened on a job the list no longer (or not yet) has
            if job_id is not None:
                self.notify(f"job {job_id} not found: nothing to cancel")
            return
        if job.state in FINISHED:
            self.notify(f"job {job.id} already ended ({job.state}): nothing to cancel")
            return
        prompt = f"Cancel job {job.id} ({job.workload}, {job.framework}, {job.state})?"

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._cancel(job.id)

        self.push_screen(ConfirmScreen(prompt), done)

    @work(thread=True, group="cancel", exit_on_error=False)
    def _cancel(self, job_id: int) -> None:
        try:
            self.services.cancel(job_id)
        except Exception as exc:
            self.post_message(self.ServiceDone(f"cancel failed: {exc}", error=True))
            return
        self.post_message(self.ServiceDone(f"job {job_id}: cancel requested"))

    def action_results(self) -> None:
        from .screens.results import ResultsScreen

        if not isinstance(self.screen, ResultsScreen):
            self.push_screen(ResultsScreen(self.state.results))

    def action_processes(self) -> None:
        from .screens.processes import ProcessesScreen

        if not isinstance(self.screen, ProcessesScreen):
            remembered = self.state.processes
            sort = remembered.get("sort", 0)
            text = remembered.get("filter", "")
            self.push_screen(
                ProcessesScreen(
                    sort=sort if isinstance(sort, int) else 0,
                    filter_text=text if isinstance(text, str) else "",
                )
            )

    def action_history(self) -> None:
        from .screens.history import HistoryScreen

        if not isinstance(self.screen, HistoryScreen):
            self.push_screen(HistoryScreen())

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_refresh(self) -> None:
        self.poll_jobs()
        reload = getattr(self.screen, "reload", None)  # a screen that reads the store (results)
        if reload is not None:
            reload()
        await self.tick()


def check_theme(config: Config) -> None:
    """A theme the config file names must exist: said in one line (``SettingsError``), not
    silently replaced by the default (the dashboard) or a crash (the fleet view)."""
    from textual.theme import BUILTIN_THEMES

    if config.theme and config.theme not in BUILTIN_THEMES:
        from zbench.contract.options import one_of  # the run options' module: no start-up cost

        raise SettingsError(
            f"{config_path()}: [ui] theme: {one_of(sorted(BUILTIN_THEMES), config.theme)}"
        )


def run_app(replay: Path | None, interval: float | None, db: Path | None) -> int:
    """``zbench`` without a command. Exit status 2 for a bad option, else the app's.

    The dashboard redraws every ``interval`` (see ``zbench.settings`` for where it comes from);
    telemetry is sampled at the same pace, so an idle dashboard costs little. Jobs are sampled by
    their supervisor at 0.5 s whatever the dashboard does."""
    from zbench.settings import load_config, load_state, resolve_interval, state_path

    if replay is not None:
        from zbench.telemetry.trace import ReplayBackend

        # Said here in one line, not inside the dashboard it would open: a header alone, or no
        # line that is a sample, is no trace.
        try:
            ReplayBackend(replay).close()
        except (OSError, ValueError) as exc:
            print(f"zbench: {exc}", file=sys.stderr)
            return 2
    try:
        config = load_config()
        state = load_state()
        every = resolve_interval(interval, config, state)
        check_theme(config)
    except SettingsError as exc:
        print(f"zbench: {exc}", file=sys.stderr)
        return 2
    if config.theme:  # the config file wins over the theme picked last time
        state.theme = config.theme
    if interval is not None and interval != state.interval:
        state.interval = interval  # an explicit --interval is remembered for next time
        with contextlib.suppress(OSError):
            save_state(state, state_path())
    from .feed import SamplerFeed
    from .services import LocalServices

    app = ZbenchApp(
        LocalServices(db),
        feed_factory=lambda: SamplerFeed(replay, every),
        interval=every,
        state=state,
        state_file=state_path(),
    )
    app.run()
    return app.return_code or 0
