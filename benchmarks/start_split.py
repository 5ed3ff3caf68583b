"""Where a warm `--preset max` start spends its seconds: cold run, warm run, warm run profiled.

    python3 benchmarks/start_split.py --out start.json [--prof warm.prof] [--mode train]
    python3 benchmarks/start_split.py --out start.json --variants warm,cudnn-off,limit1,threads1
    python3 benchmarks/start_split.py --home DIR --skip-cold --variants no-prewarm --rounds 3 --no-profile

One fresh data directory (so zbench's compile cache starts empty): the cold run compiles and
fills the cache, the warm run reuses it, and a third run, warm too, runs under cProfile. Prints the
seconds from launch to each phase of the cold and warm runs, and the profiled run's functions by
self and cumulative time. cProfile slows Python-heavy parts (dynamo's tracing) more than the rest:
read its split as shares, and the unprofiled warm run for the total. The runs reuse Python's
bytecode from the first one, as an installed torch would (`runs.start_env`).

``--variants`` adds warm runs that change one thing each (VARIANTS), between the warm run and the
profiled one, with their rate beside their start: a start saved by a slower step is no saving.
``--rounds N`` runs the warm run and the variants N times, interleaved (warm, a, b, warm, a, b...)
so a drift of the machine falls on all of them alike, and prints each one's median.
"""

from __future__ import annotations

import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.args import OneLineParser, comma_choices  # noqa: E402
from benchmarks.reference import runs  # noqa: E402

# Warm runs that change one thing. cuDNN's autotuner lives in the process, so every start times the
# convolution algorithms again: "cudnn-off" takes cuDNN's heuristic choice instead, "limitN" times
# only the heuristic's first N (PyTorch's default is 10). Inductor loads a warm cache's kernels in
# a pool of compile workers; "threads1" loads them in the process itself.
VARIANTS: dict[str, dict[str, str]] = {
    "warm": {},  # the same warm start again: the spread of the figure
    "cudnn-off": {"ZBENCH_CUDNN_BENCHMARK": "0"},
    "limit1": {"benchmark_limit": "1"},
    "limit3": {"benchmark_limit": "3"},
    "threads1": {"TORCHINDUCTOR_COMPILE_THREADS": "1"},
    # The backward's cuDNN plans tuned in a helper thread while the main one loads the graphs
    # (zbench/runners/torch/prewarm.py), alone and with the one compile thread. It is on by
    # default for a compiled image classifier on a GPU of 64 GiB or more (prewarm.wanted), so
    # "warm" has it there: "no-prewarm" is the start without it.
    "prewarm": {"ZBENCH_CUDNN_PREWARM": "1"},
    "no-prewarm": {"ZBENCH_CUDNN_PREWARM": "0"},
    "prewarm-threads1": {"ZBENCH_CUDNN_PREWARM": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1"},
    # A copy of the data folder whose FX-graph and AOTAutograd entries were compiled again after
    # the cold run's coordinate-descent search (see ``resave``): its bundled kernels hold the
    # winning block sizes, so a warm start need not build them from source.
    "resaved": {},
}
# Inductor's own timers (torch._dynamo.utils.compilation_time_metrics) worth a line each: where a
# warm start's compile seconds go. A run writes them at exit (``metrics_site``).
METRICS = (
    "inductor_import",
    "TritonBundler.load_cached_static_autotuners",
    "StaticAutotunerFuture.warm_precompile",
    "CachingAutotuner.slow_precompile_config",
    "reload_kernel_in_parent",
    "async_compile.wait",
    "compile_fx_inner",
    "fx_codegen_and_compile",
    "aot_autograd_cache_load",
    "_compile.compile_inner",
)


def variant_env(name: str, env: dict[str, str], home: Path) -> dict[str, str]:
    """``env`` with variant ``name`` applied. A cuDNN benchmark limit has no environment variable:
    a ``sitecustomize`` module ahead on the path sets it at interpreter start (zbench sets
    ``cudnn.benchmark`` only, never the limit, so it stays). ``resaved`` runs in ``resave``'s
    copy of ``home``."""
    extra = dict(VARIANTS[name])
    limit = extra.pop("benchmark_limit", None)
    out = {**env, **extra}
    if name == "resaved":
        out["ZBENCH_HOME"] = str(resaved_home(home))  # bytecode: the same PYTHONPYCACHEPREFIX
    if limit is not None:
        site = home / f"site-{name}"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(
            f"import torch\ntorch.backends.cudnn.benchmark_limit = {int(limit)}\n"
        )
        out["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), out.get("PYTHONPATH"))))
    return out


def resaved_home(home: Path) -> Path:
    return home.with_name(home.name + "-resaved")


# The cache folders that hold a compiled graph (inductor's FX-graph entries, AOTAutograd's); the
# kernels' sources, their tuned block sizes and Triton's binaries stay.
GRAPH_ENTRIES = ("fxgraph", "aotautograd")


def resave(home: Path) -> Path:
    """Copy ``home`` (filled by a cold run) and drop the copy's compiled-graph entries, so its next
    run compiles the graphs again (no tuning: the winners are cached) and saves them with the
    winning kernels bundled. On torch 2.11 the cold run bundles each kernel as compiled, before
    coordinate-descent tuning ran, and a warm start then builds each winner from source
    (``CachingAutotuner.slow_precompile_config``). Returns the copy."""
    import shutil

    copy = resaved_home(home)
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(home, copy, symlinks=True, ignore=shutil.ignore_patterns("site-*", "*.log"))
    for sub in GRAPH_ENTRIES:
        for found in (copy / "cache").rglob(sub):
            if found.is_dir():
                shutil.rmtree(found)
    return copy


def metrics_site(home: Path) -> Path:
    """A ``sitecustomize`` folder whose module, at exit, writes inductor's timers to
    ``$ZBENCH_START_METRICS`` (nothing is imported at start: the start is what is measured)."""
    site = home / "site-metrics"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import atexit, json, os, sys\n"
        "def _dump():\n"
        "    path = os.environ.get('ZBENCH_START_METRICS')\n"
        "    utils = sys.modules.get('torch._dynamo.utils')\n"
        "    if path and utils is not None:\n"
        "        got = {k: [round(x, 4) for x in v]\n"
        "               for k, v in utils.compilation_time_metrics.items()}\n"
        "        with open(path, 'w') as fh:\n"
        "            json.dump(got, fh)\n"
        "atexit.register(_dump)\n"
    )
    return site


def metric_sums(path: Path) -> dict[str, object]:
    """``METRICS``' totals (seconds, calls) from one run's dump."""
    try:
        got = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {k: [round(sum(got[k]), 2), len(got[k])] for k in METRICS if got.get(k)}


def summary(prof: Path, top: int) -> dict[str, object]:
    """The profile's functions by their own (self) time and by cumulative time. Self time is the
    view that adds up here: dynamo's frame evaluation hides the outer frames' cumulative time from
    cProfile (a warm run's harness functions showed almost none), while built-ins such as
    ``compile`` (Python source to bytecode) and the CUDA calls keep theirs."""
    stats = pstats.Stats(str(prof))
    rows = [
        (tt, ct, nc, f"{Path(file).name}:{line}:{fn}")
        for (file, line, fn), (_cc, nc, tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]
    ]
    return {
        "profiled_self_s": round(sum(r[0] for r in rows), 2),
        "top_self": [
            (round(tt, 2), nc, name) for tt, _, nc, name in sorted(rows, reverse=True)[:top]
        ],
        "top_cumulative": [
            (round(ct, 2), nc, name)
            for _, ct, nc, name in sorted(rows, key=lambda r: r[1], reverse=True)[:top]
        ],
    }


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--prof", type=Path, help="keep the profile here (pstats)")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--steps", type=int, default=20, help="measured steps per run (rate)")
    p.add_argument(
        "--variants",
        type=lambda t: comma_choices(t, tuple(VARIANTS), "variant"),
        default=(),
        help=f"extra warm runs, of: {','.join(VARIANTS)}",
    )
    p.add_argument(
        "--rounds", type=int, default=1, help="times to run the warm run and each variant"
    )
    p.add_argument("--no-profile", action="store_true", help="skip the profiled warm run")
    p.add_argument(
        "--metrics",
        action="store_true",
        help="record inductor's own timers of each run (METRICS) beside its start",
    )
    p.add_argument("--home", type=Path, help="data folder to use (default: a fresh one)")
    p.add_argument(
        "--skip-cold",
        action="store_true",
        help="no cold run: --home's cache was filled by another run of the same configuration",
    )
    a = p.parse_args(argv)
    if a.skip_cold and not a.home:
        p.error("--skip-cold needs --home, the data folder a cold run filled")
    if a.rounds < 1:
        p.error(f"--rounds must be 1 or more, not {a.rounds}")
    home, env = runs.start_env("zbench-start-split-", a.home)
    argv_run = [
        "resnet50",
        "--preset",
        "max",
        "--mode",
        a.mode,
        "--batch-size",
        str(a.batch),
        "--steps",
        str(a.steps),
        "--warmup",
        "5",
        "--repeat",
        "1",
    ]
    log = Path(home) / "runs.log"
    out: dict[str, object] = {}
    warm = ("warm", *(f"variant:{v}" for v in a.variants))
    order = [*(() if a.skip_cold else ("cold",)), *(warm * a.rounds)]
    if "resaved" in a.variants:
        if "cold" in order:
            order.insert(1, "resave")
        else:
            order.insert(0, "resave")
    seen: dict[str, int] = {}
    for name in order:
        seen[name] = seen.get(name, 0) + 1
        key = name if a.rounds == 1 or name in ("cold", "resave") else f"{name}#{seen[name]}"
        if name == "resave":  # the copy's one run that compiles its graphs again
            resave(Path(home))
            name = "variant:resaved"
        run_env = variant_env(name[8:], env, Path(home)) if name.startswith("variant:") else env
        dump = Path(home) / f"metrics-{key.replace(':', '-').replace('#', '-')}.json"
        if a.metrics:
            site = metrics_site(Path(home))
            run_env = {
                **run_env,
                "ZBENCH_START_METRICS": str(dump),
                "PYTHONPATH": os.pathsep.join(filter(None, (str(site), run_env.get("PYTHONPATH")))),
            }
        res = runs.zbench(argv_run, log, 600, run_env)
        out[key] = {
            k: res.get(k)
            for k in ("to_measure_s", "marks_s", "compile_s", "samples_per_s", "process_s", "error")
        }
        if a.metrics:
            out[key]["inductor_s"] = metric_sums(dump)
        # Whether the runner's cuDNN prewarm ran, why, and for how long (its settings).
        out[key]["cudnn_prewarm"] = (res.get("settings") or {}).get("cudnn_prewarm")
        print(f"{key}: {json.dumps(out[key])}", flush=True)
        save(a.out, out)  # a later run that overruns keeps these
    if a.rounds > 1:
        out["medians"] = medians(out, warm)
        for name, row in out["medians"].items():  # type: ignore[union-attr]
            print(f"median {name}: {json.dumps(row)}", flush=True)
        save(a.out, out)
    cache = Path(home) / "cache"
    out["cache_mb"] = round(
        sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) / 2**20, 1
    )
    if a.no_profile:
        return 0
    prof = a.prof or Path(home) / "warm.prof"
    prof.parent.mkdir(parents=True, exist_ok=True)
    events = Path(home) / "events.jsonl"
    t0 = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "cProfile",
        "-o",
        str(prof),
        "-m",
        "zbench.runners",
        *argv_run,
        "--events",
        str(events),
    ]
    rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=False).returncode
    out["profiled"] = {"rc": rc, "wall_s": round(time.perf_counter() - t0, 2)}
    if rc == 0 and prof.exists():
        out["profiled"].update(summary(prof, a.top))  # type: ignore[union-attr]
        print(json.dumps(out["profiled"], indent=1), flush=True)
    save(a.out, out)
    return 0


def medians(out: dict[str, object], names: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Each name's median start and rate over its rounds (``name#1``, ``name#2``...), and the
    spread of its starts; rounds that failed are left out and counted."""
    rows: dict[str, dict[str, object]] = {}
    for name in names:
        got = [v for k, v in out.items() if k.split("#")[0] == name and isinstance(v, dict)]
        ok = [r for r in got if r.get("to_measure_s") is not None]
        starts = [float(r["to_measure_s"]) for r in ok]
        rates = [float(r["samples_per_s"]) for r in ok if r.get("samples_per_s") is not None]
        rows[name] = {
            "to_measure_s": round(statistics.median(starts), 2) if starts else None,
            "start_range_s": [min(starts), max(starts)] if starts else None,
            "samples_per_s": round(statistics.median(rates), 1) if rates else None,
            "failed": len(got) - len(ok),
        }
    return rows


def save(path: Path, out: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
