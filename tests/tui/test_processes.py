"""The GPU process table: who holds which GPU, sort, filter, the zbench job, and signalling."""

from __future__ import annotations

import dataclasses

from textual.widgets import DataTable, Static

from zbench.tui.app import ZbenchApp
from zbench.tui.feed import ListFeed
from zbench.tui.screens.confirm import ConfirmScreen
from zbench.tui.screens.processes import ProcessesScreen

from .fakes import NOW, FakeServices
from .helpers import press, run_and_press, settle
from .traces import two_gpu, with_processes


def proc_app(services: FakeServices | None = None, *, replay: bool = False) -> ZbenchApp:
    feed = ListFeed(with_processes(two_gpu(), NOW), notice=None, replay=replay)
    services = services or FakeServices(runners={41230: 3})
    return ZbenchApp(services, feed=feed, interval=None, clock=lambda: NOW)


def pids(screen: ProcessesScreen) -> list[str]:
    return [str(row.key.value) for row in screen.query_one("#procs", DataTable).ordered_rows]


async def test_p_opens_the_table_with_user_job_and_command() -> None:
    app = proc_app()
    async with run_and_press(app, "p", size=(160, 50)):
        screen = app.screen
        assert isinstance(screen, ProcessesScreen)
        # Sorted by GPU memory, largest first.
        assert pids(screen) == ["1:41232", "0:41231", "0:5120", "1:7007"]
        table = screen.query_one("#procs", DataTable)
        row = [str(c) for c in table.get_row("0:41231")]
        assert "ada" in row and "#3" in row and "12m34s" in row and "101%" in row
        assert any("zbench.runners.torch.worker" in c for c in row)
        assert any("4f1c2a9e8b7d" in str(c) for c in table.get_row("1:7007"))
        assert "4 of 4 processes" in str(screen.query_one("#status", Static).render())


async def test_sort_cycles_and_filter_narrows() -> None:
    app = proc_app()
    async with run_and_press(app, "p", size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, ProcessesScreen)
        await press(pilot, "s")  # SM %
        assert pids(screen)[0] == "0:41231"
        await press(pilot, "s", "s")  # host memory
        assert pids(screen)[:2] in (["0:41231", "1:41232"], ["1:41232", "0:41231"])
        await press(pilot, "slash", *"bob")
        assert pids(screen) == ["0:5120"]
        await press(pilot, "enter")
        assert screen.filter_text == "bob"
        await press(pilot, "slash", "backspace", "backspace", "backspace", *"nomatch")
        assert pids(screen) == []
        assert "No GPU process matches" in str(screen.query_one("#status", Static).render())
        await press(pilot, "escape")
        assert len(pids(screen)) == 4


async def test_signal_asks_then_sends_term_then_kill() -> None:
    services = FakeServices(runners={41230: 3})
    app = proc_app(services)
    async with run_and_press(app, "p", size=(160, 50)) as pilot:
        await press(pilot, "k")
        assert isinstance(app.screen, ConfirmScreen)
        assert "TERM" in app.screen.prompt and "41232" in app.screen.prompt
        await press(pilot, "n")
        assert services.signalled == []
        await press(pilot, "k", "y")
        assert services.signalled == [(41232, "TERM")]
        await press(pilot, "k")
        assert isinstance(app.screen, ConfirmScreen) and "KILL" in app.screen.prompt
        await press(pilot, "y")
        assert services.signalled == [(41232, "TERM"), (41232, "KILL")]


async def test_signal_refused_says_why_in_one_line() -> None:
    services = FakeServices(refuse={41232: "pid 41232 belongs to ada; only root may signal it"})
    app = proc_app(services)
    seen: list[str] = []
    async with app.run_test(size=(160, 50)) as pilot:
        app.notify = lambda message, **kw: seen.append(str(message))  # type: ignore[method-assign]
        await settle(pilot)
        await press(pilot, "p", "k", "y")
        assert services.signalled == []
        assert seen == ["not sent: pid 41232 belongs to ada; only root may signal it"]


async def test_a_replayed_trace_is_never_signalled() -> None:
    services = FakeServices()
    app = proc_app(services, replay=True)
    seen: list[str] = []
    async with app.run_test(size=(160, 50)) as pilot:
        app.notify = lambda message, **kw: seen.append(str(message))  # type: ignore[method-assign]
        await settle(pilot)
        await press(pilot, "p", "k")
        assert not isinstance(app.screen, ConfirmScreen)
        assert services.signalled == [] and "recorded trace" in seen[0]


async def test_80_columns_drop_whole_columns_not_cells() -> None:
    app = proc_app()
    async with run_and_press(app, "p", size=(80, 24)):
        table = app.screen.query_one("#procs", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert labels[:2] == ["GPU", "PID"] and "command" in labels
        assert sum(c.width + 2 for c in table.columns.values()) <= 80


async def test_no_processes_says_so() -> None:
    last = two_gpu()[-1]
    idle = dataclasses.replace(
        last, gpus=tuple(dataclasses.replace(g, processes=()) for g in last.gpus)
    )
    app = ZbenchApp(FakeServices(), feed=ListFeed([idle]), interval=None, clock=lambda: NOW)
    async with run_and_press(app, "p", size=(80, 24)):
        assert "No processes on the GPUs" in str(app.screen.query_one("#status", Static).render())
