"""``--preset max`` helpers for PyTorch: the compile cache under ZBENCH_HOME, torch.compile's mode,
DDP's options, and the batch chosen by measurement.

Batch rule: each candidate per-GPU batch (the workload table's, or ``ZBENCH_MAX_BATCHES=a,b,...``)
runs the run's own step: its first calls compile and capture, then ``SEARCH_WARMUP`` steps, then
``SEARCH_STEPS`` timed steps with the device synchronized at both edges (under DDP the slowest
rank's rate counts). The fastest is kept; a larger batch must beat a smaller one by more than
``SEARCH_MARGIN`` (noise). A candidate that runs out of memory is recorded as such and skipped.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from zbench import paths
from zbench.contract.config import RunConfig

ENV_BATCHES = "ZBENCH_MAX_BATCHES"
ENV_BUCKET_MB = "ZBENCH_DDP_BUCKET_MB"
DDP_BUCKET_MB = 25  # DDP's default, kept until benchmarks/peak.py --ddp-buckets measures better
SEARCH_WARMUP = 3
SEARCH_STEPS = 10
SEARCH_MARGIN = 0.01


def compile_cache() -> dict[str, Any]:
    """Point inductor's and Triton's caches under ``$ZBENCH_HOME/cache`` unless the environment
    already chose (so a second run of the same config loads its kernels instead of compiling), and
    make sure the FX-graph and AOTAutograd caches are on. Call before the first compile."""
    base = paths.use_cache()
    chosen: dict[str, Any] = {}
    for var, sub in (("TORCHINDUCTOR_CACHE_DIR", "torchinductor"), ("TRITON_CACHE_DIR", "triton")):
        if not os.environ.get(var):
            os.environ[var] = str(base / sub)
            Path(os.environ[var]).mkdir(parents=True, exist_ok=True)
        chosen[var] = os.environ[var]
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = True
    functorch_config.enable_autograd_cache = True
    chosen["fx_graph_cache"] = bool(inductor_config.fx_graph_cache)
    chosen["aot_autograd_cache"] = bool(functorch_config.enable_autograd_cache)
    return chosen


def cache_counts() -> dict[str, int]:
    """Cache hits and misses of this process so far, from torch's own counters."""
    from torch._dynamo.utils import counters

    return {
        "fx_graph_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
        "fx_graph_misses": int(counters["inductor"]["fxgraph_cache_miss"]),
        "aot_autograd_hits": int(counters["aot_autograd"]["autograd_cache_hit"]),
        "aot_autograd_misses": int(counters["aot_autograd"]["autograd_cache_miss"]),
    }


def compile_module(net: torch.nn.Module, mode: str | None) -> torch.nn.Module:
    """torch.compile with ``$ZBENCH_COMPILE_BACKEND`` (default inductor) and ``mode`` (inductor's
    modes; another backend takes none)."""
    backend = compile_backend()
    kwargs: dict[str, Any] = {}
    if backend == "inductor" and mode and mode != "default":
        kwargs["mode"] = mode
    return torch.compile(net, backend=backend, **kwargs)  # type: ignore[return-value]


# Inductor switches `--preset max` turns on (GPU, inductor backend), measured one at a time beside
# the plain compiled loop by benchmarks/peak_candidates.py on one H200 (ResNet-50 bf16 training,
# batch 256, whole-step graph): coordinate-descent tuning of each Triton kernel's block sizes
# 1.080x (7,453 vs 6,902 img/s). It searches once per kernel on the first (cold) compile; the
# FX-graph cache keeps the tuned kernels, so later runs load them. Kept in one table so the
# settings record and the batch search's key read the same facts.
MAX_INDUCTOR: dict[str, Any] = {"coordinate_descent_tuning": True}
# Switches that paid on one workload and mode, on top of MAX_INDUCTOR; the others have not been
# measured with them, so they keep MAX_INDUCTOR alone. n-dimensional tiling of the Triton kernels
# (ResNet-50 training): +0.7%, +0.8% over the cdt loop and +1.1% over zbench's own step, three
# interleaved runs on one H100 (docs/performance.md, "How inductor shapes the reductions").
MAX_INDUCTOR_FOR: dict[tuple[str, str], dict[str, Any]] = {
    ("resnet50", "train"): {"triton.prefer_nd_tiling": True},
}


def max_inductor(workload: str, mode: str) -> dict[str, Any]:
    """The inductor switches `--preset max` turns on for this workload and mode."""
    return {**MAX_INDUCTOR, **MAX_INDUCTOR_FOR.get((workload, mode), {})}


def tune_kernels(workload: str, mode: str) -> dict[str, Any]:
    """Turn on ``max_inductor(workload, mode)`` for this process (it runs one configuration); what
    was set. Dotted keys name a sub-config (``triton.prefer_nd_tiling``), as inductor's own
    ``config.patch`` takes them."""
    import torch._inductor.config as inductor_config

    from zbench.runners.torch import inductor_fix

    switches = max_inductor(workload, mode)
    for key, value in switches.items():
        setattr(inductor_config, key, value)
    # A warm start must load the tuned kernels, not tune them again (inductor_fix says why).
    return {**switches, "warm_cache_fix": inductor_fix.install()}


def freeze_for_inference() -> None:
    """Inductor's freezing for an inference-only compile: weights become constants, so batch-norm
    is folded into the convolution before it and constant work is done once at compile time, as an
    inference engine does (TensorRT folds the same way). The model's function is unchanged; bf16
    rounding of the folded weights can differ in the last bit. Global to this process, which runs
    one configuration."""
    import torch._inductor.config as inductor_config

    inductor_config.freezing = True


def compile_backend() -> str:
    """torch.compile's backend: ``$ZBENCH_COMPILE_BACKEND``, default inductor."""
    return os.environ.get("ZBENCH_COMPILE_BACKEND", "inductor")


def compile_label(mode: str | None) -> str:
    """The compile setting in words: the backend, with its mode when it is inductor."""
    backend = compile_backend()
    return backend if backend != "inductor" else f"inductor ({mode or 'default'})"


def ddp_options(max_preset: bool) -> dict[str, Any]:
    """DistributedDataParallel's keyword arguments. Every run: gradients are views of the buckets.
    ``--preset max`` adds a static graph (buckets rebuilt once in the order gradients arrive, no
    search for unused parameters) and no buffer broadcast before each forward: training
    batch-norm normalizes with the batch's statistics, so the running averages (kept per rank) do
    not change what a training step computes."""
    opts: dict[str, Any] = {"gradient_as_bucket_view": True}
    if max_preset:
        bucket = os.environ.get(ENV_BUCKET_MB)
        opts.update(
            static_graph=True,
            broadcast_buffers=False,
            bucket_cap_mb=float(bucket) if bucket else DDP_BUCKET_MB,
        )
    return opts


def candidates(default: tuple[int, ...]) -> tuple[tuple[int, ...], str]:
    """The batches to measure and where they came from (``ZBENCH_MAX_BATCHES`` overrides)."""
    text = os.environ.get(ENV_BATCHES, "").strip()
    if not text:
        return default, "workload table"
    try:
        found = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        found = ()
    if not found or min(found) < 1:
        raise ValueError(f"{ENV_BATCHES} must be batch sizes like 256,384, got {text!r}")
    return found, f"set by {ENV_BATCHES}"


SEARCH_FILE = "batch_search.json"


SEARCH_KEYS = (
    "workload",
    "mode",
    "precision",
    "channels_last",
    "image_size",
    "compile",
    "compile_mode",
    "device",
    "data",
    "data_source",
    "grad_compression",
)


def search_key(cfg: RunConfig, batches: tuple[int, ...], fields: dict[str, Any]) -> str:
    """What a batch search's answer depends on: the run's settings that change a step's speed
    (``fields`` adds those resolved at run time: graphs, freezing, GPUs), the candidates, the
    compile backend, the GPU and the torch version (a new torch measures again)."""
    key: dict[str, Any] = {name: getattr(cfg, name) for name in SEARCH_KEYS}
    if cfg.data_source != "synthetic-device":
        key["workers"] = cfg.workers
    gpu = torch.cuda.get_device_name() if cfg.device == "cuda" else "cpu"
    key.update(
        fields,
        candidates=list(batches),
        backend=compile_backend(),
        gpu=gpu,
        torch=torch.__version__,
    )
    return json.dumps(key, sort_keys=True)


def cached_search(key: str) -> dict[str, Any] | None:
    """The record of a search made on this machine before under the same key, or None. The
    record says when (``measured_at``); ``zbench cache clear`` forgets it."""
    path = paths.use_cache() / SEARCH_FILE
    try:
        found = json.loads(path.read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("chosen"), int) else None


def store_search(key: str, record: dict[str, Any]) -> None:
    """Keep a search's record for later runs of the same key (best effort: a read-only cache
    folder only costs the next run its search)."""
    path = paths.use_cache() / SEARCH_FILE
    try:
        known = json.loads(path.read_text()) if path.exists() else {}
        known = known if isinstance(known, dict) else {}
        known[key] = {
            **record,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "cached": "this search's answer is reused until `zbench cache clear`",
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(known, indent=1))
        tmp.replace(path)
    except (OSError, ValueError):
        pass


def search(
    batches: tuple[int, ...],
    make_step: Callable[[int], Callable[[], Any]],
    sync: Callable[[], None],
    is_oom: Callable[[BaseException], bool],
    device: torch.device,
    distributed: bool,
    release: Callable[[], None],
) -> tuple[int | None, dict[str, Any]]:
    """Measure each batch with the run's own step; (the fastest, what was tried)."""
    tried: dict[str, Any] = {}
    best: tuple[float, int] | None = None
    t0 = time.perf_counter()
    for batch in sorted(batches):
        rate: float | None
        try:
            step = make_step(batch)
            for _ in range(2 + SEARCH_WARMUP):  # compile and capture, then warm up
                step()
            sync()
            s = time.perf_counter()
            for _ in range(SEARCH_STEPS):
                step()
            sync()
            rate = batch * SEARCH_STEPS / (time.perf_counter() - s)
        except Exception as exc:
            if not is_oom(exc):
                raise
            rate = None
        finally:
            step = None  # type: ignore[assignment]
            release()
        if distributed:  # the slowest rank's rate (an OOM anywhere counts as 0)
            t = torch.tensor([rate or 0.0], dtype=torch.float64, device=device)
            dist.all_reduce(t, op=dist.ReduceOp.MIN)
            rate = float(t.item()) or None
        tried[str(batch)] = round(rate, 1) if rate else "oom"
        if rate and (best is None or rate > best[0] * (1 + SEARCH_MARGIN)):
            best = (rate, batch)
    record = {
        "tried_samples_per_s": tried,
        "chosen": best[1] if best else None,
        "steps_each": SEARCH_STEPS,
        "rule": f"fastest; a larger batch must win by more than {SEARCH_MARGIN:.0%}",
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return (best[1] if best else None), record
