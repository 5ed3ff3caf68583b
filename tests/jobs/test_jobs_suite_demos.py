"""Demos in suite files: a job whose workload is a demo's name takes that demo's options, checked
by the demos' own parser; ``[defaults]`` a demo does not take stay with the benchmarks."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench.cli import app
from zbench.contract.demo_options import DemoConfig
from zbench.contract.kinds import DEMO
from zbench.jobs.suites import SuiteError, load_suite

CLI = CliRunner(env={"COLUMNS": "160", "TERM": "dumb", "NO_COLOR": "1"})


def _suite(tmp_path: Path, text: str, gpus: int = 1, frameworks: set[str] | None = None):
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return load_suite(
        path, gpu_count=gpus, frameworks={"torch"} if frameworks is None else frameworks
    )


MIXED = """
[defaults]
device = "auto"
precision = "bf16"
timeout_s = 900
[[job]]
workload = ["resnet50", "snake"]
seed = [1, 2]
[[job]]
workload = "motion"
minutes = 0.5
mode = "train"
size = 128
[[job]]
workload = "tracking"
smoke = true
tracker = ["deepsort", "bytetrack"]
"""


def test_demo_jobs_take_their_demos_options_and_defaults_they_share(tmp_path: Path) -> None:
    suite = _suite(tmp_path, MIXED)
    assert not suite.skipped
    benchmarks = [s.config for s in suite.specs if s.config.kind != DEMO]
    demos = [s.config for s in suite.specs if s.config.kind == DEMO]
    assert [(c.workload, c.seed, c.precision) for c in benchmarks] == [
        ("resnet50", 1, "bf16"),
        ("resnet50", 2, "bf16"),
    ]
    assert all(isinstance(c, DemoConfig) for c in demos)
    assert [(c.workload, c.mode) for c in demos] == [
        ("snake", "ppo"),
        ("snake", "ppo"),
        ("motion", "train"),
        ("tracking", "deepsort"),
        ("tracking", "bytetrack"),
    ]
    snake = [c for c in demos if c.workload == "snake"]
    assert [c.seed for c in snake] == [1, 2] and {c.device for c in snake} == {"cuda"}
    motion = next(c for c in demos if c.workload == "motion")
    assert (motion.minutes, motion.size) == (0.5, 128)
    assert {s.timeout_s for s in suite.specs} == {900.0}  # [defaults] timeout_s: every kind
    # What the job runs is what `zbench demo` would run: the same command line.
    assert motion.to_argv() == ["motion", "--minutes", "0.5", "--size", "128"]


def test_a_demo_without_a_gpu_is_skipped_with_the_reason(tmp_path: Path) -> None:
    suite = _suite(tmp_path, '[[job]]\nworkload = ["snake", "tracking"]\n', gpus=0)
    assert suite.specs == ()
    assert [(s.config.workload, r) for s, r in suite.skipped] == [
        ("snake", "needs a GPU; none found"),
        ("tracking", "needs a GPU; none found"),
    ]
    auto = _suite(tmp_path, '[[job]]\nworkload = "snake"\ndevice = "auto"\n', gpus=0)
    assert [s.config.device for s in auto.specs] == ["cpu"]
    no_torch = _suite(tmp_path, '[[job]]\nworkload = "snake"\n', frameworks=set())
    assert [r for _, r in no_torch.skipped] == ["PyTorch is not installed"]


def test_a_job_skipped_for_want_of_a_gpu_says_why_the_machine_offers_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As `zbench run` and `zbench probe` say it: the driver's words, or the variable hiding them.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    path = tmp_path / "mine.toml"
    path.write_text(
        '[[job]]\nworkload = ["snake", "resnet50"]\n[[job]]\nworkload = "vgg16"\ngpus = "all"\n'
    )
    suite = load_suite(path, frameworks={"torch"})
    why = "needs a GPU; none found (CUDA_VISIBLE_DEVICES='-1' hides every GPU)"
    assert [(s.config.workload, r) for s, r in suite.skipped] == [
        ("snake", why),
        ("resnet50", why),
        ("vgg16", why),  # a scaling run: no GPU at all, not "needs 2 or more GPUs; 0 found"
    ]


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (
            'workload = ["resnet50", "snake"]\nprecision = "bf16"',
            "job 1: the demo 'snake' takes no key 'precision' (see zbench demo snake -h)",
        ),
        (
            'workload = "snake"\ngpu_ids = [0]',
            "job 1: the demo 'snake' takes no key 'gpu_ids' (see zbench demo snake -h)",
        ),
        (
            'workload = "resnet50"\nboard = 12',
            "job 1: a benchmark takes no key 'board' (see zbench run -h)",
        ),
        ('workload = "snake"\nflavour = 1', "job 1: unknown key 'flavour'"),
        (
            'workload = "snake"\nboard = "12"',
            "job 1: board must be a whole number, got '12' (a TOML number is written without quotes)",
        ),
        ('workload = "snake"\nboard = 2', "job 1: board: must be at least 4 and at most 64, got 2"),
        (
            'workload = "snake"\nalgo = "a2c"',
            "job 1: algo: must be one of ppo, dqn, got 'a2c'",
        ),
        (
            'workload = "motion"\nmode = "fly"',
            "job 1: mode must be one of 'train', 'animate', got 'fly'",
        ),
        (
            'workload = "snake"\ntimeout_s = -1',
            "job 1: timeout_s must be a finite number of seconds above 0, got -1",
        ),
        ("workload = {snake = 1}", "job 1: workload must be a workload's name, got a table"),
        ("workload = []", "job 1: workload is an empty list (it would expand to no job)"),
    ],
)
def test_bad_demo_jobs_are_one_line(tmp_path: Path, job: str, message: str) -> None:
    with pytest.raises(SuiteError) as caught:
        _suite(tmp_path, f"[[job]]\n{job}\n")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_demos_own_check_refuses_before_anything_is_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    with pytest.raises(SuiteError, match=r"job 1: --animate needs a trained model"):
        _suite(tmp_path, '[[job]]\nworkload = "motion"\nmode = "animate"\n')


def test_dry_run_names_demo_jobs_and_tells_seeds_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ZBENCH_DB", raising=False)
    path = tmp_path / "mine.toml"
    path.write_text(
        '[defaults]\ndevice = "cpu"\n[[job]]\nworkload = ["resnet50", "snake"]\nseed = [1, 2]\n'
    )
    result = CLI.invoke(app, ["suite", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "would run: resnet50 torch train default on cpu (seed 1)",
        "would run: resnet50 torch train default on cpu (seed 2)",
        "would run: snake demo ppo on cpu (seed 1)",
        "would run: snake demo ppo on cpu (seed 2)",
        "4 jobs, 0 skipped",
    ]
