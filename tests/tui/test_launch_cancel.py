"""Launching (the fake service records the request) and cancelling (only after confirmation)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Log, Select, Static

from zbench.tui.launch_form import build_request, parse_gpu_ids
from zbench.tui.screens.confirm import ConfirmScreen
from zbench.tui.screens.dashboard import DashboardScreen
from zbench.tui.screens.job_detail import JobDetailScreen
from zbench.tui.screens.launch import LaunchScreen

from .conftest import make_app
from .fakes import FakeJob, FakeServices
from .helpers import press, run_and_press, settle


async def test_launch_two_workloads_on_two_gpus() -> None:
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        assert isinstance(app.screen, LaunchScreen)
        await press(pilot, "down", "space")  # resnet50 is preselected; add vgg16
        app.screen.query_one("#gpu-ids", Input).focus()
        await press(pilot, *"0,1")
        app.screen.query_one("#batch-size", Input).focus()
        await press(pilot, *"64")
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, DashboardScreen)
    assert len(services.submitted) == 1
    request = services.submitted[0]
    assert [c.workload for c in request.configs] == ["resnet50", "vgg16"]
    assert request.gpu_ids == (0, 1)
    assert all(
        c.batch_size == 64 and c.gpus == 2 and c.framework == "torch" for c in request.configs
    )


async def test_launch_validates_inline_and_refuses_bad_input() -> None:
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        app.screen.query_one("#batch-size", Input).focus()
        await press(pilot, "0")
        error = str(app.screen.query_one("#error", Static).render())
        assert "resnet50: batch size: must be at least 1, got 0" in error  # the field's label
        assert app.screen.query_one("#launch", Button).disabled
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, LaunchScreen)
        await press(pilot, "escape")
        assert isinstance(app.screen, DashboardScreen)
    assert services.submitted == []


async def test_launch_a_suite_from_the_keyboard() -> None:
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        await press(pilot, "shift+tab")  # from the workloads list back to the suite picker
        await press(pilot, "enter", "down", "down", "enter")  # blank, review, quick
        await app.workers.wait_for_complete()
        await pilot.pause()
        info = str(app.screen.query_one("#suite-info").render())
        assert "quick: 6 jobs: resnet50" in info and "about 3 min" in info
        await press(pilot, "ctrl+s")
    assert [r.suite for r in services.submitted] == ["quick"]


async def test_a_chosen_suite_turns_the_runs_fields_off() -> None:
    """A suite runs its own jobs and options: GPU ids, batch size or workloads typed beside it
    were silently ignored; they are off (greyed, out of the tab order) while a suite is chosen."""
    app = make_app()
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        suite = app.screen.query_one("#suite", Select)
        fields = ("#workloads", "#gpu-ids", "#batch-size", "#framework", "#data", "#path", "#seed")
        suite.value = "quick"
        await settle(pilot)
        assert all(app.screen.query_one(f).disabled for f in fields)
        assert not suite.disabled
        suite.clear()
        await settle(pilot)
        assert not any(app.screen.query_one(f).disabled for f in fields)


def test_build_request_rules() -> None:
    form = {
        "framework": "tf",
        "mode": "infer",
        "precision": "fp16",
        "batch-size": "",
        "steps": "5",
        "data": "dataset",
        "path": "",
        "gpu-ids": "",
    }
    assert build_request("", ["unet2d"], form) == (None, "data: give the dataset's path")
    form["data"] = "synthetic-host"
    request, error = build_request("", ["unet2d"], form)
    assert error == "" and request is not None
    (config,) = request.configs
    assert (config.framework, config.mode, config.precision, config.steps) == (
        "tf",
        "infer",
        "fp16",
        5,
    )
    assert (
        config.data_source == "synthetic-host" and config.data is None and request.gpu_ids is None
    )
    assert build_request("", [], form)[0] is None
    assert parse_gpu_ids(" 0, 2 ") == (0, 2)
    for text, says in (
        ("0,x", "GPU ids: 'x' is not a GPU index (expected e.g. 0,1)"),  # as `zbench run` says
        ("1,1", "GPU ids: GPU 1 is named twice"),
    ):
        assert build_request("", ["resnet50"], {**form, "gpu-ids": text}) == (None, says)


async def test_cancel_asks_first() -> None:
    services = FakeServices()
    app = make_app(services=services)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "c")  # the cursor is on the newest job, 3
        assert isinstance(app.screen, ConfirmScreen)
        assert "job 3" in app.screen.prompt
        await press(pilot, "n")
        assert services.cancelled == []
        await press(pilot, "c", "y")
        assert isinstance(app.screen, DashboardScreen)
    assert services.cancelled == [3]


async def test_job_detail_shows_log_and_cancels() -> None:
    services = FakeServices()
    app = make_app(services=services)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await press(pilot, "down", "enter")  # job 2
        assert isinstance(app.screen, JobDetailScreen) and app.screen.job_id == 2
        assert "[job 2] step 56/100" in app.screen.query_one(Log).lines[-1]
        assert "state queued" in str(app.screen.query_one("#summary", Static).render())
        await press(pilot, "c", "y")
        await press(pilot, "escape")
        assert isinstance(app.screen, DashboardScreen)
    assert services.cancelled == [2]


async def test_job_detail_of_a_long_named_job_keeps_its_state_and_speed_in_sight() -> None:
    """At 80x24 the summary's box is narrow: a very long workload name is cut, so the state,
    step and samples/s stay inside the box rather than below its bottom edge."""
    job = FakeJob(5, "resnet50-" + "x" * 120, samples_per_s=2210.5)
    app = make_app(services=FakeServices(jobs=[job]))
    async with run_and_press(app, "enter", size=(80, 24)):
        assert isinstance(app.screen, JobDetailScreen)
        summary = app.screen.query_one("#summary", Static)
        text = str(summary.render())
        assert "resnet50-xxx" in text and "…" in text
        assert "state running" in text and "samples/s 2,210.5" in text
        assert summary.region.bottom <= app.screen.query_one("#top").region.bottom


async def test_job_detail_shows_the_whole_setup_the_jobs_table_cuts() -> None:
    """Two jobs alike but for a late field: the jobs table shows what tells them apart, cut to its
    column; the job's own view shows its whole setup, wrapped, the late field included."""
    config = {"batch_size": 128, "steps": 50, "image_size": 224, "channels_last": True}
    jobs = [
        FakeJob(1, "resnet50", config={**config, "preset": "review", "workers": 8}),
        FakeJob(2, "resnet50", config={**config, "preset": "max", "workers": 8}),
    ]
    app = make_app(services=FakeServices(jobs=jobs))
    async with run_and_press(app, "enter", size=(80, 24)):  # the newest first: job 2
        assert isinstance(app.screen, JobDetailScreen) and app.screen.job_id == 2
        setup = app.screen.query_one("#setup", Static)
        text = str(setup.render())
        for words in ("batch per GPU 128", "steps 50", "image size 224", "preset max"):
            assert words in text, text
        assert "review" not in text and "workload" not in text
        assert setup.region.height >= 2  # wrapped at 80 columns, not cut


async def test_launch_sends_device_warmup_image_size_preset_and_repeats() -> None:
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        screen = app.screen
        screen.query_one("#device", Select).value = "cpu"
        screen.query_one("#preset", Select).value = "max"
        for field, value in (("warmup", "2"), ("image-size", "128"), ("repeat", "3")):
            screen.query_one(f"#{field}", Input).value = value
        await press(pilot, "ctrl+s")
        (config,) = services.submitted[0].configs
        assert (config.device, config.warmup, config.image_size, config.repeat) == (
            "cpu",
            2,
            128,
            3,
        )
        assert config.preset == "max"


async def test_a_host_without_gpus_launches_on_cpu() -> None:
    from zbench.telemetry.snapshot import HostSnapshot, Snapshot

    services = FakeServices()
    app = make_app([Snapshot(t=1.0, seq=1, host=HostSnapshot())], services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        assert app.screen.query_one("#device", Select).value == "cpu"
        app.screen.query_one("#gpu-ids", Input).value = "0"
        await settle(pilot)
        assert "a cpu run uses no GPU" in str(app.screen.query_one("#error", Static).render())
        app.screen.query_one("#gpu-ids", Input).value = ""
        await press(pilot, "ctrl+s")
        assert services.submitted[0].configs[0].device == "cpu"


async def test_cancel_of_an_ended_job_says_so() -> None:
    services = FakeServices()
    app = make_app(services=services)
    seen: list[str] = []
    async with app.run_test(size=(160, 50)) as pilot:
        app.notify = lambda message, **kw: seen.append(str(message))  # type: ignore[method-assign]
        await settle(pilot)
        await press(pilot, "down", "down")  # job 1, done
        await press(pilot, "c")
        assert not isinstance(app.screen, ConfirmScreen)
        assert seen == ["job 1 already ended (done): nothing to cancel"]
        assert services.cancelled == []


async def test_cancel_on_the_detail_of_a_job_not_found_says_so() -> None:
    """The detail screen shows its Cancel key for a job the list does not have (yet): pressing
    it tells the user there is nothing to cancel instead of doing nothing."""
    services = FakeServices(jobs=[])
    app = make_app(services=services)
    seen: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.notify = lambda message, **kw: seen.append(str(message))  # type: ignore[method-assign]
        await settle(pilot)
        app.push_screen(JobDetailScreen(9))
        await settle(pilot)
        assert "job not found" in str(app.screen.query_one("#summary", Static).render())
        await press(pilot, "c")
        assert not isinstance(app.screen, ConfirmScreen)
        assert seen == ["job 9 not found: nothing to cancel"]
        assert services.cancelled == []


async def test_the_launch_fields_come_from_the_option_table() -> None:
    from zbench.contract.config import RUN_OPTION
    from zbench.tui.launch_form import TABLE

    app = make_app()
    async with run_and_press(app, "l", size=(160, 50)):
        for opt in TABLE:
            widget = app.screen.query_one(f"#{opt.flag[2:]}")
            assert str(widget.tooltip) == opt.help
            if opt.kind in ("choice", "bool"):
                assert isinstance(widget, Select)
                choices = opt.choices if opt.kind == "choice" else ("on", "off")
                assert [v for _, v in widget._options if v != Select.NULL] == list(choices)
            else:
                assert isinstance(widget, Input)
                assert widget.placeholder == f"{opt.shown_default} (default)"
        steps = app.screen.query_one("#steps", Input)
        assert (
            steps.placeholder == f"{RUN_OPTION['steps'].default_text} (default)" == "50 (default)"
        )


async def test_more_options_reach_the_runner() -> None:
    from textual.widgets import Collapsible

    from zbench.contract.config import RUN_OPTIONS
    from zbench.tui.launch_form import MORE, TABLE

    # Every option of the table is a field, but the GPU count (from the indices) and the data
    # source (the "data" field): the dialog offers what `zbench run` offers.
    fields = {o.name for o in TABLE} | {"gpus", "data", "data_source"}
    assert fields == {o.name for o in RUN_OPTIONS} and "compile" in MORE
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        assert app.screen.query_one("#more", Collapsible).collapsed
        app.screen.query_one("#compile", Select).value = "off"
        app.screen.query_one("#channels-last", Select).value = "on"
        app.screen.query_one("#seed", Input).value = "7"
        await press(pilot, "ctrl+s")
    (config,) = services.submitted[0].configs
    assert (config.compile, config.channels_last, config.xla, config.seed) == (False, True, None, 7)


async def test_launch_refuses_what_the_runner_would_refuse_before_closing() -> None:
    """Options the runner refuses (steps over the cap, one sample of a batch-norm model, a field
    value that reads like an option) are named in the dialog, in its words, and it stays open; it
    used to close and queue nothing, with "launch failed"."""
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        cases = {
            "steps": (
                "10000001",
                "resnet50: steps: must be at least 1 and at most 10,000,000, got 10000001",
            ),
            "batch-size": ("1", "resnet50 training needs --batch-size 2 or more"),
            "warmup": ("-x", "resnet50: warmup: must be a whole number, got '-x'"),
        }
        for field, (value, message) in cases.items():
            box = app.screen.query_one(f"#{field}", Input)
            box.focus()
            await press(pilot, *value)
            assert message in str(app.screen.query_one("#error", Static).render())
            assert app.screen.query_one("#launch", Button).disabled
            await press(pilot, "ctrl+s")
            assert isinstance(app.screen, LaunchScreen)
            box.value = ""
            await settle(pilot)
        assert str(app.screen.query_one("#error", Static).render()) == ""
    assert services.submitted == []


async def test_a_failed_jobs_reason_is_shown_whole_at_80x24() -> None:
    """The reason a job failed is what its detail is opened for: every word of a long one is on
    the screen at 80x24. In the summary's narrow box it was cut after about 80 characters."""
    import html
    import re

    from .fakes import NOW, FakeJob

    reason = (
        "out of memory: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 139.8 GiB total"
        " capacity; 137.2 GiB already allocated); lower --batch-size (now 512)"
    )
    failed = FakeJob(4, "vgg16", state="failed", ended=NOW - 5, reason=reason)
    app = make_app(services=FakeServices(jobs=[failed]))
    async with run_and_press(app, "enter", size=(80, 24)):
        assert isinstance(app.screen, JobDetailScreen) and app.screen.job_id == 4
        svg = app.export_screenshot()
    shown = html.unescape(" ".join(re.findall(r"<text [^>]*>(.*?)</text>", svg)))
    assert all(word in shown.replace("\xa0", " ").split() for word in reason.split())


async def test_gpu_ids_the_machine_lacks_are_refused_in_the_dialog() -> None:
    """GPU 7 on a 2-GPU machine (or a full-width ７) used to be queued, and the job then failed
    with "needs GPU 7; this machine offers GPUs 0,1"; the dialog names it and stays open. On a
    host without a GPU, device cuda is refused the same way."""
    from zbench.telemetry.snapshot import HostSnapshot, Snapshot

    services = FakeServices()
    app = make_app(services=services)  # the 2-GPU trace
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        for ids in ("7", "０,７"):
            app.screen.query_one("#gpu-ids", Input).value = ids
            await settle(pilot)
            error = str(app.screen.query_one("#error", Static).render())
            assert error == "GPU ids: no GPU 7 on this machine (it offers GPUs 0,1)"
            await press(pilot, "ctrl+s")
            assert isinstance(app.screen, LaunchScreen)
    assert services.submitted == []
    app = make_app([Snapshot(t=1.0, seq=1, host=HostSnapshot())], services=services)
    async with run_and_press(app, "l", size=(80, 24)) as pilot:
        app.screen.query_one("#device", Select).value = "cuda"
        await settle(pilot)
        error = str(app.screen.query_one("#error", Static).render())
        assert error == "device: no GPU on this machine: pick device cpu"
        await press(pilot, "ctrl+s")
        assert isinstance(app.screen, LaunchScreen)
    assert services.submitted == []


async def test_a_dataset_path_under_home_reaches_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "~/imagenet" as the data path: the dialog found the folder, then gave the runner
    "<current folder>/~/imagenet", which does not exist (the launch failed)."""
    from tests.datasets_fixtures import make_imagefolder

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "imagenet").mkdir()
    services = FakeServices()
    app = make_app(services=services)
    async with run_and_press(app, "l", size=(160, 50)) as pilot:
        app.screen.query_one("#data", Select).value = "dataset"
        app.screen.query_one("#path", Input).value = "~/imagenet"
        await settle(pilot)
        # An empty folder is no dataset: the dialog says so in the layout check's words, as
        # `zbench run --data` does, before any job is queued.
        error = str(app.screen.query_one("#error", Static).render())
        assert error.startswith(f"resnet50 --data {tmp_path / 'imagenet'}: not a known dataset")
        make_imagefolder(tmp_path / "imagenet", per_class=1, splits=("train",))
        app.screen.query_one("#path", Input).value = "~/imagenet "  # typed again: checked again
        await settle(pilot)
        assert str(app.screen.query_one("#error", Static).render()) == ""
        await press(pilot, "ctrl+s")
    assert services.submitted[0].configs[0].data == str(tmp_path / "imagenet")
