"""The demo registry and its options: schemas to one parser, argv round trips, the tracking guard,
motion's options as its `run` takes them, and `zbench demo motion` help and bad input."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.contract import demos as registry
from zbench.contract.demo_options import DemoConfig, parse_args
from zbench.contract.options import UsageError
from zbench.demos.motion.job import motion_options
from zbench.demos.tracking import RENAMED
from zbench.jobs.runjob import command_for

CLI = CliRunner(env={"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"})


def test_registry_names_titles_and_views() -> None:
    found = registry.demos()
    assert list(found)[:2] == ["snake", "motion"]
    assert found["motion"].title == "Talking-head motion transfer"
    assert found["motion"].view == "pixels" and found["snake"].view == "snake"
    assert registry.known("tracking") is not None and registry.known("nope") is None
    with pytest.raises(
        UsageError, match="demo: must be one of snake, motion, tracking, got 'nope'"
    ):
        registry.get("nope")


def test_live_rates_are_named_as_the_result_figures_they_end_on() -> None:
    """A live rate's path is one of the demo's summary figures: the phase's last progress event
    carries the result's figure under the same name."""
    for demo in (registry.MOTION, registry.TRACKING):
        summary = {path for _, path in demo.summary}
        paths = [path for line in demo.live_rates for _, path in line]
        assert paths and set(paths) <= summary, demo.name
    assert registry.MOTION.live_rates[0][0] == ("generated", "stream_fps")
    assert registry.TRACKING.live_rates[0][0] == ("tracked", "fps.end_to_end")
    assert registry.SNAKE.live_rates == ()
    assert registry.has_figure({"fps": {"end_to_end": None}}, "fps.end_to_end")
    assert not registry.has_figure({"fps": 3.0}, "fps.end_to_end")
    assert not registry.has_figure({"loss": 1.0}, "stream_fps")


def test_tracking_appears_only_with_a_run_entry(tmp_path: Path, monkeypatch) -> None:
    for name, body in (
        ("with_run", "def run(options, emit):\n    return {}\n"),
        ("without_run", "RUN = None\n"),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registry.has_run_entry("with_run") and not registry.has_run_entry("without_run")
    assert not registry.has_run_entry("no_such_module_here")
    fake = registry.Demo(**{**registry.TRACKING.__dict__, "module": "without_run"})
    monkeypatch.setattr(registry, "_ALL", (registry.SNAKE, registry.MOTION, fake))
    assert "tracking" not in registry.demos()
    fake = registry.Demo(**{**registry.TRACKING.__dict__, "module": "with_run"})
    monkeypatch.setattr(registry, "_ALL", (registry.SNAKE, registry.MOTION, fake))
    assert registry.demos()["tracking"].view == "boxes"
    config, _ = parse_args(["tracking", "--tracker", "bytetrack", "--device", "cpu"])
    assert config.mode == "bytetrack" and config.input == "generated"
    assert "sys" in sys.modules  # the guard read the file; nothing was imported from it
    assert "with_run" not in sys.modules


def test_motion_config_round_trips_through_argv_and_the_job_row() -> None:
    config = DemoConfig.of("motion", mode="animate", size=128, drive="webcam:0", device="cpu")
    assert parse_args(config.to_argv())[0] == config
    row = config.as_dict()
    assert row["kind"] == "demo" and row["mode"] == "animate" and row["gpus"] == 0
    assert DemoConfig.from_dict(row) == config
    cmd = command_for(row["kind"], row, Path("ev.jsonl"))
    assert cmd[1:4] == ["-m", "zbench.demos", "motion"] and "--animate" in cmd
    assert cmd[cmd.index("--size") + 1] == "128"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["motion", "--size", "100"], "multiple of 32"),
        (["motion", "--size", "32"], "at least 64"),
        (["motion", "--train", "--animate"], "not allowed with"),
        (["motion", "--minutes", "0"], "more than 0"),
        (["motion", "--device", "tpu"], "must be one of"),
        (["motion", "--board", "12"], "unrecognized arguments"),
        # NaN passes every comparison: it was queued and crashed writing its first event
        (["snake", "--minutes", "nan"], "must be a finite number, got 'nan'"),
        (["snake", "--minutes", "inf"], "must be a finite number"),
        # the bounds as given, not rounded by %g ("at most 1e+06, got 1e+06")
        (["tracking", "--frames", "1000001"], "at most 1,000,000, got 1000001$"),
        (["snake", "--envs", "2000000"], "at most 1,048,576, got 2000000$"),
        # torch's seed overflowed a 64-bit integer once the demo ran
        (["snake", "--seed", "99999999999999999999"], "at least 0 and at most 4,294,967,295"),
        (["tracking", "--seed", "-1"], "at least 0"),
        # `zbench demo snake -- --help` printed the demo process's usage and exited 0
        (["snake", "--help"], "unrecognized arguments: --help"),
        (["-h"], "required: DEMO"),
    ],
)
def test_bad_motion_options_are_one_line_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message) as err:
        parse_args(argv)
    assert "\n" not in str(err.value)


def test_motion_options_are_what_run_takes(tmp_path: Path) -> None:
    opts = motion_options(DemoConfig.of("motion", mode="animate").as_options(), tmp_path)
    assert opts["minutes"] == 0.0 and opts["drive"] == "scripted" and opts["size"] == 256
    assert opts["checkpoint_dir"] == str(tmp_path / "demos" / "motion")
    assert opts["out"].startswith(opts["checkpoint_dir"]) and opts["out"].endswith(".mp4")

    def given(**options: object) -> dict[str, object]:  # what the demo's parser gives its entry
        return motion_options(DemoConfig.of("motion", **options).as_options(), tmp_path)

    opts = given(drive="clip.mp4", minutes=2.5, checkpoint="x")
    assert opts["drive"] == "clip.mp4" and opts["minutes"] == 2.5 and opts["checkpoint_dir"] == "x"
    assert opts["compile"] is True  # on a GPU by default: eager batch 1 misses 120 frames/s
    assert given(compile=False)["compile"] is False
    assert given(device="cpu")["compile"] is False
    assert given(smoke=True)["compile"] is False


# Each demo's own options dataclass (what its ``run`` takes), the table's options it knows by
# another name, and those its job turns into something else (motion's ``--animate`` is a zero
# training budget). Snake's training loop reads
# the table's ``DemoConfig`` itself: it has no second set of defaults to drift.
RUN_OPTIONS: dict[str, tuple[str, dict[str, str], set[str]] | None] = {
    "snake": None,
    "motion": (
        "zbench.demos.motion.demo:MotionOptions",
        {"checkpoint": "checkpoint_dir"},
        {"mode"},
    ),
    "tracking": ("zbench.demos.tracking.demo:TrackingOptions", RENAMED, set()),
}


def test_every_demo_says_where_its_run_options_are() -> None:
    assert set(RUN_OPTIONS) == set(registry.demos())


@pytest.mark.parametrize("demo", [d for d, where in RUN_OPTIONS.items() if where is not None])
def test_run_options_default_to_the_demo_table(demo: str) -> None:
    """One set of defaults: each option the table declares has the table's default in the demo's
    own options dataclass too (a direct ``run`` call gets what ``zbench demo`` gets)."""
    import importlib
    from dataclasses import MISSING, fields

    pytest.importorskip("torch")
    where = RUN_OPTIONS[demo]
    assert where is not None
    path, renamed, derived = where
    module, name = path.split(":")
    own = {
        f.name: f.default
        for f in fields(getattr(importlib.import_module(module), name))
        if f.default is not MISSING
    }
    table = {k: v for k, v in registry.get(demo).defaults().items() if k not in derived}
    assert [k for k in table if renamed.get(k, k) not in own] == []  # every option has a field
    assert {k: own[renamed.get(k, k)] for k in table} == table


def test_a_smoke_motion_job_shows_the_size_it_runs_at() -> None:
    """``--smoke`` runs motion at 64x64 on at most 12 frames: the job's stored config, the start
    event its process writes and the live view say so, not the options' defaults (256, 150);
    ``run``'s own options read the same caps from the table."""
    from zbench.demos.adapter import EntryAdapter
    from zbench.tui.demo_view import DemoView

    config, _ = parse_args(["motion", "--smoke", "--device", "cpu"])
    assert (config.size, config.frames) == (64, 12)
    row = config.as_dict()  # what the store keeps and `zbench jobs` shows
    assert (row["size"], row["frames"]) == (64, 12) and DemoConfig.from_dict(row) == config
    in_process = parse_args(command_for("demo", row, Path("ev.jsonl"))[3:])[0]
    start = EntryAdapter(in_process).config()  # the start event's config
    assert (start["size"], start["frames"]) == (64, 12)
    view = DemoView()
    view.apply([{"type": "start", "t": 1.0, "demo": "motion", "config": start}])
    assert "size 64" in view.figures() and "size 256" not in view.figures()
    # Fewer frames than the cap are kept; --smoke without --smoke's options changes nothing.
    assert DemoConfig.of("motion", smoke=True, frames=5).frames == 5
    assert DemoConfig.of("motion", size=128).size == 128
    pytest.importorskip("torch")
    from zbench.demos.motion.demo import MotionOptions

    opts = MotionOptions.parse({"smoke": True})
    assert (opts.size, opts.frames, opts.batch, opts.steps) == (64, 12, 4, 6)


def test_motion_writes_under_the_data_folder_and_keeps_smoke_models_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job and a direct ``run`` call put the checkpoint and the video in the same folder under
    ZBENCH_HOME, never the working folder; a smoke run's tiny model goes to a folder of its own,
    so a real run never resumes from it."""
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    real = motion_options(DemoConfig.of("motion").as_options(), tmp_path / "home")
    smoke = motion_options(DemoConfig.of("motion", smoke=True).as_options(), tmp_path / "home")
    assert real["checkpoint_dir"] == str(tmp_path / "home" / "demos" / "motion")
    assert smoke["checkpoint_dir"] == str(tmp_path / "home" / "demos" / "motion" / "smoke")
    pytest.importorskip("torch")
    from zbench.demos.motion.demo import MotionOptions

    for job in (real, smoke):
        opts = MotionOptions.parse({"smoke": job is smoke})
        assert opts.checkpoint_dir == job["checkpoint_dir"]
        assert opts.out and Path(opts.out).parent == Path(job["checkpoint_dir"])
    assert MotionOptions.parse({"checkpoint_dir": "x", "out": "y.gif"}).out == "y.gif"


def test_a_smoke_tracking_job_shows_its_frames_and_batch() -> None:
    config, _ = parse_args(["tracking", "--smoke", "--device", "cpu"])
    assert (config.frames, config.batch) == (8, 4)
    assert DemoConfig.of("tracking", smoke=True, batch=2).batch == 2


def test_cli_demo_motion_help_lists_its_options() -> None:
    out = CLI.invoke(app, ["demo", "motion", "--help"])
    assert out.exit_code == 0
    for flag in ("--train|--animate", "--drive", "--size", "--checkpoint", "--detach"):
        assert flag in out.output, flag


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "100", "--device", "cpu"], "--size: must be a multiple of 32"),
        (["--drive"], "--drive: expected one argument"),
        (["--animate", "--device", "cpu"], "--animate needs a trained model"),
        (["--play", "x.pt"], "--play and --human are for snake"),
    ],
)
def test_cli_demo_motion_bad_input_exits_2(
    args: list[str], message: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    out = CLI.invoke(app, ["demo", "motion", *args])
    assert out.exit_code == 2
    assert message in out.output and len(out.output.strip().splitlines()) == 1


def test_demo_paths_are_made_absolute_where_they_are_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo runs in the supervisor's folder, which may not be the user's: a relative
    --input, --out or --checkpoint named a file there. Built-in words stay words."""
    monkeypatch.chdir(tmp_path)
    config, _ = parse_args(["tracking", "--input", "clip.mp4", "--out", "res", "--gt", "gt.txt"])
    options = config.as_options()
    assert options["input"] == str(tmp_path / "clip.mp4")
    assert options["out"] == str(tmp_path / "res") and options["gt"] == str(tmp_path / "gt.txt")
    assert parse_args(["tracking"])[0].as_options()["input"] == "generated"
    assert parse_args(["motion", "--drive", "webcam:0"])[0].as_options()["drive"] == "webcam:0"
    snake, _ = parse_args(["snake", "--checkpoint", "s.pt"])
    assert snake.as_options()["checkpoint"] == str(tmp_path / "s.pt")


@pytest.mark.parametrize(
    "argv",
    [["tracking", "--out", ""], ["tracking", "--checkpoint", " "], ["motion", "--checkpoint", ""]],
)
def test_a_blank_demo_path_is_refused(argv: list[str]) -> None:
    """A blank --out passed every check and the demo wrote its results in whatever folder the
    job ran in; a blank --checkpoint made a folder named ' ' there."""
    with pytest.raises(UsageError, match="needs a file or folder name"):
        parse_args(argv)
