"""Options that cannot run are refused before a job is queued: one line, exit 2 (issue 28)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.contract.config import RunConfig
from zbench.jobs.api import check_config

WIDE = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}


@pytest.fixture
def cli(jobenv: Path) -> CliRunner:
    return CliRunner(env=WIDE)


def _no_job(cli: CliRunner, db: Path) -> bool:
    return not db.exists() or json.loads(cli.invoke(app, ["jobs", "--all", "--json"]).output) == []


def _one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


@pytest.mark.parametrize("gpus", ["1", "2"])
def test_training_a_batch_norm_model_on_one_sample_is_refused(
    cli: CliRunner, jobenv: Path, gpus: str
) -> None:
    argv = ["run", "resnet50", "--device", "cpu", "--batch-size", "1", "--gpus", gpus]
    result = cli.invoke(app, argv)
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert "--batch-size 2 or more" in line and "Traceback" not in result.output
    assert ("per GPU" in line) == (gpus == "2")
    assert _no_job(cli, jobenv)


def test_batch_1_is_fine_for_inference_and_for_a_model_without_batch_norm() -> None:
    for config in (
        RunConfig("resnet50", mode="infer", batch_size=1, device="cpu"),
        RunConfig("vgg16", batch_size=1, device="cpu"),
        RunConfig("fasterrcnn", batch_size=1, device="cpu"),
    ):
        assert check_config(config) is None


def test_the_runner_refuses_batch_1_training_too() -> None:
    from zbench.contract.resolve import check_shape

    assert "batch norm" in (check_shape(RunConfig("resnet50", batch_size=1, gpus=4)) or "")


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--batch-size", "99999999999999999999999"], "a batch of 99999999999999999999999 at"),
        (["--image-size", "99999999999999999999"], "a batch of 128 at --image-size 9999"),
    ],
)
def test_an_input_no_device_can_hold_is_refused(
    cli: CliRunner, jobenv: Path, options: list[str], says: str
) -> None:
    """A shape past a 64-bit count was queued and crashed in torch ('Overflow when unpacking
    long long'); a batch's input of more than 2^40 values is a typo, said before queueing."""
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", *options])
    assert result.exit_code == 2
    line = _one_line(result.output)
    assert says in line and "more than any device holds" in line
    assert _no_job(cli, jobenv)


def test_a_large_input_a_big_machine_may_hold_is_not_refused() -> None:
    """1.1e11 input values (440 GB of fp32): a host or a GPU may hold it; the runner says if not."""
    assert (
        check_config(RunConfig("resnet50", batch_size=10**6, image_size=192, device="cpu")) is None
    )
    assert (
        check_config(RunConfig("unet3d", batch_size=1, image_size=16384, device="cpu")) is not None
    )


def test_more_cpu_processes_than_cores_is_refused(cli: CliRunner, jobenv: Path) -> None:
    many = str((os.cpu_count() or 1) + 6)
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", "--gpus", many])
    assert result.exit_code == 2
    assert "--gpus counts GPUs" in _one_line(result.output)
    assert _no_job(cli, jobenv)


def test_an_unreachable_node_is_named_in_one_line_and_nothing_is_queued(
    jobenv: Path,
) -> None:
    argv = ["run", "resnet50", "--device", "cpu", "--nodes", "localhost,127.0.0.1:1:"]
    out = CliRunner().invoke(app, argv)
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zbench: run: --nodes: 127.0.0.1:1: ssh failed")
    assert _no_job(CliRunner(), jobenv)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--xla"], "--xla is TensorFlow's: PyTorch compiles with --compile"),
        (["--framework", "tf", "--compile"], "--compile: PyTorch only"),
        (
            ["--framework", "tf", "--channels-last", "--graphs", "step"],
            "--channels-last, --graphs step: PyTorch only",
        ),
        (["--graphs", "step"], "--graphs step: CUDA graphs need --device cuda"),
        (["--grad-compression", "bf16"], "it needs --gpus 2 or more"),
    ],
)
def test_an_option_that_cannot_apply_is_refused_before_it_is_queued(
    cli: CliRunner, jobenv: Path, argv: list[str], says: str
) -> None:
    """Each was queued and ran, and the run recorded the option as its setting ("Xla on" for a
    PyTorch run, "Graphs step" on the CPU), or failed only once the job had started."""
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", *argv])
    assert result.exit_code == 2
    assert says in _one_line(result.output)
    assert _no_job(cli, jobenv)
