"""`zbench run / suite / jobs / cancel` through Typer's CliRunner with a fixed width."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.jobs import api
from zbench.store import Store

WIDE = {"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"}


@pytest.fixture
def cli(jobenv: Path) -> CliRunner:
    return CliRunner(env=WIDE)


def test_run_validates_runner_args_before_submitting(cli: CliRunner, jobenv: Path) -> None:
    result = cli.invoke(app, ["run", "resnet50", "--batch-size", "0", "--device", "cpu"])
    assert result.exit_code == 2
    assert "must be at least 1" in result.output
    assert (
        not jobenv.exists() or json.loads(cli.invoke(app, ["jobs", "--all", "--json"]).output) == []
    )


def test_run_without_gpu_asks_for_cpu(cli: CliRunner) -> None:
    result = cli.invoke(app, ["run", "resnet50"])
    assert result.exit_code == 2 and "--device cpu" in result.output


def test_a_demo_on_cuda_without_a_gpu_says_so_as_run_does(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    result = cli.invoke(app, ["demo", "snake", "--device", "cuda"])
    assert result.exit_code == 2
    assert (
        result.output
        == "zbench: demo snake: no GPU on this machine (CUDA_VISIBLE_DEVICES='' hides every GPU): "
        "add --device cpu to run on the CPU\n"
    )
    assert not jobenv.exists()


def test_run_follows_and_prints_the_result(cli: CliRunner) -> None:
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", "--steps", "8"])
    assert result.exit_code == 0, result.output
    assert "ResNet-50" in result.output and "PyTorch" in result.output
    assert "Bottleneck: not judged" in result.output  # a CPU run: no GPU to judge
    listing = json.loads(cli.invoke(app, ["jobs", "--all", "--json"]).output)
    assert [j["state"] for j in listing] == ["done"]


def test_the_progress_line_names_the_phase_not_0_of_unknown() -> None:
    from zbench.cli.follow import doing
    from zbench.jobs.api import JobInfo

    fields = {f: None for f in JobInfo.__dataclass_fields__}
    info = JobInfo(**fields | {"id": 1, "state": "running", "phase": "warmup"})
    assert doing(info) == "warming up"
    assert doing(dataclasses.replace(info, phase=None)) == "starting"
    assert doing(dataclasses.replace(info, phase="setup")) == "setting up"
    assert doing(dataclasses.replace(info, phase="compile")) == "compiling"
    from zbench.cli.follow import DOING
    from zbench.contract.protocol import PHASES

    assert set(DOING) == set(PHASES)  # every phase of the protocol has its words
    assert doing(dataclasses.replace(info, state="queued")) == "queued"


def test_run_failure_exits_1_with_reason_and_log(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUNNER_BEHAVE", "crash")
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", "--json"])
    assert result.exit_code == 1
    assert "crashed: exited with status 3" in result.output
    assert "Traceback: something broke" in result.output


def test_run_detach_returns_the_id(cli: CliRunner) -> None:
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", "--detach", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output) == {"job_id": 1}


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5"])
@pytest.mark.parametrize("command", [["run", "resnet50", "--device", "cpu"], ["demo", "snake"]])
def test_a_timeout_that_would_never_fire_or_fire_at_once_is_refused(
    cli: CliRunner, jobenv: Path, value: str, command: list[str]
) -> None:
    result = cli.invoke(app, [*command, f"--timeout={value}"])
    assert result.exit_code == 2
    where = " ".join(command[:1])
    assert result.output.strip() == (
        f"zbench: {where}: --timeout: must be a finite number of seconds above 0, "
        f"got {float(value):g} (see zbench {where} -h)"
    )
    assert not jobenv.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu-ids", "x"], "--gpu-ids: 'x' is not a GPU index (expected e.g. 0,1)"),
        (["--gpu-ids", "-1"], "--gpu-ids: '-1' is not a GPU index (expected e.g. 0,1)"),
        (["--gpu-ids", "0,,1"], "--gpu-ids: '' is not a GPU index (expected e.g. 0,1)"),
        (["--gpu-ids", "0,0"], "--gpu-ids: GPU 0 is named twice"),
        (["--gpu-ids", "7,1,8"], "--gpu-ids: no GPUs 7,8 on this machine (it offers GPUs 0,1)"),
        (["--gpu-ids", "0", "--gpus", "2"], "--gpu-ids names 1 GPU but --gpus asks for 2"),
        (["--gpu-ids", "0,1", "--gpus=1"], "--gpu-ids names 2 GPUs but --gpus asks for 1"),
        (["--gpu-ids", "0", "--device", "cpu"], "--gpu-ids needs --device cuda"),
    ],
)
def test_run_checks_gpu_ids(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    result = cli.invoke(app, ["run", "resnet50", *args])
    assert result.exit_code == 2
    assert result.output.strip() == f"zbench: run: {message}"
    assert not jobenv.exists()


def test_run_on_a_machine_without_gpus_is_exit_2_naming_the_gpus_asked_for(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--gpu-ids 0` with no GPU said only "no GPU found" (and probe exited 1 where run exited
    2): GPUs named by index are the ones the machine lacks, in the words of a missing one."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    result = cli.invoke(app, ["run", "resnet50", "--gpu-ids", "0"])
    assert result.exit_code == 2
    assert result.output == (
        "zbench: run: --gpu-ids: no GPU 0 on this machine"
        " (it offers no GPU: CUDA_VISIBLE_DEVICES='' hides every GPU)\n"
    )
    result = cli.invoke(app, ["run", "resnet50"])
    assert result.exit_code == 2
    assert result.output.startswith(
        "zbench: run: no GPU on this machine (CUDA_VISIBLE_DEVICES='' hides every GPU): "
        "add --device cpu"
    )
    assert not jobenv.exists()


def test_run_gpu_ids_set_the_gpu_count(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    result = cli.invoke(app, ["run", "resnet50", "--gpu-ids", "1,0", "--detach", "--json"])
    assert result.exit_code == 0, result.output
    row = Store(jobenv).get_job(json.loads(result.output)["job_id"])
    assert row is not None
    assert row["config"]["gpus"] == 2 and row["requested_gpus"] == [1, 0]


def test_cancel_unknown_job_is_one_line_exit_2(cli: CliRunner) -> None:
    result = cli.invoke(app, ["cancel", "999"])
    assert result.exit_code == 2
    assert result.output.strip() == "zbench: cancel: no job 999"


def test_cancel_takes_several_ids_and_refuses_them_all_on_one_unknown(
    cli: CliRunner, jobenv: Path
) -> None:
    from tests.rows import job_row

    jobenv.parent.mkdir(parents=True, exist_ok=True)
    Store(jobenv).add_jobs([job_row(), job_row(), job_row(state="done", ended=2.0)])
    bad = cli.invoke(app, ["cancel", "1", "7", "2", "9"])
    assert bad.exit_code == 2 and bad.output.strip() == "zbench: cancel: no job 7, 9"
    # Read from the store: `zbench jobs` would start a supervisor for the queued jobs, which then
    # raced the cancel below for job 1 (it read "Job 1 lost." once on a busy machine).
    assert [j["state"] for j in Store(jobenv).jobs()] == [
        "queued",
        "queued",
        "done",
    ]  # none cancelled
    done = cli.invoke(app, ["cancel", "1", "2", "3", "1"])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines() == [
        "Job 1 cancelled.",
        "Job 2 cancelled.",
        "Job 3 already ended (done); nothing to cancel.",
    ]


def test_suite_end_to_end_with_fake_runner(cli: CliRunner, tmp_path: Path) -> None:
    suite = tmp_path / "two.toml"
    suite.write_text(
        'name = "two"\n[defaults]\ndevice = "cpu"\nsteps = 6\n'
        '[[job]]\nworkload = ["resnet50", "unet2d"]\n'
        '[[job]]\nworkload = "vgg16"\nframework = "tf"\n'
    )
    dry = cli.invoke(app, ["suite", str(suite), "--dry-run"])
    assert dry.exit_code == 0 and "would run: resnet50 torch train" in dry.output
    result = cli.invoke(app, ["suite", str(suite)])
    assert result.exit_code == 0, result.output
    assert "Suite two: 3 done, 0 failed, 0 skipped." in result.output
    export = cli.invoke(app, ["export", "--format", "md"])
    assert export.exit_code == 0
    first = export.output.split("\n\n")[0]  # the results table (provenance tables follow)
    table = [line for line in first.splitlines() if line.startswith("| ")]
    assert len(table) == 4  # header + 3 rows
    assert "| U-Net (2D) | PyTorch | train |" in export.output
    assert "| VGG16 | TensorFlow | train |" in export.output
    listing = cli.invoke(app, ["jobs", "--all"])
    assert listing.exit_code == 0
    assert sum(" done " in line for line in listing.output.splitlines()[1:]) == 3


def test_a_suite_with_nothing_to_run_here_says_so_once_and_queues_nothing(
    cli: CliRunner, jobenv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It read "zbench: suite: suite mine: nothing can run on this machine"."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    mine = tmp_path / "mine.toml"
    mine.write_text('[[job]]\nworkload = "resnet50"\n')
    result = cli.invoke(app, ["suite", str(mine)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == "zbench: suite: mine: nothing can run on this machine"
    assert "skipped: resnet50 torch train default on 1 GPU: needs a GPU" in result.stdout
    assert not jobenv.exists() or api.list_jobs(jobenv) == []


def test_bad_suite_file_exit_2(cli: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[job]]\nworkload = "resnet50"\nbatchsize = 3\n')
    result = cli.invoke(app, ["suite", str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().endswith(
        "job 1: unknown key 'batchsize' (did you mean 'batch_size'? zbench suite -h lists every key)"
    )
    assert len(result.output.strip().splitlines()) == 1


def _ctrl_c_while_following(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slow job, and Ctrl-C at the follow loop's first wait."""
    import zbench.cli.follow as commands

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setenv("FAKE_RUNNER_BEHAVE", "slow")
    monkeypatch.setattr(commands.time, "sleep", interrupt)


def test_ctrl_c_while_following_detaches(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobkit import wait_for

    _ctrl_c_while_following(monkeypatch)
    result = cli.invoke(app, ["run", "resnet50", "--device", "cpu", "--steps", "5"])
    monkeypatch.undo()
    assert result.exit_code == 0
    assert (
        "Detached: the job keeps running (id 1)" in result.output
        and "zbench cancel" in result.output
    )
    assert wait_for(1, jobenv, ("done", "crashed", "failed")).state == "done"


def test_ctrl_c_while_following_with_json_prints_the_job_as_detach_does(
    cli: CliRunner, jobenv: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--json with Ctrl-C printed nothing on stdout and exited 0: a script read no JSON."""
    _ctrl_c_while_following(monkeypatch)
    run = cli.invoke(app, ["run", "resnet50", "--device", "cpu", "--steps", "5", "--json"])
    suite = jobenv.parent.parent / "s.toml"
    suite.write_text('[[job]]\nworkload = "resnet50"\ndevice = "cpu"\nsteps = 5\n')
    suite_run = cli.invoke(app, ["suite", str(suite), "--json"])
    monkeypatch.undo()
    assert run.exit_code == 0 and json.loads(run.stdout) == {"job_id": 1}
    assert suite_run.exit_code == 0 and json.loads(suite_run.stdout)["job_ids"] == [2]


def test_jobs_take_the_results_filters_a_job_has_and_its_state(
    cli: CliRunner, jobenv: Path
) -> None:
    """`zbench jobs --workload ...` as `zbench results --workload ...`: the same options, the
    same one line for a name nothing has (exit 2); `--state` on top."""
    from tests.rows import job_row
    from zbench.cli import filters

    jobenv.parent.mkdir(parents=True, exist_ok=True)
    Store(jobenv).add_jobs(
        [
            job_row(workload="resnet50", state="done", ended=5.0, tag="a"),
            job_row(workload="vgg16", mode="infer", state="failed", ended=6.0),
            job_row(workload="vgg16", state="done", ended=7.0, suite="review"),
        ]
    )

    def ids(*argv: str) -> list[int]:
        result = cli.invoke(app, ["jobs", "--all", "--json", *argv])
        assert result.exit_code == 0, result.output
        return sorted(j["id"] for j in json.loads(result.output))

    assert ids() == [1, 2, 3]
    assert ids("--workload", "vgg16") == [2, 3]
    assert ids("--workload", "vgg16", "--state", "done") == [3]
    assert ids("--mode", "infer") == [2] and ids("--suite", "review") == [3]
    assert ids("--tag", "a") == [1]
    assert ids("--workload", "unet3d") == []  # a workload the tables know: an empty list
    empty = cli.invoke(app, ["jobs", "--all", "--workload", "unet3d"])
    assert empty.exit_code == 0 and "No jobs match (workload unet3d)" in empty.output
    assert ids("--precision", "bf16") == []  # no job stored one (None: the runner decides)
    for argv, line in (
        (["--workload", "resnt50"], "zbench: jobs: --workload: must be one of "),
        (["--state", "finished"], "zbench: jobs: --state: must be one of queued, running, "),
        (["--suite", "nosuch"], "zbench: jobs: no jobs of suite 'nosuch' in the database"),
        (["--precision", "None"], "zbench: jobs: --precision: must be one of b"),
    ):
        bad = cli.invoke(app, ["jobs", "--all", *argv])
        assert bad.exit_code == 2 and bad.output.count("\n") == 1, bad.output
        assert bad.output.startswith(line), bad.output
    # Declared once: the jobs' filters are the results' own options, by name.
    help_text = cli.invoke(app, ["jobs", "-h"]).output
    for name in filters.JOB_FILTERS:
        assert f"--{name}" in help_text
    assert set(filters.JOB_FILTERS) <= set(filters.NAMES)


def test_a_jobs_speed_prints_alike_everywhere_and_a_reported_zero_is_shown() -> None:
    """The jobs table, the job view and --follow each wrote the speed themselves, and all took a
    reported 0.0 samples/s for "none reported"."""
    from zbench.jobs.api import JobInfo, rate_text
    from zbench.tui.screens.job_detail import summary
    from zbench.tui.widgets.fields import pack
    from zbench.tui.widgets.jobs_table import cells

    fields = {f: None for f in JobInfo.__dataclass_fields__}
    base = fields | {"id": 3, "workload": "resnet50", "framework": "torch", "mode": "train"}
    info = JobInfo(**base | {"state": "running", "created": 0.0, "samples_per_s": 0.0})
    assert rate_text(12345.67) == "12,345.7"
    assert (rate_text(0.0), rate_text(None), rate_text(None, "-")) == ("0.0", "", "-")
    assert str(cells(info)["speed"]) == "0.0"
    assert "samples/s 0.0" in pack(summary(info, now=1.0), 0)
    none = dataclasses.replace(info, samples_per_s=None)
    assert str(cells(none)["speed"]) == "-" and "samples/s -" in pack(summary(none, now=1.0), 0)


def test_a_demo_jobs_speed_is_named_in_its_own_unit() -> None:
    """--follow and the job view said "samples/s" of a tracker's frames and Snake's board-steps."""
    from zbench.jobs.api import JobInfo
    from zbench.tui.screens.job_detail import summary
    from zbench.tui.widgets.fields import pack

    fields = {f: None for f in JobInfo.__dataclass_fields__}
    base = fields | {"id": 3, "framework": "demo", "mode": "x", "state": "running", "created": 0.0}
    units = {}
    for workload, kind in (
        ("tracking", "demo"),
        ("snake", "demo"),
        ("motion", "demo"),
        ("resnet50", "benchmark"),
    ):
        info = JobInfo(**base | {"workload": workload, "kind": kind, "samples_per_s": 41.5})
        units[workload] = info.rate_unit
        assert f"{info.rate_unit} 41.5" in pack(summary(info, now=1.0), 0)
    assert units == {
        "tracking": "frames/s",
        "snake": "board-steps/s",
        "motion": "frames/s",
        "resnet50": "samples/s",
    }
