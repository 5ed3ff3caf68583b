"""Moving between screens by key, the help listing every key, and what the dashboard shows."""

from __future__ import annotations

import dataclasses

from textual.binding import Binding
from textual.widgets import DataTable, Static
from textual.widgets._footer import FooterKey

from zbench.telemetry.snapshot import NA, GpmSnapshot, GpuSnapshot, HostSnapshot, Snapshot
from zbench.tui.app import ZbenchApp
from zbench.tui.feed import ListFeed
from zbench.tui.screens.dashboard import DashboardScreen
from zbench.tui.screens.help import HelpScreen, sections
from zbench.tui.screens.job_detail import JobDetailScreen
from zbench.tui.screens.results import ResultsScreen
from zbench.tui.widgets.gpu_panel import (
    GpuPanel,
    compact_line,
    detail_text,
    util_text,
    warnings_text,
)

from .conftest import make_app
from .fakes import FakeServices, canned_jobs
from .helpers import press, settle
from .traces import eight_gpu, two_gpu, with_lost_gpu


async def test_keys_move_between_screens() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        await press(pilot, "r")
        assert isinstance(app.screen, ResultsScreen)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, ResultsScreen)
        await press(pilot, "d")
        assert isinstance(app.screen, DashboardScreen)
        await press(pilot, "enter")
        assert isinstance(app.screen, JobDetailScreen)
        await press(pilot, "r", "d")
        assert isinstance(app.screen, DashboardScreen)


async def test_help_lists_every_binding_with_an_id() -> None:
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        table = app.screen.query_one(DataTable)
        shown = {str(table.get_row_at(i)[2]) for i in range(table.row_count)}
    bindings = [b for _, bs in sections() for b in bs if isinstance(b, Binding)]
    assert {b.description for b in bindings} <= shown
    assert all(b.id for b in bindings if b.action != "command_palette")


async def test_help_wraps_what_each_figure_means_at_any_width() -> None:
    """The figures' meanings are sentences: one line each, they ran off the dialog at 160x50 and
    at 80x24, readable only by scrolling sideways ("end" showed an empty table)."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "question_mark")
        for size in ((160, 50), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            table = app.screen.query_one(DataTable)
            assert table.max_scroll_x == 0, size  # nothing out of sight sideways
            hint = next(
                row for row in table.ordered_rows if table.get_row(row.key)[1] == "util hint"
            )
            assert hint.height > 1, size  # wrapped, not cut


async def test_dashboard_shows_each_gpu_and_the_sm_hint() -> None:
    app = make_app(eight_gpu())
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        panels = list(app.screen.query(GpuPanel))
        assert [p.index for p in panels] == list(range(8))
        assert all(p.region.bottom <= 50 for p in panels)  # 8 GPUs fit on 160x50
        assert "NVLink x" in str(panels[0].query_one("#details", Static).render())


def test_sm_hint_when_util_high_but_sm_activity_low() -> None:
    busy = GpuSnapshot(index=0, util_gpu=100.0, gpm=GpmSnapshot(sm_activity=12.0))
    assert "util high, SM low" in warnings_text(busy)
    assert "⚠SM" in compact_line(busy)
    calm = GpuSnapshot(index=0, util_gpu=100.0, gpm=GpmSnapshot(sm_activity=85.0))
    assert warnings_text(calm) == ""
    unknown = GpuSnapshot(index=0, util_gpu=100.0)  # no GPM (pre-Hopper): no hint, SM act n/a
    assert warnings_text(unknown) == ""


async def test_compact_rows_on_a_small_terminal() -> None:
    app = make_app(eight_gpu())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-compact")
        panels = list(app.screen.query(GpuPanel))
        assert {p.region.height for p in panels} == {1}
        assert app.screen.query_one("#jobs").region.height >= 4


async def test_lost_gpu_and_na_values() -> None:
    snaps = with_lost_gpu(two_gpu(), 1)
    app = make_app(snaps)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert app.screen.query_one("#gpu-1", GpuPanel).has_class("-lost")
    bare = GpuSnapshot(index=0, name="Tesla T4")
    util, details = util_text(bare), detail_text(bare, 200)
    assert "n/a" in util and "SM act[/] n/a" in details and "NVLink n/a" in details
    assert "n/a" in compact_line(bare)


async def test_no_gpu_shows_host_and_notice() -> None:
    notice = "no NVIDIA driver: host-only mode"
    snaps = [
        Snapshot(
            t=1.0, seq=1, host=HostSnapshot(cpu_pct=12.0, per_core_pct=(10.0, 14.0)), notice=notice
        )
    ]
    app = make_app(snaps, notice=notice)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert notice in str(app.screen.query_one("#notice", Static).render())
        assert app.screen.query("#gpus .empty")
        assert not app.screen.query(GpuPanel)


async def test_stepped_replay_advances_one_snapshot_per_tick() -> None:
    snaps = two_gpu(5)
    feed = ListFeed(snaps, step=True)
    app = make_app()
    app.feed = None
    app = type(app)(app.services, feed=feed, interval=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.telemetry.latest is None
        feed.advance()
        await app.tick()
        assert app.telemetry.latest == snaps[0]
        feed.advance(3)
        await app.tick()
        assert app.telemetry.latest == snaps[3] and len(app.telemetry.util[0]) == 4
    assert dataclasses.replace(snaps[0], driver_version=NA).driver_version is NA


async def test_an_empty_jobs_table_says_how_to_start_one() -> None:
    app = make_app(services=FakeServices(jobs=[]))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        empty = app.screen.query_one("#jobs-empty", Static)
        hint = str(empty.render())
        assert empty.display and "No jobs yet" in hint
        assert len(hint) <= empty.content_region.width, "one line of an 80-column terminal"
        table = app.screen.query_one("#jobs")
        assert empty.region.y == table.region.y + 1, "right under the table's header"
    full = make_app()
    async with full.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert not full.screen.query_one("#jobs-empty", Static).display


def _footer_keys(app: ZbenchApp) -> dict[str, bool]:
    """Footer key -> shown enabled."""
    return {k.key: not k.has_class("-disabled") for k in app.screen.query(FooterKey)}


async def test_footer_job_keys_follow_the_job_selection() -> None:
    # The job keys are enabled only with a job selected (check_action); the Footer is redrawn when
    # the first jobs arrive, and shows what the screen's bindings say.
    services = FakeServices(jobs=[])
    app = make_app(services=services)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert app.focused_job_id is None and _footer_keys(app)["c"] is False
        services.jobs = canned_jobs()
        app.poll_jobs()
        await settle(pilot)
        assert app.focused_job_id is not None and _footer_keys(app)["c"] is True
        active = app.screen.active_bindings
        assert _footer_keys(app) == {
            k: b.enabled for k, b in active.items() if b.binding.show or k == "ctrl+p"
        }


async def test_the_palette_offers_job_commands_only_with_a_selected_job() -> None:
    """ "job: cancel" and "job: open detail" act on the screen's selected job: the palette offered
    them on the results and processes screens too, where picking them did nothing."""
    from zbench.tui.commands import ZbenchCommands

    def titles() -> set[str]:
        return {title for title, _, _ in ZbenchCommands(app.screen)._entries()}

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert {"job: cancel", "job: open detail"} <= titles()  # the dashboard's selected job
        for key in ("r", "p"):
            await press(pilot, "d", key)
            assert not {"job: cancel", "job: open detail"} & titles()
            assert "job: launch" in titles()
        await press(pilot, "d", "enter")
        assert "job: cancel" in titles()  # the detail's own job
        assert "job: open detail" not in titles()  # it is open: picking it did nothing
