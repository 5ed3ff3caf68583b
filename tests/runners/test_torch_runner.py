"""The runner's contract: precision flags, presets, compile time, errors and exit codes, DDP."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.runners.events import check_stream, run_in_process, run_subprocess, the_error
from zbench.contract.config import RunConfig

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TINY = ["resnet50", "--device", "cpu", "--image-size", "32", "--batch-size", "2"]
ONE_STEP = ["--steps", "1", "--warmup", "0"]


@pytest.fixture(autouse=True)
def _restore_tf32() -> object:
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


@pytest.mark.parametrize(
    "precision, tf32, detail",
    [
        ("fp32", False, "fp32 (TF32 off)"),
        pytest.param("tf32", True, "tf32", marks=pytest.mark.slow),
        pytest.param("bf16", False, "bf16 autocast", marks=pytest.mark.slow),
    ],
)
def test_precision_sets_tf32_switches(
    precision: str, tf32: bool, detail: str, tmp_path: Path
) -> None:
    torch.backends.cuda.matmul.allow_tf32 = not tf32
    torch.backends.cudnn.allow_tf32 = not tf32
    argv = ["unet2d", "--device", "cpu", "--image-size", "32", "--batch-size", "1", *ONE_STEP]
    rc, events = run_in_process([*argv, "--precision", precision], tmp_path / "e")
    assert rc == 0
    assert events[0]["tf32"] == {"matmul_allow_tf32": tf32, "cudnn_allow_tf32": tf32}
    assert torch.backends.cudnn.allow_tf32 is tf32
    assert events[0]["precision_detail"].startswith(detail)
    assert check_stream(events)["precision"] == precision


def test_default_precision_is_strict_fp32(tmp_path: Path) -> None:
    rc, events = run_in_process([*TINY, *ONE_STEP], tmp_path / "e")
    assert rc == 0
    assert events[0]["config"]["precision"] == "fp32"
    assert events[0]["precision_detail"] == "fp32 (TF32 off)"
    assert events[0]["config"]["batch_size"] == 2 and events[0]["config"]["warmup"] == 0


def test_review_and_max_presets_resolve() -> None:
    from zbench.contract.resolve import resolve

    review = resolve(RunConfig(workload="resnet50")).config
    assert (review.precision, review.batch_size, review.steps, review.warmup) == (
        "fp32",
        128,
        50,
        10,
    )
    assert not review.channels_last and not review.compile
    best = resolve(RunConfig(workload="resnet50", preset="max"))
    assert (best.config.precision, best.config.channels_last, best.config.compile) == (
        "bf16",
        True,
        True,
    )
    assert best.config.batch_size == 256 and "batch_size" in best.choices
    det = resolve(RunConfig(workload="fasterrcnn", preset="max", batch_size=4))
    assert det.config.batch_size == 4 and not det.config.compile
    assert det.choices["compile"].startswith("off")
    assert resolve(RunConfig(workload="unet3d")).config.batch_size == 2


@pytest.mark.slow
def test_compile_time_is_reported_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")  # dynamo without inductor's C++ build
    argv = ["unet2d", "--device", "cpu", "--image-size", "32", "--batch-size", "1", "--mode"]
    rc, events = run_in_process([*argv, "infer", "--compile", *ONE_STEP], tmp_path / "e")
    assert rc == 0
    result = check_stream(events)
    assert result["compile_s"] > 0
    assert result["steps"] == 1  # the compiling steps are not in the window


def test_oom_becomes_an_error_event_with_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zbench.runners.torch.tasks import Task

    def boom(self: object, model: object, batch: object) -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(Task, "loss", boom)
    argv = [*TINY[:-2], "--batch-size", "64", *ONE_STEP]  # TINY's batch, replaced
    rc, events = run_in_process(argv, tmp_path / "e")
    assert rc == 1
    error = the_error(events)
    assert error["kind"] == "oom" and error["batch_size"] == 64
    assert "--batch-size 32" in error["hint"] and "64" in error["message"]


def test_crash_is_an_error_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbench.runners.torch.tasks import Task

    def boom(self: object, model: object, batch: object) -> None:
        raise ValueError("bad things\nsecond line")

    monkeypatch.setattr(Task, "loss", boom)
    rc, events = run_in_process([*TINY, *ONE_STEP], tmp_path / "e")
    assert rc == 1
    assert the_error(events)["message"] == "ValueError: bad things"


def test_cuda_missing_is_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rc, events = run_in_process(["resnet50", "--device", "cuda"], tmp_path / "e")
    assert rc == 1
    assert the_error(events)["kind"] == "unavailable"


def test_missing_framework_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # import tensorflow now fails
    rc, events = run_in_process(["resnet50", "--framework", "tf"], tmp_path / "e")
    assert rc == 1
    error = the_error(events)
    assert error["kind"] == "unavailable" and "zbench[tf" in error["message"]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["alexnet"], "must be one of"),
        (["resnet50", "--batch-size", "0"], "at least 1"),
        (["unet3d", "--device", "cpu", "--image-size", "48"], "multiple of 32"),
    ],
)
def test_usage_errors_exit_2_with_one_line(argv: list[str], fragment: str, tmp_path: Path) -> None:
    proc, events = run_subprocess(argv, tmp_path / "e")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0]
    error = the_error(events)
    assert error["kind"] == "config" and fragment in error["message"]


@pytest.mark.slow
def test_subprocess_run_writes_the_protocol(tmp_path: Path) -> None:
    proc, events = run_subprocess([*TINY, "--steps", "2", "--warmup", "1"], tmp_path / "e")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = check_stream(events)
    assert result["steps"] == 2 and result["gpus"] == 1
    assert '"type"' not in proc.stdout  # events never go to stdout


@pytest.mark.slow
def test_ddp_two_processes_on_cpu_gloo(tmp_path: Path) -> None:
    argv = [*TINY, "--gpus", "2", "--steps", "2", "--warmup", "1"]
    proc, events = run_subprocess(argv, tmp_path / "e", timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = check_stream(events)
    assert result["gpus"] == 2 and result["global_batch"] == 4
    assert result["samples"] == 2 * 2 * 2  # steps x per-GPU batch x ranks
    assert result["samples_per_s_per_gpu"] == pytest.approx(result["samples_per_s"] / 2)
    assert result["scaling"] == {"mode": "weak", "world_size": 2, "per_gpu_batch": 2}
    assert len([e for e in events if e["type"] == "start"]) == 1  # only rank 0 speaks


def test_launcher_command_lines(tmp_path: Path) -> None:
    from zbench.runners.torch.launch import ENV_INIT, child_env, rank_env, torchrun_argv

    multi = RunConfig(
        workload="resnet50", gpus=8, extra=("--nnodes", "2", "--rdzv-endpoint", "h:1")
    )
    argv = torchrun_argv(multi, "/tmp/ev")
    assert argv[1:3] == ["-m", "torch.distributed.run"]
    assert argv[3:7] == ["--nnodes", "2", "--rdzv-endpoint", "h:1"]
    tail = argv[argv.index("zbench.runners") + 1 :]
    assert tail[:1] == ["resnet50"] and "--events" in tail and "--" not in tail
    env = rank_env(1, 2, tmp_path / "store")
    assert (env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"]) == ("1", "1", "2")
    assert env[ENV_INIT] == (tmp_path / "store").as_uri()
    for name in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        assert env[name] == __import__("os").environ.get(name, "lo")
    assert child_env()["NCCL_NVLS_ENABLE"] in (
        "0",
        __import__("os").environ.get("NCCL_NVLS_ENABLE"),
    )


@pytest.mark.slow
def test_single_node_ddp_listens_on_loopback_only(tmp_path: Path) -> None:
    """torchrun's rendezvous store listened on every interface; the local launcher's ranks meet
    through a file and bind their sockets to loopback. Watched from outside while the run goes."""
    import os
    import subprocess
    import time

    psutil = pytest.importorskip("psutil")
    from tests.runners.events import REPO

    events = tmp_path / "events.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    for name in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        env.pop(name, None)
    argv = [*TINY, "--gpus", "2", "--steps", "60", "--warmup", "1", "--events", str(events)]
    proc = subprocess.Popen([sys.executable, "-m", "zbench.runners", *argv], cwd=REPO, env=env)
    listening: set[tuple[str, int]] = set()
    try:
        while proc.poll() is None:
            with __import__("contextlib").suppress(psutil.Error):
                for child in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(True)]:
                    for conn in child.net_connections(kind="inet"):
                        if conn.status == psutil.CONN_LISTEN:
                            listening.add((conn.laddr.ip, conn.laddr.port))
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert listening, "gloo's ranks listen while they run; the watch saw nothing"
    assert {ip for ip, _ in listening} <= {"127.0.0.1", "::1"}, listening


@pytest.mark.parametrize("rank", [None, "1"])
def test_a_rank_leaves_without_interpreter_finalization(rank: str | None) -> None:
    """A rank's process group threads outlive ``destroy_process_group`` once DDP was used, and
    interpreter finalization with them alive can abort it; a rank ends with ``os._exit`` after
    flushing, so atexit handlers do not run and what it printed still arrives."""
    import os
    import subprocess

    from tests.runners.events import REPO

    code = (
        "import atexit, runpy, sys; atexit.register(lambda: print('FINALIZED', flush=True)); "
        "print('before', end=''); sys.argv = ['zbench.runners', 'resnet50', '--steps', 'x']; "
        "runpy.run_module('zbench.runners', run_name='__main__')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("LOCAL_RANK", None)
    if rank is not None:
        env["LOCAL_RANK"] = rank
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2 and "--steps" in proc.stderr
    assert proc.stdout.startswith("before")
    assert ("FINALIZED" in proc.stdout) is (rank is None)
