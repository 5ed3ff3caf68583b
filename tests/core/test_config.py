from __future__ import annotations

from pathlib import Path

import pytest

from zbench.contract.config import RunConfig, parse_args
from zbench.contract.options import UsageError
from zbench.contract.workloads import WORKLOADS


def test_defaults_resolve_to_review_settings() -> None:
    cfg, events = parse_args(["resnet50"])
    assert cfg == RunConfig(workload="resnet50")
    assert events is None
    assert WORKLOADS["resnet50"].default_batch == 128


def test_to_argv_round_trips() -> None:
    cfg = RunConfig(
        workload="unet3d",
        framework="tf",
        mode="infer",
        precision="bf16",
        batch_size=2,
        channels_last=True,
        xla=True,
        data="/data/kits19",
        extra=("--nnodes", "2"),
    )
    again, events = parse_args(cfg.to_argv(events="fd:3"))
    assert again == cfg
    assert events == "fd:3"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["alexnet"], "must be one of"),
        (["resnet50", "--batch-size", "0"], "at least 1"),
        (["resnet50", "--batch-size", "x"], "whole number"),
        (["resnet50", "--precision", "int8"], "must be one of"),
        (["resnet50", "--warmup", "-1"], "at least 0 and at most 10,000,000, got -1"),
        # NumPy refused a negative seed and torch a 64-bit overflow, each once the job ran
        (["resnet50", "--seed", "-1"], "at least 0 and at most 4,294,967,295, got -1"),
        (["resnet50", "--seed", "18446744073709551616"], "at most 4,294,967,295"),
        # A blank path named the folder the job ran in ('--data ""' said "--data : no such ...")
        (["resnet50", "--data", ""], "argument --data: needs a file or folder name, got ''"),
        (["resnet50", "--data", " "], "needs a file or folder name, got ' '"),
    ],
)
def test_bad_options_raise_one_line_usage_error(argv: list[str], fragment: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_args(argv)
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("argv", [["-h"], ["--help"], ["resnet50", "--help"]])
def test_help_is_bad_input_outside_the_runner(argv: list[str]) -> None:
    """`zbench run -- -h` printed the runner's own usage and exited 0; -h is the runner's."""
    with pytest.raises(UsageError):
        parse_args(argv)
    with pytest.raises(SystemExit) as done:
        parse_args(argv, add_help=True)
    assert done.value.code == 0


def test_a_relative_data_path_is_made_absolute_where_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job runs in the supervisor's folder: `--data flowers` from another folder was checked
    here, queued, and failed there ('dataset folder not found: flowers')."""
    monkeypatch.chdir(tmp_path)
    cfg, _ = parse_args(["resnet50", "--data", "flowers"])
    assert cfg.data == str(tmp_path / "flowers")
    assert parse_args(cfg.to_argv())[0] == cfg  # the runner's own parse keeps it
