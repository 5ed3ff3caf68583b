"""Rows of figures wrap between figures, never inside one (the job view at 80 columns split "SM"
from its "0%"), and the job view's log shows its newest lines from the first frame."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Log

from zbench.tui.format import bar
from zbench.tui.screens.job_detail import JobDetailScreen
from zbench.tui.widgets.fields import Fields, Row, pack, rows_of

from .conftest import make_app
from .helpers import run_and_press, settle
from .traces import two_gpu


def _cells(line: str) -> int:
    return Content.from_markup(line).cell_length


def test_a_row_breaks_between_fields_and_goes_on_indented() -> None:
    row = Row(("GPU 0 util 99%", "mem 2.1 GiB", "SM 0%", "NVLink x18"), indent=6)
    assert pack([row], 80) == "GPU 0 util 99%  mem 2.1 GiB  SM 0%  NVLink x18"
    assert pack([row], 30).splitlines() == [
        "GPU 0 util 99%  mem 2.1 GiB",
        "      SM 0%  NVLink x18",
    ]
    assert pack([row], 0) == pack([row], 80)  # no width yet: one line a row


def test_markup_takes_no_cells_and_a_field_wider_than_the_line_has_one_of_its_own() -> None:
    util = f"util {bar(50, 8)} 50%"  # markup around the bar: 17 cells, not its ~70 characters
    assert _cells(util) == 17
    assert pack([Row((util, "SM 5%"))], 24) == f"{util}  SM 5%"
    lines = pack([Row(("a", "x" * 30, "b"), gap=1, indent=2)], 10).splitlines()
    assert lines == ["a", "  " + "x" * 30, "  b"]
    assert pack([Row(("one",)), Row(("", "two"))], 10) == "one\ntwo"  # empty fields are left out


async def test_the_job_view_at_80x24_keeps_each_figure_whole_and_shows_the_newest_log_lines() -> (
    None
):
    app = make_app(two_gpu())
    async with run_and_press(app, "enter", size=(80, 24)):
        assert isinstance(app.screen, JobDetailScreen)
        for box in app.screen.query(Fields):
            width = box.content_size.width
            lines = str(box.render()).splitlines()
            assert lines and all(_cells(line) <= width for line in lines), (box.id, lines)
            assert box.region.bottom <= app.screen.query_one("#top").region.bottom
        figures = str(app.screen.query_one("#figures", Fields).render())
        assert figures.count("SM 0%") == 2 and "RX 0 B/s" in figures
        summary = str(app.screen.query_one("#summary", Fields).render()).splitlines()
        assert "phase measure" in summary and "step 64/100" in summary
        log = app.screen.query_one(Log)
        assert log.scroll_offset.y == log.max_scroll_y > 0  # the newest lines are in sight


def test_the_demos_lines_split_at_double_spaces_outside_their_markup() -> None:
    line = "phase [b]track[/b] 5/8  elapsed 0:00:20  ~0:00:04 left"
    assert rows_of(line) == [
        Row(("phase [b]track[/b] 5/8", "elapsed 0:00:20", "~0:00:04 left"), indent=2)
    ]
    error = "[$error]crash: RuntimeError:  two  spaces[/]"  # one field: its tag spans the spaces
    escaped = r"tracks 2: \[x]  y"
    assert [r.fields for r in rows_of(f"{error}\n{escaped}")] == [
        (error,),
        (r"tracks 2: \[x]", "y"),
    ]
    assert pack(rows_of(line), 36).splitlines() == [
        "phase track 5/8  elapsed 0:00:20".replace("track", "[b]track[/b]"),
        "  ~0:00:04 left",
    ]


async def test_the_job_view_gives_the_phases_time_left_as_zbench_run_does() -> None:
    """Its clock reads as `zbench run`'s bar (H:MM:SS), and once the phase has advanced between two
    looks past its first step, the time left at the phase's rate (``jobs.eta``)."""
    from dataclasses import replace

    from zbench.tui.app import ZbenchApp
    from zbench.tui.feed import ListFeed

    from .fakes import NOW, FakeJob, FakeServices

    now = [NOW]
    services = FakeServices(jobs=[FakeJob(3, "resnet50", step=0, total=100)])
    app = ZbenchApp(services, feed=ListFeed(two_gpu()), interval=None, clock=lambda: now[0])

    def summary() -> str:
        return str(app.screen.query_one("#summary", Fields).render())

    async with run_and_press(app, "enter", size=(100, 30)) as pilot:
        assert isinstance(app.screen, JobDetailScreen)
        assert "elapsed 0:01:40" in summary() and "left" not in summary()
        for step, at in ((10, 5.0), (30, 10.0)):  # 20 steps in 5 s past the first look's
            services.jobs = [replace(services.jobs[0], step=step)]
            now[0] = NOW + at
            app.poll_jobs()
            await settle(pilot)
            assert f"step {step}/100" in summary()
        assert "elapsed 0:01:50" in summary() and "~0:00:17 left" in summary()  # 70 steps, 4/s
