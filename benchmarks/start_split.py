"""Where a warm `--preset max` start spends its seconds: cold run, warm run, warm run profiled.

    python3 benchmarks/start_split.py --out start.json [--prof warm.prof] [--mode train]
    python3 benchmarks/start_split.py --out start.json --variants warm,cudnn-off,limit1,threads1

One fresh data directory (so zbench's compile cache starts empty): the cold run compiles and
fills the cache, the warm run reuses it, and a third run, warm too, runs under cProfile. Prints the
seconds from launch to each phase of the cold and warm runs, and the profiled run's functions by
self and cumulative time. cProfile slows Python-heavy parts (dynamo's tracing) more than the rest:
read its split as shares, and the unprofiled warm run for the total. The runs reuse Python's
bytecode from the first one, as an installed torch would (`runs.start_env`).

``--variants`` adds warm runs that change one thing each (VARIANTS), between the warm run and the
profiled one, with their rate beside their start: a start saved by a slower step is no saving.
"""

from __future__ import annotations

import json
import os
import pstats
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
}


def variant_env(name: str, env: dict[str, str], home: Path) -> dict[str, str]:
    """``env`` with variant ``name`` applied. A cuDNN benchmark limit has no environment variable:
    a ``sitecustomize`` module ahead on the path sets it at interpreter start (zbench sets
    ``cudnn.benchmark`` only, never the limit, so it stays)."""
    extra = dict(VARIANTS[name])
    limit = extra.pop("benchmark_limit", None)
    out = {**env, **extra}
    if limit is not None:
        site = home / f"site-{name}"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(
            f"import torch\ntorch.backends.cudnn.benchmark_limit = {int(limit)}\n"
        )
        out["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH"))))
    return out


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
    p.add_argument("--home", type=Path, help="data folder to use (default: a fresh one)")
    p.add_argument(
        "--skip-cold",
        action="store_true",
        help="no cold run: --home's cache was filled by another run of the same configuration",
    )
    a = p.parse_args(argv)
    if a.skip_cold and not a.home:
        p.error("--skip-cold needs --home, the data folder a cold run filled")
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
    first = () if a.skip_cold else ("cold",)
    for name in (*first, "warm", *(f"variant:{v}" for v in a.variants)):
        run_env = variant_env(name[8:], env, Path(home)) if name.startswith("variant:") else env
        res = runs.zbench(argv_run, log, 600, run_env)
        out[name] = {
            k: res.get(k)
            for k in ("to_measure_s", "marks_s", "compile_s", "samples_per_s", "process_s", "error")
        }
        print(f"{name}: {json.dumps(out[name])}", flush=True)
        save(a.out, out)  # a later run that overruns keeps these
    cache = Path(home) / "cache"
    out["cache_mb"] = round(
        sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) / 2**20, 1
    )
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


def save(path: Path, out: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
