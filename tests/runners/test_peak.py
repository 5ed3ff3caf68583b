"""`--preset max` (PyTorch): what it resolves to, its option checks, the CUDA-graph path's CPU
fallback, the batch search, the compile cache under ZBENCH_HOME, DDP options and bf16 compression."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runners.events import check_stream, run_in_process, run_subprocess, the_error
from zbench.contract.config import RunConfig, parse_args
from zbench.contract.resolve import check_options, resolve

TINY_SEG = ["unet2d", "--device", "cpu", "--image-size", "32"]
ONE_STEP = ["--steps", "1", "--warmup", "0", "--repeat", "1"]


def test_max_resolves_graphs_compile_mode_and_batch_candidates() -> None:
    best = resolve(RunConfig(workload="resnet50", preset="max"))
    cfg = best.config
    assert (cfg.graphs, cfg.compile, cfg.compile_mode, cfg.precision) == (
        "step",
        True,
        "default",
        "bf16",
    )
    # Training has one max batch (no search, one compile); inference measures two.
    assert best.batch_candidates == () and cfg.batch_size == 256
    assert best.choices["batch_size"] == "256 per GPU" and best.choices["graphs"].startswith("step")
    infer = resolve(RunConfig(workload="resnet50", preset="max", mode="infer"))
    assert infer.batch_candidates == (512, 1024) and "measured" in infer.choices["batch_size"]
    fixed = resolve(RunConfig(workload="resnet50", preset="max", batch_size=128))
    assert fixed.batch_candidates == () and fixed.config.batch_size == 128


def test_every_workload_has_a_max_entry_that_says_what_it_chose() -> None:
    from zbench.contract.workloads import WORKLOADS

    for name in WORKLOADS:
        for framework in ("torch", "tf"):
            r = resolve(RunConfig(workload=name, preset="max", framework=framework))
            assert {"precision", "batch_size", "graphs"} <= r.choices.keys(), (name, framework)
            assert r.config.precision == "bf16"
    det = resolve(RunConfig(workload="fasterrcnn", preset="max"))
    assert det.config.graphs == "off" and not det.config.compile
    assert det.choices["graphs"].startswith("off") and det.choices["compile"].startswith("off")
    assert resolve(RunConfig(workload="unet3d", preset="max")).config.graphs == "step"
    tf = resolve(RunConfig(workload="resnet50", preset="max", framework="tf")).config
    assert tf.xla and tf.graphs == "off" and not tf.compile


def test_max_keeps_an_explicit_no_channels_last_or_no_compile_and_says_so() -> None:
    # Before, `--preset max --no-channels-last` ran channels-last anyway, hiding the user's choice.
    cfg, _ = parse_args(["unet3d", "--preset", "max", "--no-channels-last"])
    kept = resolve(cfg)
    assert kept.config.channels_last is False and kept.config.compile is True
    assert kept.choices["channels_last"] == "off (--no-channels-last)"
    assert "--no-channels-last" in kept.config.to_argv()  # the launcher passes it on to the ranks
    eager = resolve(parse_args(["vgg16", "--preset", "max", "--no-compile"])[0])
    assert eager.config.compile is False and eager.config.compile_mode is None
    assert eager.choices["compile"] == "off (--no-compile)" and eager.config.channels_last
    tf = resolve(parse_args(["resnet50", "--framework", "tf", "--preset", "max", "--no-xla"])[0])
    assert tf.config.xla is False and tf.choices["xla"] == "off (--no-xla)"
    for argv in (["resnet50"], ["resnet50", "--preset", "max", "--framework", "tf"]):
        plain = resolve(parse_args(argv)[0]).config
        assert plain.channels_last is False and plain.compile is False  # never left None


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--compile-mode", "max-autotune-no-cudagraphs"], "--compile-mode"),
        (["--graphs", "compile"], "--graphs compile"),
    ],
)
def test_no_compile_with_a_compile_option_is_a_usage_error(flags: list[str], named: str) -> None:
    cfg, _ = parse_args(["resnet50", "--preset", "max", "--no-compile", *flags])
    why = check_options(cfg)
    assert why is not None and why.startswith("--no-compile contradicts " + named)


def test_review_preset_is_unchanged_by_the_new_options() -> None:
    cfg = resolve(RunConfig(workload="resnet50")).config
    assert (cfg.graphs, cfg.compile, cfg.compile_mode, cfg.grad_compression) == (
        "off",
        False,
        None,
        "none",
    )
    graphs = resolve(RunConfig(workload="resnet50", graphs="compile")).config
    assert graphs.compile and graphs.compile_mode == "reduce-overhead"
    mode = resolve(RunConfig(workload="resnet50", compile_mode="max-autotune")).config
    assert mode.compile  # a compile mode compiles


def test_new_options_round_trip_through_the_parser() -> None:
    cfg = RunConfig(
        workload="resnet50",
        graphs="step",
        compile_mode="max-autotune-no-cudagraphs",
        gpus=2,
        grad_compression="bf16",
    )
    parsed, _ = parse_args(cfg.to_argv())
    assert parsed == cfg


@pytest.mark.parametrize(
    "cfg, fragment",
    [
        (RunConfig("resnet50", graphs="step", compile_mode="reduce-overhead"), "own CUDA graphs"),
        (RunConfig("resnet50", graphs="compile", compile_mode="default"), "--graphs compile"),
        (RunConfig("resnet50", grad_compression="bf16"), "--gpus 2"),
    ],
)
def test_contradicting_options_are_one_line(cfg: RunConfig, fragment: str) -> None:
    reason = check_options(cfg)
    assert reason and fragment in reason and "\n" not in reason


def test_contradiction_exits_2_with_a_config_error(tmp_path: Path) -> None:
    argv = [*TINY_SEG, "--grad-compression", "bf16", *ONE_STEP]
    proc, events = run_subprocess(argv, tmp_path / "e")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--gpus 2" in proc.stderr
    assert the_error(events)["kind"] == "config"


def test_bad_batch_list_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_MAX_BATCHES", "two,four")
    rc, events = run_in_process([*TINY_SEG, "--preset", "max", *ONE_STEP], tmp_path / "e")
    assert rc == 2
    assert "ZBENCH_MAX_BATCHES" in the_error(events)["message"]


def test_ddp_options_of_max_and_review() -> None:
    pytest.importorskip("torch")
    from zbench.runners.torch.tuning import ddp_options

    assert ddp_options(False) == {"gradient_as_bucket_view": True}
    best = ddp_options(True)
    assert best["static_graph"] and not best["broadcast_buffers"]
    assert best["gradient_as_bucket_view"] and best["bucket_cap_mb"] == 25


def test_compile_cache_goes_under_zbench_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from zbench.runners.torch.tuning import compile_cache

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    got = compile_cache()
    home = Path(str(tmp_path / "zbench-home"))  # set by conftest
    assert Path(got["TORCHINDUCTOR_CACHE_DIR"]) == home / "cache" / "torchinductor"
    assert Path(got["TRITON_CACHE_DIR"]).is_dir() and got["fx_graph_cache"]
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "mine"))
    assert compile_cache()["TRITON_CACHE_DIR"] == str(tmp_path / "mine")  # the user's wins


@pytest.mark.parametrize(
    ("argv", "device", "expected"),
    [
        (["resnet50", "--preset", "max", "--mode", "infer"], "cuda", True),
        (["resnet50", "--preset", "max", "--mode", "train"], "cuda", False),
        (["resnet50", "--preset", "max", "--mode", "infer"], "cpu", False),
        (["resnet50", "--mode", "infer", "--compile"], "cuda", False),  # review preset
    ],
)
def test_freezing_only_for_max_inference_on_a_gpu(
    argv: list[str], device: str, expected: bool
) -> None:
    """Inductor freezing folds batch-norm into the convolutions: inference alone (training needs
    the weights to change), --preset max alone (the review preset compiles as the user asked)."""
    torch = pytest.importorskip("torch")
    from zbench.runners.torch.adapter import TorchAdapter

    adapter = TorchAdapter()
    adapter.device = torch.device(device)
    assert adapter._freezing(resolve(parse_args(argv)[0]).config) is expected


def test_no_freezing_is_recorded_for_a_backend_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    from zbench.runners.torch.adapter import TorchAdapter

    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")
    adapter = TorchAdapter()
    adapter.device = torch.device("cuda")
    cfg = resolve(parse_args(["resnet50", "--preset", "max", "--mode", "infer"])[0]).config
    assert adapter._freezing(cfg) is False


def test_freeze_for_inference_turns_on_inductor_freezing(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import torch._inductor.config as inductor_config

    from zbench.runners.torch import tuning

    monkeypatch.setattr(inductor_config, "freezing", False)
    tuning.freeze_for_inference()
    assert inductor_config.freezing is True


def test_kernel_tuning_only_under_max_on_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    import torch
    import torch._inductor.config as inductor_config

    from zbench.runners.torch import tuning
    from zbench.runners.torch.adapter import TorchAdapter

    adapter = TorchAdapter()
    cfg = resolve(parse_args(["resnet50", "--preset", "max"])[0]).config
    assert adapter._tunes_kernels(cfg) is False  # the adapter's device is the CPU until prepare
    adapter.device = torch.device("cuda", 0)
    assert adapter._tunes_kernels(cfg) is True
    review = resolve(parse_args(["resnet50", "--preset", "review"])[0]).config
    assert adapter._tunes_kernels(review) is False
    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")
    assert adapter._tunes_kernels(cfg) is False
    monkeypatch.setattr(inductor_config, "coordinate_descent_tuning", False)
    monkeypatch.setattr(inductor_config.triton, "prefer_nd_tiling", False)
    tuned = tuning.tune_kernels("vgg16", "train")
    assert tuned["coordinate_descent_tuning"] is True
    assert tuned["warm_cache_fix"].startswith(("installed", "not needed"))
    assert inductor_config.coordinate_descent_tuning is True
    assert "triton.prefer_nd_tiling" not in tuned  # measured to pay on ResNet-50 training only
    assert inductor_config.triton.prefer_nd_tiling is False
    tuned = tuning.tune_kernels("resnet50", "train")
    assert tuned["triton.prefer_nd_tiling"] is True
    assert inductor_config.triton.prefer_nd_tiling is True


def test_every_max_inductor_switch_exists() -> None:
    """A switch renamed or dropped by a torch release would otherwise be set on nothing."""
    pytest.importorskip("torch")
    import torch._inductor.config as inductor_config

    from zbench.contract.workloads import WORKLOADS
    from zbench.runners.torch import tuning

    for workload, mode in tuning.MAX_INDUCTOR_FOR:  # a renamed workload would match no run
        assert workload in WORKLOADS and mode in ("train", "infer"), (workload, mode)
    for extra in [{}, *tuning.MAX_INDUCTOR_FOR.values()]:
        for key in {**tuning.MAX_INDUCTOR, **extra}:
            owner, _, name = key.rpartition(".")
            assert hasattr(getattr(inductor_config, owner) if owner else inductor_config, name), key


def test_search_keeps_the_fastest_and_records_ooms() -> None:
    torch = pytest.importorskip("torch")
    from zbench.runners.torch import tuning

    calls: list[int] = []

    def make_step(batch: int) -> object:
        if batch == 8:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return lambda: calls.append(batch)

    chosen, record = tuning.search(
        (8, 2, 4),
        make_step,
        lambda: None,
        lambda e: isinstance(e, torch.OutOfMemoryError),
        torch.device("cpu"),
        False,
        lambda: None,
    )
    assert record["tried_samples_per_s"]["8"] == "oom"
    assert list(record["tried_samples_per_s"]) == ["2", "4", "8"]  # smallest first
    assert chosen in (2, 4) and record["chosen"] == chosen
    assert calls.count(2) == 2 + tuning.SEARCH_WARMUP + tuning.SEARCH_STEPS


def test_batch_search_is_kept_per_configuration_and_read_back() -> None:
    pytest.importorskip("torch")
    from zbench import paths
    from zbench.runners.torch import tuning

    cfg = resolve(parse_args(["resnet50", "--preset", "max", "--device", "cpu"])[0]).config
    fields = {"graphs": "off", "freezing": False, "gpus": 1}
    key = tuning.search_key(cfg, (256, 384), fields)
    assert tuning.cached_search(key) is None  # nothing measured yet
    tuning.store_search(key, {"chosen": 256, "tried_samples_per_s": {"256": 9.0, "384": 8.0}})
    hit = tuning.cached_search(key)
    assert hit is not None and hit["chosen"] == 256 and hit["measured_at"]
    # another precision, batch list or GPU count is another search
    bf32 = resolve(
        parse_args(["resnet50", "--preset", "max", "--device", "cpu", "--precision", "fp32"])[0]
    ).config
    assert tuning.cached_search(tuning.search_key(bf32, (256, 384), fields)) is None
    assert tuning.cached_search(tuning.search_key(cfg, (256, 512), fields)) is None
    assert tuning.cached_search(tuning.search_key(cfg, (256, 384), {**fields, "gpus": 2})) is None
    (paths.cache_dir() / tuning.SEARCH_FILE).write_text("{not json")
    assert tuning.cached_search(key) is None  # a damaged file: measured again, never a crash
    paths.release_cache()  # this process searched as a runner does: it holds the cache
    assert paths.clear_cache() > 0 and tuning.cached_search(key) is None


@pytest.mark.slow
def test_max_train_end_to_end_falls_back_from_graphs_on_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from zbench.runners.torch import tuning

    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")  # dynamo without inductor's C++ build
    monkeypatch.setenv("ZBENCH_MAX_BATCHES", "1,2")
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    monkeypatch.setattr(tuning, "SEARCH_STEPS", 2)
    monkeypatch.setattr(tuning, "SEARCH_WARMUP", 0)
    rc, events = run_in_process([*TINY_SEG, "--preset", "max", *ONE_STEP], tmp_path / "e")
    assert rc == 0
    result = check_stream(events)
    settings = result["settings"]
    assert settings["graphs"] == "off" and "need a GPU" in settings["graphs_note"]
    search = settings["batch_search"]
    assert search["candidates"] == [1, 2] and search["source"] == "set by ZBENCH_MAX_BATCHES"
    assert result["batch_size"] == search["chosen"] in (1, 2)
    assert events[0]["config"]["batch_size"] == result["batch_size"]
    assert "measured" in events[0]["preset_choices"]["batch_size"]
    assert settings["compile_mode"] == "default" and result["compile_s"] > 0
    assert "fx_graph_hits" in settings["compile_cache"]
    assert "zbench-home" in settings["compile_cache"]["TORCHINDUCTOR_CACHE_DIR"]
    assert events[0]["settings"]["batch_search"] == search  # the start event already says
    # The same configuration again: the search's answer comes from the cache, and says so.
    rc, again = run_in_process([*TINY_SEG, "--preset", "max", *ONE_STEP], tmp_path / "e2")
    assert rc == 0
    cached = check_stream(again)["settings"]["batch_search"]
    assert cached["chosen"] == search["chosen"] and "zbench cache clear" in cached["cached"]
    assert cached["tried_samples_per_s"] == search["tried_samples_per_s"]


@pytest.mark.slow
def test_max_infer_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")
    argv = [*TINY_SEG, "--preset", "max", "--mode", "infer", "--batch-size", "2", *ONE_STEP]
    rc, events = run_in_process(argv, tmp_path / "e")
    assert rc == 0
    result = check_stream(events)
    assert result["settings"]["graphs"] == "off" and result["settings"]["batch_search"] is None
    assert result["settings"]["freezing"] is False  # inductor freezing only on a GPU
    assert result["settings"]["inductor"] is None  # kernel tuning only on a GPU
    assert result["batch_size"] == 2 and result["precision"] == "bf16"


@pytest.mark.slow
def test_ddp_max_records_bf16_compression(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")
    argv = [*TINY_SEG, "--preset", "max", "--batch-size", "2", "--gpus", "2"]
    argv += ["--grad-compression", "bf16", *ONE_STEP]
    proc, events = run_subprocess(argv, tmp_path / "e", timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    settings = check_stream(events)["settings"]
    assert settings["grad_compression"].startswith("bf16")
    assert settings["ddp"]["static_graph"] and not settings["ddp"]["broadcast_buffers"]


def test_a_compiled_run_reports_a_compile_phase_between_setup_and_warmup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first `--preset max` run tunes its kernels for minutes: the phase says so ("compiling" in
    the CLI), with the compile steps it times apart; an uncompiled run has no such phase."""
    pytest.importorskip("torch")
    from zbench.cli.follow import DOING

    monkeypatch.setenv("ZBENCH_COMPILE_BACKEND", "eager")  # the compile path, no C++ build
    rc, events = run_in_process([*TINY_SEG, "--compile", *ONE_STEP], tmp_path / "c")
    assert rc == 0
    phases = [e for e in events if e["type"] == "phase"]
    assert [p["phase"] for p in phases] == ["setup", "compile", "warmup", "measure", "done"]
    assert phases[1]["steps"] == 2 and DOING["compile"] == "compiling"
    check_stream(events)
    rc, events = run_in_process([*TINY_SEG, *ONE_STEP], tmp_path / "e")
    assert rc == 0
    assert "compile" not in [e.get("phase") for e in events if e["type"] == "phase"]
    check_stream(events)
