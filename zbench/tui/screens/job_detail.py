"""One job: state and phase, its whole setup, its GPUs' and the host's figures, live throughput, the
log's tail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Log, Static

from zbench.jobs.eta import PhaseClock, clock
from zbench.textfit import gpu_list

if TYPE_CHECKING:
    from zbench.jobs.api import JobInfo  # the one job type

from ..format import bar, escape, gib, pct, ratio_pct
from ..state import TelemetryState
from ..widgets.charts import ThroughputHistory
from ..widgets.fields import Fields, Row
from ..widgets.gpu_panel import nvlink_fields

LOG_LINES = 200
# A workload's name is cut here in the summary's box: the box's height is capped, and a longer name
# wrapped over its lines pushed the state, step and samples/s out of it (the jobs table has it whole).
NAME_MAX = 40


def summary(job: JobInfo | None, now: float, left: float | None = None) -> list[Row]:
    """A job's header as rows of fields: workload; state, GPUs, phase and step; samples/s and its
    clock, with the phase's time ``left`` as `zbench run`'s bar has them (``jobs.eta``). At 80
    columns the box is 22 cells wide: the GPUs share the state's line, and the time left has a
    line of its own."""
    if job is None:
        return [Row(("[$text-muted]job not found (yet)[/]",))]
    elapsed = clock(PhaseClock.elapsed(job, now)) if job.started else "-"
    step = f"{job.step or 0}/{job.total}" if job.total else "-"
    speed = job.rate("-")
    gpus = gpu_list(job.gpu_ids) if job.gpu_ids else "GPUs -"
    name = job.workload if len(job.workload) <= NAME_MAX else job.workload[: NAME_MAX - 1] + "…"
    return [
        Row((f"[b]{escape(name)}[/b]", job.framework, job.mode, job.precision or ""), gap=1),
        Row((f"state [b]{job.state}[/b]", gpus, f"phase {job.phase or '-'}", f"step {step}")),
        Row(
            (
                f"{job.rate_unit} {speed}",
                f"elapsed {elapsed}",
                f"~{clock(left)} left" if left is not None else "",
            )
        ),
    ]


def setup_text(job: JobInfo | None) -> str:
    """The job's whole setup as markup, on a line of its own that wraps: the jobs table shows only
    what tells look-alike jobs apart, cut to its column."""
    from zbench.jobs.apart import whole_setup  # the results' field names: after the first frame

    words = whole_setup(job) if job is not None else ""
    return f"[$text-muted]setup[/] {escape(words)}" if words else ""


def reason_text(job: JobInfo | None) -> str:
    """Why the job ended as it did (failed, cancelled, lost), as markup: on a line of its own, the
    screen's width, so a long reason is read whole; the summary's box cut it off."""
    return f"[$error]{escape(job.reason)}[/]" if job is not None and job.reason else ""


def verdict_text(verdict: str | None) -> str:
    """The bottleneck verdict line (``results.bottleneck``): its kind in bold, then the evidence."""
    if not verdict:
        return "[$text-muted]bottleneck: no samples yet[/]"
    kind, _, evidence = verdict.partition(": ")
    return f"bottleneck [b]{escape(kind)}[/b]" + (f": {escape(evidence)}" if evidence else "")


def figures(job: JobInfo | None, state: TelemetryState) -> list[Row]:
    """Live figures of a job's GPUs (util, memory, SM, NVLink) and of the host, as rows of fields:
    a GPU's row goes on over an indented line or two where the panel is narrow."""
    snap = state.latest
    if snap is None:
        return [Row(("[$text-muted]no telemetry[/]",))]
    wanted = set(job.gpu_ids or ()) if job else set()
    rows = []
    for g in snap.gpus:
        if g.index in wanted:
            mem = ratio_pct(g.mem_used_bytes, g.mem_total_bytes)
            gpu = (
                f"GPU {g.index} util {bar(g.util_gpu, 8)} {pct(g.util_gpu):>4}",
                f"mem {bar(mem, 8)} {gib(g.mem_used_bytes)} GiB",
                f"SM {pct(g.gpm.sm_activity)}",
            )
            rows.append(Row((*gpu, *nvlink_fields(g)), indent=6))
    host = snap.host
    rows.append(
        Row(
            (
                f"host CPU {bar(host.cpu_pct, 8)} {pct(host.cpu_pct):>4}",
                f"RAM {gib(host.ram_used_bytes)} GiB",
            ),
            indent=6,
        )
    )
    for tree in snap.trees:
        rows.append(
            Row(
                (f"pid {tree.pid}: CPU {pct(tree.cpu_pct)}", f"RSS {gib(tree.rss_bytes)} GiB"),
                indent=6,
            )
        )
    return rows


class JobDetailScreen(Screen[None]):
    """One job: state and phase, its GPUs' and the host's figures, throughput, the log's tail."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="job.back"),
        Binding("c", "app.cancel_job", "Cancel job", id="job.cancel"),
    ]

    @dataclass
    class Loaded(Message):
        lines: list[str]
        points: list[tuple[float, float]]
        verdict: str | None = None

    def __init__(self, job_id: int) -> None:
        super().__init__()
        self.job_id = job_id
        self._busy = False
        self._clock = PhaseClock()  # the phase's rate between this view's looks

    @property
    def selected_job_id(self) -> int:
        return self.job_id

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Horizontal(id="top"):
            yield Fields(id="summary")
            yield Fields(id="figures")
        yield Static(id="setup")
        yield Static(id="reason")
        yield Static(verdict_text(None), id="verdict")
        yield ThroughputHistory(id="throughput")
        yield Log(id="log", max_lines=LOG_LINES)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"job {self.job_id}"
        self.refresh_jobs(self.app.jobs)  # type: ignore[attr-defined]
        self.query_one("#figures", Fields).show(figures(self.job, self.app.telemetry))  # type: ignore[attr-defined]
        self.poll()
        interval = self.app.interval  # type: ignore[attr-defined]
        if interval:
            self.set_interval(max(interval, 1.0), self.poll)

    @property
    def job(self) -> JobInfo | None:
        return self.app.job(self.job_id)  # type: ignore[attr-defined,no-any-return]

    def poll(self) -> None:
        if not self._busy:
            self._busy = True
            self._load(self.job)

    @work(thread=True, exclusive=True, group="job-detail", exit_on_error=False)
    def _load(self, job: JobInfo | None) -> None:
        services = self.app.services  # type: ignore[attr-defined]
        try:
            lines = services.log_tail(self.job_id, lines=LOG_LINES)
            points = services.throughput(job) if job is not None else []
        except Exception as exc:
            lines, points = [f"(log unavailable: {exc})"], []
        try:
            verdict = services.verdict(self.job_id)
        except Exception as exc:
            verdict = f"unknown: {exc}"
        self.post_message(self.Loaded(lines, points, verdict))

    def on_job_detail_screen_loaded(self, message: Loaded) -> None:
        self._busy = False
        log = self.query_one(Log)
        log.clear()
        log.write_lines(message.lines)
        # Its own scroll to the end ran at the size it had then: the first load comes before the
        # layout (the view showed the log's oldest lines until the next poll).
        log.call_after_refresh(log.scroll_end, animate=False)
        self.query_one(ThroughputHistory).show(message.points)
        self.query_one("#verdict", Static).update(verdict_text(message.verdict))

    def refresh_jobs(self, jobs: Sequence[JobInfo]) -> None:
        now, job = self.app.clock(), self.job  # type: ignore[attr-defined]
        left = self._clock.left(job, now) if job is not None else None
        self.query_one("#summary", Fields).show(summary(job, now, left))
        setup = self.query_one("#setup", Static)
        setup.update(text := setup_text(self.job))
        setup.display = bool(text)
        reason = self.query_one("#reason", Static)
        reason.update(reason_text(self.job))
        reason.display = bool(self.job is not None and self.job.reason)

    async def refresh_telemetry(self, state: TelemetryState) -> None:
        self.query_one("#figures", Fields).show(figures(self.job, state))
