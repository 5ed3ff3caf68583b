"""The shared demo runner: options, the job command line, events (frame schema), CLI, checkpoints."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.demos.demo_process import run_demo_process
from zbench.cli import app
from zbench.contract.demo_options import DemoConfig, parse_args
from zbench.contract.options import UsageError
from zbench.contract.protocol import read_events
from zbench.demos.snake.model import SnakeNet, load_checkpoint, save_checkpoint
from zbench.jobs.runjob import command_for
from zbench.runners.harness import BadInput

ROOT = Path(__file__).resolve().parents[2]


def test_config_round_trips_through_argv_and_the_job_row() -> None:
    config = DemoConfig.of(
        "snake", algo="dqn", faithful=True, board=8, envs=128, minutes=0.5, device="cpu"
    )
    assert parse_args(config.to_argv())[0] == config
    row = config.as_dict()
    assert row["kind"] == "demo" and row["gpus"] == 0 and row["framework"] == "demo"
    cmd = command_for(row["kind"], row, Path("ev.jsonl"))
    assert cmd[1:4] == ["-m", "zbench.demos", "snake"]
    assert cmd[4:6] == ["--events", "ev.jsonl"] and "--faithful" in cmd


@pytest.mark.parametrize(
    "argv",
    [["snek"], ["snake", "--board", "3"], ["snake", "--minutes", "0"], ["snake", "--algo", "a2c"]],
)
def test_bad_options_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(UsageError):
        parse_args(argv)


def test_checkpoint_save_and_safe_load(tmp_path: Path) -> None:
    net = SnakeNet(6, width=8)
    path = save_checkpoint(tmp_path / "a" / "net.pt", net, {"algo": "ppo"})
    loaded, meta = load_checkpoint(path)
    assert meta["size"] == 6 and meta["algo"] == "ppo" and meta["width"] == 8
    x = torch.rand(3, 4, 8, 8)
    assert torch.equal(loaded(x)[0], net.eval()(x)[0])
    torch.save({"state_dict": {}, "meta": {"size": 6}, "evil": object()}, tmp_path / "bad.pt")
    with pytest.raises(BadInput, match="not a checkpoint of tensors") as refused:
        load_checkpoint(tmp_path / "bad.pt")  # weights_only refuses arbitrary objects ...
    assert "weights_only" not in str(refused.value)  # ... and its advice is not passed on


def test_runner_writes_start_frames_progress_result(tmp_path: Path) -> None:
    events = tmp_path / "ev.jsonl"
    args = ["--device", "cpu", "--board", "5", "--envs", "16", "--minutes", "0.02"]
    args += ["--checkpoint", str(tmp_path / "s.pt")]
    proc = run_demo_process("snake", *args, events=events, timeout=240)
    assert proc.returncode == 0, proc.stderr
    evs = list(read_events(events))
    types = [e["type"] for e in evs]
    assert types[0] == "start" and types[-2:] == ["result", "phase"]
    assert [e["phase"] for e in evs if e["type"] == "phase"] == [
        "setup",
        "warmup",
        "measure",
        "done",
    ]
    frames = [e for e in evs if e["type"] == "frame"]
    assert frames, "no frame event"
    for f in frames:  # the frame schema of docs/runner-protocol.md
        assert f["demo"] == "snake"
        b = f["board"]
        assert b["size"] == 5 and len(b["age"]) == 5 and all(len(r) == 5 for r in b["age"])
        assert len(b["head"]) == 2 and len(b["fruit"]) == 2
        assert b["score"] == b["length"] - 3
        assert {"t_s", "env_steps", "mean_score", "best_score"} <= f.keys()
        assert len(json.dumps(f)) < 2000  # small
    times = [f["t"] for f in frames]
    assert all(b - a >= 0.2 for a, b in itertools.pairwise(times))  # rate-limited
    result = next(e for e in evs if e["type"] == "result")
    assert result["env_steps"] > 0 and result["samples_per_s"] > 0
    assert Path(result["checkpoint"]).is_file()


def test_runner_without_cuda_says_so(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    events = tmp_path / "ev.jsonl"
    proc = run_demo_process("snake", events=events, timeout=120)
    assert proc.returncode == 1
    [err] = [e for e in read_events(events) if e["type"] == "error"]
    assert err["kind"] == "unavailable" and "--device cpu" in err["message"]


def test_cli_help_and_bad_input() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["demo", "--help"], terminal_width=100)
    assert out.exit_code == 0 and "--human" in out.output and "--play" in out.output
    bad = runner.invoke(app, ["demo", "snake", "--board", "2", "--device", "cpu"])
    assert bad.exit_code == 2
    missing = runner.invoke(app, ["demo", "snake", "--play", "nope.pt"])
    assert missing.exit_code == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Each was ignored before: -f ran the demo, --detach and --timeout played in the terminal.
        (["snake", "-f", "csv"], "--format is for `zbench demo results`"),
        (["snake", "--human", "--detach"], "not as a job: no --detach, --timeout or --tag"),
        (["snake", "--human", "--timeout", "5"], "not as a job: no --detach, --timeout or --tag"),
        (["snake", "--human", "--tag", "x"], "not as a job: no --detach, --timeout or --tag"),
        # No terminal to read keys from: the snake went straight on, game after game, forever.
        (["snake", "--human"], "--human reads the arrow keys from a terminal"),
        # The player was handed "--board 2" (or ignored --board=8 and --minutes) unchecked.
        (["snake", "--human", "--board", "2"], "--board: must be at least 4"),
        (["snake", "--human", "--minutes=1"], "--minutes is for training snake"),
        (["snake", "--human", "--play", "x.pt"], "one or the other"),
    ],
)
def test_cli_demo_options_that_do_not_apply_exit_2(
    args: list[str], message: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    out = CliRunner().invoke(app, ["demo", *args])  # CliRunner's stdin is no terminal
    assert out.exit_code == 2, out.output
    assert message in out.output and len(out.output.strip().splitlines()) == 1
    assert out.output.startswith(f"zbench: demo {args[0]}: "), out.output  # as its options' errors


@pytest.mark.parametrize(
    ("argv", "board"), [([], "12"), (["--board", "8"], "8"), (["--board=9"], "9")]
)
def test_human_play_hands_the_player_the_board_it_was_given(
    argv: list[str], board: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import subprocess
    import sys

    from zbench.cli.demos import play_snake

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    calls: list[list[str]] = []
    monkeypatch.setattr(sys, "stdin", Tty())
    monkeypatch.setattr(subprocess, "call", lambda cmd: calls.append(cmd) or 0)
    assert play_snake(argv, None, True) == 0
    assert calls == [[sys.executable, "-m", "zbench.demos.snake.play", "--board", board]]


@pytest.mark.parametrize(
    "module",
    [
        "zbench.contract.demo_options",
        "zbench.contract.demos",
        "zbench.demos.motion.job",
        "zbench.demos.snake",
        "zbench.demos.snake.render",
        "zbench.tui.widgets.pixels",
        "zbench.results.demos",
        "zbench.tui.screens.demo",
    ],
)
def test_shared_demo_modules_are_framework_free(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in ('torch', 'tensorflow') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr
