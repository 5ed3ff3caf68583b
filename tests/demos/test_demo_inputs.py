"""A demo's input files are checked before a job is queued (one line, exit 2), and the runner
refuses an unreadable checkpoint in one line without PyTorch's weights_only advice (issue 28,
case 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.contract import demos as registry
from zbench.contract import inputs
from zbench.contract.demo_options import parse_args

ROOT = Path(__file__).resolve().parents[2]
CLI = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    return tmp_path


def _refused(argv: list[str], needle: str, home: Path) -> None:
    out = CLI.invoke(app, argv)
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.output
    db = home / "home" / "zbench.db"
    assert not db.exists() or json.loads(CLI.invoke(app, ["jobs", "--all", "--json"]).output) == []


def test_a_garbage_play_checkpoint_is_one_line(home: Path) -> None:
    junk = home / "junk.pt"
    junk.write_bytes(b"not a checkpoint at all")
    _refused(["demo", "snake", "--play", str(junk)], "not a PyTorch checkpoint", home)


def test_a_missing_tracking_input_is_refused_before_queueing(home: Path) -> None:
    argv = ["demo", "tracking", "--input", str(home / "missing.mp4"), "--device", "cpu"]
    _refused(argv, "no such file or folder", home)


def test_a_video_without_opencv_is_refused_before_queueing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = home / "clip.mp4"
    clip.write_bytes(b"\x00" * 64)
    monkeypatch.setattr(inputs, "opencv_missing", lambda: True)
    argv = ["demo", "tracking", "--input", str(clip), "--device", "cpu"]
    _refused(argv, "reading a video needs OpenCV", home)
    _refused(["demo", "motion", "--drive", str(clip), "--device", "cpu"], "needs OpenCV", home)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["snake", "--checkpoint", "{f}/snake.pt"], "is a file, not a folder"),
        (["snake", "--checkpoint", "{d}"], "a folder, not a file"),
        (["tracking", "--out", "{f}"], "--out {f}: not a folder"),
        (["tracking", "--checkpoint", "{f}/models/x"], "is a file, not a folder"),
        (["motion", "--checkpoint", "{f}"], "--checkpoint {f}: not a folder"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_queueing(
    home: Path, argv: list[str], says: str
) -> None:
    """Each demo writes its checkpoint or results after training: a place it could not make
    crashed the job at the end ('FileNotFoundError') and lost the measured run."""
    (home / "a_file").write_text("x")
    names = {"f": str(home / "a_file"), "d": str(home)}
    config, _ = parse_args([a.format(**names) for a in argv])
    assert says.format(**names) in (registry.check(config.entry, config.as_options()) or "")


def test_zbench_demo_refuses_an_unwritable_checkpoint_in_one_line(home: Path) -> None:
    (home / "a_file").write_text("x")
    tiny = ["--minutes", "0.01", "--envs", "2", "--board", "4", "--device", "cpu"]
    argv = ["demo", "snake", "--checkpoint", str(home / "a_file" / "s.pt"), *tiny]
    _refused(argv, "is a file, not a folder", home)


def test_an_output_place_that_can_be_made_is_accepted(tmp_path: Path) -> None:
    new = tmp_path / "new" / "deeper"
    assert inputs.output_problem(new / "s.pt", "--checkpoint", folder=False) is None
    assert inputs.output_problem(new, "--out", folder=True) is None
    assert inputs.output_problem(tmp_path, "--out", folder=True) is None
    assert list(tmp_path.iterdir()) == []  # the look at whether it can be made leaves nothing


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_place_where_nothing_can_be_made_is_refused_whoever_asks() -> None:
    """os.access says root may write /proc: a snake trained as root for its whole budget, then
    failed to save its --checkpoint /proc/x/s.pt and lost the run."""
    problem = inputs.output_problem("/proc/zbench-x/s.pt", "--checkpoint", folder=False)
    assert problem == "--checkpoint /proc/zbench-x/s.pt: /proc is not writable"
    assert inputs.output_problem("/proc/zbench-x", "--out", folder=True)


def test_a_bad_motion_checkpoint_is_refused_before_queueing(home: Path) -> None:
    folder = home / "ckpt"
    folder.mkdir()
    (folder / "motion.pt").write_text("garbage")
    argv = ["demo", "motion", "--animate", "--checkpoint", str(folder), "--device", "cpu"]
    _refused(argv, "not a PyTorch checkpoint", home)


def test_the_runner_refuses_a_pickle_in_one_line_without_the_weights_only_advice(
    tmp_path: Path,
) -> None:
    torch = pytest.importorskip("torch")
    bad = tmp_path / "evil.pt"
    torch.save({"state_dict": {}, "meta": {"size": 6}, "evil": inputs.OPENCV_HINT.split}, bad)
    assert inputs.checkpoint_problem(bad, "--play") is None  # a real torch.save zip ...
    proc = subprocess.run(
        [sys.executable, "-m", "zbench.demos.snake.play", str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2  # ... whose pickle weights_only refuses
    assert proc.stderr.strip().count("\n") == 0 and "not a checkpoint of tensors" in proc.stderr
    assert "weights_only" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--device", "cpu"], "the policy compiles on the GPU only"),
        (["--algo", "dqn"], "only ppo's policy compiles"),
    ],
)
def test_a_snake_compile_that_would_do_nothing_is_refused(
    home: Path, argv: list[str], says: str
) -> None:
    """The policy compiles only under PPO on a GPU; elsewhere --compile was queued, did nothing
    and was recorded as the run's setting ("Compile on")."""
    _refused(["demo", "snake", "--compile", *argv], says, home)
