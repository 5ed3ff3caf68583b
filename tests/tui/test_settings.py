"""Settings: the config file, remembered state, the interval's precedence, and the TUI's round trip
(theme, launch form, process sort and filter survive a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Select

from zbench import settings
from zbench.settings import Config, SettingsError, State, load_config, load_state, save_state
from zbench.tui.app import ZbenchApp
from zbench.tui.feed import ListFeed
from zbench.tui.screens.launch import LaunchScreen
from zbench.tui.screens.processes import ProcessesScreen
from zbench.tui.screens.results import ResultsScreen

from .fakes import NOW, FakeServices
from .helpers import press, run_and_press, settle
from .traces import two_gpu, with_processes


def test_paths_follow_zbench_home(zbench_home: Path) -> None:
    assert settings.state_path() == zbench_home / "home" / "state.json"
    assert settings.config_path() == zbench_home / "home" / "config.toml"


def test_config_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert load_config(path) == Config()
    path.write_text('[ui]\ninterval = 2\ntheme = "nord"\n')
    assert load_config(path) == Config(interval=2.0, theme="nord")
    path.write_text("[ui]\ninterval = 0\n")
    with pytest.raises(SettingsError) as below:
        load_config(path)
    assert str(below.value) == f"{path}: [ui] interval: 0 is below the minimum of 0.05 s"
    path.write_text("[ui]\ninterval = inf\n")
    with pytest.raises(SettingsError, match="above the maximum of 3600 s"):
        load_config(path)
    path.write_text("[ui]\nrefresh = 1\n")
    with pytest.raises(SettingsError, match="unknown key \\[ui\\] refresh"):
        load_config(path)
    path.write_text("interval = 2\n")  # at the top, where it does nothing: said, not ignored
    with pytest.raises(SettingsError, match="interval belongs in the \\[ui\\] table"):
        load_config(path)
    path.write_text("[gui]\ntheme = 'nord'\n")
    with pytest.raises(
        SettingsError, match="unknown key gui \\(known tables: \\[ui\\], \\[hosts\\]\\)"
    ):
        load_config(path)
    path.write_text("[ui\n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_config(path)


def test_state_round_trip_and_a_bad_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s" / "state.json"
    state = State(theme="nord", interval=2.0, launch={"device": "cpu"}, processes={"sort": 2})
    save_state(state, path)
    assert load_state(path) == state
    path.write_text("{not json")
    assert load_state(path) == State()
    path.write_text('{"theme": 3, "interval": -1, "launch": []}')
    assert load_state(path) == State()
    path.write_text('{"interval": 1e308}')  # remembered out of range: the default, not a hang
    assert load_state(path) == State()


def test_interval_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(settings.ENV_INTERVAL, raising=False)
    resolve = settings.resolve_interval
    assert resolve(None, Config(), State()) == settings.DEFAULT_INTERVAL
    assert resolve(None, Config(), State(interval=3.0)) == 3.0
    assert resolve(None, Config(interval=2.0), State(interval=3.0)) == 2.0
    monkeypatch.setenv(settings.ENV_INTERVAL, "0.25")
    assert resolve(None, Config(interval=2.0), State()) == 0.25
    assert resolve(0.5, Config(interval=2.0), State()) == 0.5
    monkeypatch.setenv(settings.ENV_INTERVAL, "soon")
    with pytest.raises(SettingsError, match=r"\$ZBENCH_INTERVAL: 'soon' is not a number"):
        resolve(None, Config(), State())
    monkeypatch.setenv(settings.ENV_INTERVAL, "inf")
    with pytest.raises(SettingsError, match=r"\$ZBENCH_INTERVAL: 'inf' is above the maximum"):
        resolve(None, Config(), State())


def _app(state_file: Path) -> ZbenchApp:
    feed = ListFeed(with_processes(two_gpu(), NOW))
    return ZbenchApp(
        FakeServices(),
        feed=feed,
        interval=None,
        clock=lambda: NOW,
        state=load_state(state_file),
        state_file=state_file,
    )


async def test_tui_remembers_theme_launch_form_and_process_view(zbench_home: Path) -> None:
    state_file = zbench_home / "state.json"
    app = _app(state_file)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        app.theme = "nord"
        await press(pilot, "l")
        screen = app.screen
        assert isinstance(screen, LaunchScreen)
        screen.query_one("#device", Select).value = "cpu"
        screen.query_one("#warmup", Input).value = "3"
        screen.query_one("#image-size", Input).value = "160"
        await press(pilot, "ctrl+s")
        await press(pilot, "p", "s", "s", "slash", *"ada", "enter")
        await app.workers.wait_for_complete()
    saved = load_state(state_file)
    assert saved.theme == "nord"
    assert saved.launch["device"] == "cpu" and saved.launch["warmup"] == "3"
    assert saved.processes == {"sort": 2, "filter": "ada"}

    again = _app(state_file)
    async with again.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert again.theme == "nord"
        await press(pilot, "l")
        assert again.screen.query_one("#device", Select).value == "cpu"
        assert again.screen.query_one("#image-size", Input).value == "160"
        await press(pilot, "escape", "p")
        procs = again.screen
        assert isinstance(procs, ProcessesScreen)
        assert procs.sort_index == 2 and procs.filter_text == "ada"


async def test_tui_remembers_results_sort_and_filter(zbench_home: Path) -> None:
    state_file = zbench_home / "state.json"
    app = _app(state_file)
    async with run_and_press(
        app, "r", "slash", *"torch", "enter", *["right"] * 8, "s", "s", size=(160, 50)
    ):
        await app.workers.wait_for_complete()
    assert load_state(state_file).results == {
        "sort": "Samples/s",
        "reverse": True,
        "filter": "torch",
    }
    again = _app(state_file)
    async with run_and_press(again, "r", size=(160, 50)):
        screen = again.screen
        assert isinstance(screen, ResultsScreen)
        assert screen.query_one("#filter", Input).value == "torch"
        assert "sorted by Samples/s ↓" in screen.sub_title
        speeds = [r.samples_per_s for r in screen.shown]
        assert speeds == sorted(speeds, reverse=True) and len(speeds) == 5
