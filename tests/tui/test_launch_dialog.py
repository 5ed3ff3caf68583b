"""The launch dialog's demo sections, and its layout at 80x24: every field, the reason and the
buttons in sight."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Select, Static

from zbench.tui.screens.dashboard import DashboardScreen
from zbench.tui.screens.launch import LaunchScreen
from zbench.tui.services import LaunchRequest, LocalServices, NothingToRun, Queued

from .conftest import make_app
from .fakes import FakeServices
from .helpers import press, run_and_press, settle


async def test_a_demos_options_are_fields_shown_while_it_is_picked(tmp_path: Path) -> None:
    """Demos launched from the dialog took every default: board size, algorithm, tracker,
    minutes could not be chosen without the CLI."""
    from textual.widgets import Collapsible, SelectionList

    from zbench.contract.demos import demos

    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, LaunchScreen)
        sections = {name: screen.query_one(f"#demo-{name}", Collapsible) for name in demos()}
        assert not any(s.display for s in sections.values())  # resnet50 only: no demo's section
        box = screen.query_one("#workloads", SelectionList)
        box.deselect("resnet50")
        box.select("snake")
        await settle(pilot)
        assert [n for n, s in sections.items() if s.display] == ["snake"]
        # Every option of the demo's table is a field, but the device (the form's own).
        fields = {w.id for w in sections["snake"].query("Input, Select")}
        assert fields == {f"snake-{o.flag[2:]}" for o in demos()["snake"].options} - {
            "snake-device"
        }
        screen.query_one("#snake-board", Input).value = "3"
        await settle(pilot)
        error = str(screen.query_one("#error", Static).render())
        assert error == "snake: board: must be at least 4 and at most 64, got 3"
        assert screen.query_one("#launch", Button).disabled
        screen.query_one("#snake-board", Input).value = "16"
        screen.query_one("#snake-algo", Select).value = "dqn"
        screen.query_one("#snake-faithful", Select).value = "on"
        screen.query_one("#device", Select).value = "cpu"
        box.select("motion")
        await settle(pilot)
        screen.query_one("#motion-mode", Select).value = "animate"
        screen.query_one("#motion-checkpoint", Input).value = str(tmp_path)
        await settle(pilot)
        error = str(screen.query_one("#error", Static).render())
        # In the form's words: "mode animate" is the field and value, --animate the CLI's.
        assert error.startswith("motion: mode animate needs a trained model: no motion.pt in")
        screen.query_one("#motion-mode", Select).value = "train"
        screen.query_one("#motion-checkpoint", Input).value = ""
        screen.query_one("#motion-minutes", Input).value = "0.5"
        await settle(pilot)
        remembered = screen.remembered_values()
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, DashboardScreen)
        # The next launch starts from these values, the demos picked again.
        app.push_screen(LaunchScreen([], remembered=remembered))
        await settle(pilot)
        assert app.screen.query_one("#snake-board", Input).value == "16"
        assert app.screen.query_one("#snake-algo", Select).value == "dqn"
        picked = app.screen.query_one("#workloads", SelectionList).selected
        assert set(picked) == {"snake", "motion"}
        assert app.screen.query_one("#demo-motion", Collapsible).display
    snake, motion = services.submitted[0].configs
    assert (snake.algo, snake.faithful, snake.board, snake.device) == ("dqn", True, 16, "cpu")
    assert (motion.mode, motion.minutes, motion.device) == ("train", 0.5, "cpu")


async def test_the_error_and_buttons_stay_in_sight_at_80x24_with_every_section_open() -> None:
    """At 80x24 the dialog scrolled as one: a bad value typed in a demo's field turned the launch
    off while the line saying why, and the buttons, were scrolled out of sight below. Only the
    fields scroll now; every field tabbed to is in sight above the error and the buttons."""
    from textual.widgets import Collapsible, SelectionList

    app = make_app()
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        screen = app.screen
        dialog = screen.query_one("#dialog")
        error, buttons = screen.query_one("#error"), screen.query_one("#buttons")
        await press(pilot, *["down"] * 5, "space")  # snake, from the workloads list
        snake = screen.query_one("#demo-snake", Collapsible)
        while app.focused is None or app.focused.parent is not snake:
            await press(pilot, "tab")  # on to the section's title
        await press(pilot, "enter", "tab", "tab", "tab")  # open it; algo, faithful, board
        assert app.focused is screen.query_one("#snake-board")
        await press(pilot, "3")
        assert "snake: board: must be at least 4" in str(error.render())
        for widget in (error, buttons, app.focused):
            assert widget.region.height and dialog.content_region.contains_region(widget.region)

        box = screen.query_one("#workloads", SelectionList)
        for name in ("motion", "tracking"):
            box.select(name)
        await settle(pilot)
        for section in screen.query(Collapsible):
            section.collapsed = False
        await settle(pilot)
        for _ in screen.query("Input, Select, SelectionList"):
            await press(pilot, "tab")
            focused = app.focused
            if focused is not None and focused.id not in ("launch", "close"):
                region = focused.region
                assert region.height and dialog.content_region.contains_region(region), focused.id
                assert not region.overlaps(error.region), focused.id
                assert not region.overlaps(buttons.region), focused.id


async def test_a_long_reason_is_shown_whole_at_80x24(tmp_path: Path) -> None:
    """The reason line was one row: at 80x24 "motion: --animate needs a trained model: no
    motion.pt in <folder> (train first)" lost the folder and what to do. It wraps now."""
    from textual.widgets import SelectionList

    folder = tmp_path / "checkpoints" / "motion-run-of-the-fifth"
    folder.mkdir(parents=True)
    app = make_app()
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        screen = app.screen
        box = screen.query_one("#workloads", SelectionList)
        box.deselect("resnet50")
        box.select("motion")
        screen.query_one("#motion-mode", Select).value = "animate"
        screen.query_one("#motion-checkpoint", Input).value = str(folder)
        await settle(pilot)
        error = screen.query_one("#error", Static)
        reason = str(error.render())
        assert reason.startswith("motion: mode animate needs a trained model")
        assert reason.endswith("(train first)") and len(reason) > error.region.width
        assert error.region.height > 1  # every row the reason needs, in the dialog
        assert screen.query_one("#dialog").content_region.contains_region(error.region)


async def test_the_suite_row_is_one_row_high_with_or_without_a_suite() -> None:
    """The suite's row stood three rows high (two blank) while no suite was picked, then shrank
    to one when one was, moving every field below it; at 80x24 those rows are dear."""
    app = make_app()
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        suite, workloads = (
            app.screen.query_one("#suite", Select),
            app.screen.query_one("#workloads"),
        )
        assert workloads.region.y == suite.region.y + 1
        suite.value = "quick"
        await settle(pilot)
        assert workloads.region.y == suite.region.y + 1


class _SkippingServices(FakeServices):
    """A machine where the suite's 2-GPU jobs cannot run (``nothing``: none of its jobs can)."""

    nothing = False

    def submit(self, request: LaunchRequest) -> Queued:
        if self.nothing:
            raise NothingToRun("quick: nothing can run on this machine (resnet50 ...: why)")
        queued = super().submit(request)
        return Queued(queued.ids, ("resnet50 torch train fp32 on 2 GPUs: needs 2 GPUs; 1 found",))


async def _launch_quick(services: FakeServices) -> list[str]:
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        app.screen.query_one("#suite", Select).value = "quick"
        await settle(pilot)
        await press(pilot, "ctrl+s")
        await settle(pilot)
        return [n.message for n in app._notifications]


async def test_a_suite_launched_from_the_tui_says_what_it_skipped_and_why() -> None:
    """It said "suite quick: queued 4 jobs" and nothing of the jobs it left out; and with none
    that could run, "queued 0 jobs", as if something had started."""
    said = await _launch_quick(_SkippingServices())
    assert any(
        "queued job 4" in m
        and "skipped here: resnet50 torch train fp32 on 2 GPUs: needs 2 GPUs" in m
        for m in said
    ), said
    services = _SkippingServices()
    services.nothing = True
    said = await _launch_quick(services)
    assert "suite quick: nothing can run on this machine (resnet50 ...: why)" in said, said
    assert not any("queued" in m for m in said)


def test_local_services_refuse_a_suite_with_nothing_to_run_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")  # whatever this machine has: no GPU
    suite = tmp_path / "gpu-only.toml"
    suite.write_text('[[job]]\nworkload = "resnet50"\ndevice = "cuda"\n')
    services = LocalServices(tmp_path / "z.db")
    with pytest.raises(NothingToRun) as caught:
        services.submit(LaunchRequest(suite=str(suite)))
    assert str(caught.value) == (
        "gpu-only: nothing can run on this machine (resnet50 torch train default on 1 GPU: "
        "needs a GPU; none found (CUDA_VISIBLE_DEVICES='-1' hides every GPU))"
    )
    assert not (tmp_path / "z.db").exists()  # nothing queued
