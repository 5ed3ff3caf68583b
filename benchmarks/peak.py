"""Peak: zbench's ``--preset max`` on ResNet-50 beside plain references on the same GPU.

References (benchmarks/reference/peak_ref.py, bf16 autocast, channels-last, cuDNN autotuner, fused
SGD): eager; torch.compile (default); torch.compile mode="max-autotune-no-cudagraphs"; one CUDA graph
per step (forward, backward and optimizer step captured together). Each measurement is a fresh
process; the references share one inductor cache made for this run, and the sides at one shape
take turns round by round. With ``start`` in the plan, zbench's row at the first batch of a mode
runs in the start runs' data folder, so its compile is a warm one and the cold compile is the
start row's; elsewhere zbench's first round compiles cold. Training at batch 256 and 384,
inference at 512 and 1024, then zbench's 2-GPU weak scaling against its own 1-GPU run when two GPUs
are visible. Runs that would overrun --budget are skipped and listed as such; max-autotune comes
last because it compiles longest, then, for training, zbench with the same mode
(--compile-mode max-autotune-no-cudagraphs, under its whole-step CUDA graph), which reuses the
kernel choices the reference's search cached. ``start`` runs `zbench run resnet50 --preset max` in
one fresh data directory, once cold and ``--warm-runs`` times warm, and prints the cold time to the
first measured step and the warm ones' median; ``candidates`` runs benchmarks/peak_candidates.py
(each candidate beside the plain compiled reference) and prints its table. ``--sides``: part of it.

    python3 benchmarks/peak.py --out peak.json
    python3 benchmarks/peak.py --modes train --sides max-autotune,zbench-max-autotune
    python3 benchmarks/peak.py --modes train --sides start,candidates
    python3 benchmarks/peak.py --device cpu --rounds 1        # smoke test: eager references only
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.args import OneLineParser, batch_sizes, comma_choices  # noqa: E402
from benchmarks.reference import runs  # noqa: E402
from zbench.textfit import counted  # noqa: E402

# The goals: training >= 7,500 img/s on one H200 (MLPerf Training v4.0's 8x H200 ResNet-50, about
# 7,950 img/s per GPU, is the stretch), inference >= 28,000, warm start <= 10 s, 2-GPU scaling.
GOALS = {"train": 7500.0, "infer": 28000.0, "scaling": 1.98, "warm_start_s": 10.0}
STRETCH = {"train": 7950.0}
EST_RATE = {"train": 7000.0, "infer": 24000.0}  # img/s, to choose step counts for a ~2 s window
# Seconds per process on one H200, for the budget: start-up, compilation (cold for zbench), run.
# zbench's max compiles with coordinate-descent tuning: 228 s cold for training beside six other
# compiling processes (peak_candidates.py), 56 s without it, 254 s alone (start runs); inference
# (freezing leaves few Triton kernels to tune) 27 s.
EST_S = {
    ("zbench", "train"): 180,
    ("zbench", "infer"): 60,
    ("eager", "train"): 12,
    ("eager", "infer"): 10,
    ("compile", "train"): 30,
    ("compile", "infer"): 20,
    ("cudagraph", "train"): 14,
    ("cudagraph", "infer"): 12,
    ("compile-freeze", "infer"): 25,
    ("max-autotune", "train"): 200,
    ("max-autotune", "infer"): 120,
    ("zbench-2gpu", "train"): 220,
    ("zbench-graphs-compile", "train"): 180,
    ("zbench-max-autotune", "train"): 220,
    ("start", "train"): 280,
    ("start", "infer"): 200,
    ("candidates", "train"): 200,
    ("candidates", "infer"): 90,
}
WARM_EST_S = 40  # zbench after the start runs: a warm start (12.8 s on one H200) and its windows
# zbench's sides: its default max (the whole step in one CUDA graph) and the other named setting,
# torch.compile's own CUDA graphs (--graphs compile, mode reduce-overhead), and max-autotune's kernel
# search under zbench's own whole-step graph (--compile-mode max-autotune-no-cudagraphs).
ZBENCH_FLAGS = {
    "zbench-graphs-compile": ["--graphs", "compile"],
    "zbench-max-autotune": ["--compile-mode", "max-autotune-no-cudagraphs"],
}
SIDES = (
    "zbench",
    "eager",
    "compile",
    "cudagraph",
    "compile-freeze",
    "max-autotune",
    "zbench-2gpu",
    *ZBENCH_FLAGS,
    "start",
    "candidates",
)
# "start": `zbench run resnet50 --preset max --mode M` as typed, cold, then --warm-runs more in its
# folder (one warm start is no figure: on one machine they spread 10.4-14.0 s).
START_STEPS, START_WARMUP = 20, 5


def parser() -> OneLineParser:
    p = OneLineParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--train-batches", type=batch_sizes, default=(256, 384))
    p.add_argument("--infer-batches", type=batch_sizes, default=(512, 1024))
    p.add_argument(
        "--modes",
        type=lambda t: comma_choices(t, ("train", "infer"), "mode"),
        default=("train", "infer"),
        help="train,infer (default both)",
    )
    p.add_argument(
        "--sides",
        type=lambda t: comma_choices(t, SIDES, "side"),
        help="run only these sides of the plan (default: all of it)",
    )
    p.add_argument("--rounds", type=int, default=1, help="processes per side; medians reported")
    p.add_argument("--seconds", type=float, default=2.0, help="target timed window")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--budget", type=float, default=360, help="seconds; later runs are skipped")
    p.add_argument("--autotune-all", action="store_true", help="max-autotune at every batch size")
    p.add_argument("--gpus", type=int, help="GPUs for the scaling run (default: 2 if visible)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--image-size", type=int, help="default 224 (32 with --device cpu)")
    p.add_argument(
        "--start-batch", type=int, help="the start runs' --batch-size (default: searched)"
    )
    p.add_argument(
        "--warm-runs",
        type=int,
        default=3,
        help="warm starts after the cold one; their median is the warm start (default 3)",
    )
    p.add_argument(
        "--start-home",
        type=Path,
        help="the start runs' data folder, one per mode under it (default: fresh temporary ones); "
        "benchmarks/start_split.py --home DIR/train --skip-cold then starts warm in it, and so "
        "does zbench's row of a later peak.py call without `start` in --sides",
    )
    p.add_argument("--out", type=Path)
    p.add_argument("--logs", type=Path, help="children's output (default: a temporary folder)")
    p.add_argument("--ref", help=argparse.SUPPRESS)  # internal: run one reference in this process
    p.add_argument("--mode", help=argparse.SUPPRESS)
    p.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    p.add_argument("--backend", default="inductor", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    return p


def plan(a: argparse.Namespace, gpus: int) -> list[tuple[str, str, int]]:
    """(side, mode, batch) in run order, most wanted first, as later runs may not fit the budget:
    everything at the first training and inference batch; zbench's 2-GPU run; zbench at the other
    batches, then the references there; max-autotune, which compiles longest, last."""
    cpu = a.device == "cpu"
    base = ("eager", "compile") if cpu else ("eager", "compile", "cudagraph")

    def refs(mode: str) -> tuple[str, ...]:
        # Inference also against a compile with inductor's freezing (batch-norm folded), as an
        # expert serving a model would write it, since zbench's max inference freezes too.
        return (*base, "compile-freeze") if mode == "infer" and not cpu else base

    batches = {"train": a.train_batches, "infer": a.infer_batches}
    firsts = [(m, batches[m][0]) for m in a.modes]
    others = [(m, b) for m in a.modes for b in batches[m][1:]]
    # start: the preset's cold and warm start, first, so that zbench's own row at that batch
    # reuses its data folder (a third, warm run; the cold compile is the start row's);
    # candidates: peak_candidates.py.
    lead = ("start",) if not cpu else ()
    jobs = [(side, m, b) for m, b in firsts for side in (*lead, "zbench", *refs(m))]
    if not cpu:
        jobs += [("candidates", m, b) for m, b in firsts]
    if "train" in a.modes:
        if gpus > 1:
            jobs.append(("zbench-2gpu", "train", a.train_batches[0]))
        jobs.append(("zbench-graphs-compile", "train", a.train_batches[0]))
    jobs += [("zbench", m, b) for m, b in others]
    jobs += [(side, m, b) for m, b in others for side in reversed(refs(m))]
    if not cpu:
        tuned = firsts + others if a.autotune_all else firsts
        jobs += [("max-autotune", m, b) for m, b in tuned]
        # zbench under max-autotune where its default misses the goal: training.
        jobs += [("zbench-max-autotune", m, b) for m, b in tuned if m == "train"]
    return [j for j in jobs if j[0] in a.sides] if a.sides else jobs  # main() refuses an empty plan


def command(a: argparse.Namespace, side: str, mode: str, batch: int, gpus: int) -> list[str]:
    steps = 2 if a.device == "cpu" else max(10, round(a.seconds * EST_RATE[mode] / batch))
    warmup = 1 if a.device == "cpu" else a.warmup
    common = ["--mode", mode, "--batch-size", str(batch), "--steps", str(steps)]
    size = a.image_size or (32 if a.device == "cpu" else 224)
    common += ["--warmup", str(warmup), "--image-size", str(size), "--device", a.device]
    if side.startswith("zbench"):
        flags = ZBENCH_FLAGS.get(side, []) if a.device == "cuda" else []  # no CUDA graphs on a CPU
        on = ["--gpus", str(gpus if "2gpu" in side else 1), *flags]
        return ["resnet50", "--preset", "max", *common, *on]
    backend = "eager" if a.device == "cpu" else "inductor"  # CPU smoke: no C++ compile
    script = str(Path(__file__).resolve())
    return [sys.executable, script, "--ref", side, *common, "--backend", backend]


def reference_main(a: argparse.Namespace) -> int:
    from benchmarks.reference import peak_ref

    ns = argparse.Namespace(variant=a.ref, **{k: v for k, v in vars(a).items() if k != "ref"})
    Path(a.result).write_text(json.dumps(peak_ref.run(ns)))
    return 0


def start_times(
    a: argparse.Namespace, mode: str, log: Path, timeout: float, env: dict[str, str]
) -> dict[str, Any]:
    """Cold and warm starts: one fresh ZBENCH_HOME (``env``, zbench's own compile cache in it), a
    cold run and ``--warm-runs`` warm ones."""
    batch = ["--batch-size", str(a.start_batch)] if a.start_batch else []
    argv = [
        "resnet50",
        "--preset",
        "max",
        "--mode",
        mode,
        *batch,
        "--steps",
        str(START_STEPS),
        "--warmup",
        str(START_WARMUP),
        "--repeat",
        "1",
        "--device",
        a.device,
        "--image-size",
        str(a.image_size),
    ]
    return runs.start_runs(argv, log, timeout, env, a.warm_runs, f"start {mode}")


def candidates(mode: str, log: Path, budget: float) -> dict[str, Any]:
    """benchmarks/peak_candidates.py for one mode, in the budget left; its rows and its table."""
    with tempfile.TemporaryDirectory(prefix="zbench-peak-cand-") as tmp:
        out = Path(tmp) / "candidates.json"
        script = str(Path(__file__).resolve().with_name("peak_candidates.py"))
        cmd = [
            sys.executable,
            script,
            "--modes",
            mode,
            "--budget",
            f"{budget:.0f}",
            "--out",
            str(out),
        ]
        with log.open("a") as fh:
            rc = subprocess.run(
                cmd,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env=runs.child_env(),
                timeout=budget + 60,
                check=False,
            ).returncode
        got = json.loads(out.read_text()) if out.exists() else {}
    if rc or not got:
        return {"candidates": [], "runs": [{"error": f"exit {rc}"}]}
    from benchmarks import peak_candidates

    print(peak_candidates.table(got), file=sys.stderr, flush=True)
    return {"candidates": got["rows"], "table": peak_candidates.table(got), "runs": []}


def estimate(a: argparse.Namespace, side: str, mode: str, warm: bool) -> float:
    """Seconds one process of a side should take, for the budget (a warm zbench in the start runs'
    folder: WARM_EST_S); the start runs and the candidates whole."""
    if side == "start":
        return EST_S[(side, mode)] + a.warm_runs * WARM_EST_S
    return WARM_EST_S if warm else EST_S.get((side, mode), 30)


def execute(
    a: argparse.Namespace, jobs: list[tuple[str, str, int]], gpus: int, logs: Path
) -> list[dict[str, Any]]:
    """Run the plan. The sides at one shape take turns, round by round (zbench, compile, zbench,
    compile, ...), so a drift of the GPU's clocks or temperature over the call is shared by every
    side rather than loaded onto the last one."""
    cache = Path(tempfile.mkdtemp(prefix="zbench-peak-inductor-"))
    env = runs.child_env(
        {"TORCHINDUCTOR_CACHE_DIR": str(cache), "TRITON_CACHE_DIR": str(cache / "triton")}
    )
    if a.device == "cpu":
        env["ZBENCH_COMPILE_BACKEND"] = "eager"  # smoke test: the compile path, no C++ build
    t0, rows = time.perf_counter(), []
    started: dict[str, dict[str, str]] = {}  # mode -> the start runs' environment (warm cache)
    if a.start_home and not any(side == "start" for side, _, _ in jobs):
        # The start runs of an earlier call left their folders: zbench starts warm in them, so
        # a GPU whose cold compile takes most of a call measures zbench beside the references in
        # the next one.
        for mode in {m for _, m, _ in jobs}:
            if (a.start_home / mode).is_dir():
                _, started[mode] = runs.start_env("zbench-peak-start-", a.start_home / mode)

    def left() -> float:
        return a.budget - (time.perf_counter() - t0)

    def fits(row: dict[str, Any], est: float) -> bool:
        if a.device != "cuda" or est <= left():
            return True
        why = f"budget: needs ~{est:.0f} s, {max(0, left()):.0f} s left"
        row["rounds_cut" if row["runs"] else "skipped"] = why
        what = f"stopped after round {len(row['runs'])}" if row["runs"] else "skipped"
        print(f"  {row['side']} {row['mode']} {row['batch']}: {what} ({why})", file=sys.stderr)
        return False

    group: list[dict[str, Any]] = []  # rows of one shape, measured in turns

    def flush() -> None:
        for _ in range(a.rounds):
            for row in [r for r in group if "skipped" not in r and "rounds_cut" not in r]:
                side, mode = row["side"], row["mode"]
                warm = started.get(mode) if side == "zbench" else None
                if not fits(row, estimate(a, side, mode, warm=warm is not None)):
                    continue
                log = logs / f"{side}-{mode}-{row['batch']}.log"
                cmd = command(a, side, mode, row["batch"], gpus)
                timeout = max(120.0, left())
                res = (
                    runs.zbench(cmd, log, timeout, warm or env)
                    if side.startswith("zbench")
                    else runs.reference(cmd, log, timeout, env)
                )
                row["runs"].append(res)
                got = (
                    f"{res['samples_per_s']:.0f} img/s" if "samples_per_s" in res else res["error"]
                )
                print(f"  {side} {mode} {row['batch']}: {got}", file=sys.stderr, flush=True)
        for row in group:
            done = [r for r in row["runs"] if "samples_per_s" in r]
            row["median"] = statistics.median(r["samples_per_s"] for r in done) if done else None
            firsts = [f for r in done if (f := r.get("compile_s") or r.get("first_steps_s"))]
            row["first_s"] = statistics.median(firsts or [0.0]) if done else None
        group.clear()

    for side, mode, batch in jobs:
        row: dict[str, Any] = {"side": side, "mode": mode, "batch": batch, "runs": []}
        if group and (
            side in ("start", "candidates")
            or (mode, batch) != (group[0]["mode"], group[0]["batch"])
        ):
            flush()
        rows.append(row)
        log = logs / f"{side}-{mode}-{batch}.log"
        if side == "start":
            if fits(row, estimate(a, side, mode, warm=False)):
                home = a.start_home / mode if a.start_home else None
                _, started[mode] = runs.start_env("zbench-peak-start-", home)
                row.update(start_times(a, mode, log, max(120.0, left()), started[mode]))
        elif side == "candidates":
            if fits(row, estimate(a, side, mode, warm=False)):
                row.update(candidates(mode, log, left()))
        else:
            group.append(row)
    flush()
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    goals: dict[str, Any] = {}
    # A run skipped for the budget has no median.
    z = {(r["mode"], r["batch"]): r.get("median") for r in rows if r["side"] == "zbench"}
    for r in (r for r in rows if r["side"] == "start" and r.get("warm_s")):
        goals[f"warm start {r['mode']}"] = {
            "zbench": r["warm_s"],
            "goal": GOALS["warm_start_s"],
            "met": r["warm_s"] <= GOALS["warm_start_s"],
            "cold_s": r["cold_s"],
            "runs_s": r.get("warm_runs_s") or [r["warm_s"]],
        }
    for r in rows:
        base = z.get((r["mode"], r["batch"]))
        r["zbench_ratio"] = (
            base / r["median"] if base and r.get("median") and r["side"] != "zbench" else None
        )
    for mode in ("train", "infer"):
        best = max(((v, b) for (m, b), v in z.items() if m == mode and v), default=None)
        if best:
            goals[mode] = {
                "zbench": best[0],
                "batch": best[1],
                "goal": GOALS[mode],
                "met": best[0] >= GOALS[mode],
            }
            if mode in STRETCH:
                goals[mode]["stretch"] = STRETCH[mode]
    two = next((r for r in rows if r["side"] == "zbench-2gpu" and r.get("median")), None)
    if two and z.get(("train", two["batch"])):
        s = two["median"] / z[("train", two["batch"])]
        goals["scaling"] = {"zbench": s, "goal": GOALS["scaling"], "met": s >= GOALS["scaling"]}
    return goals


def print_table(rows: list[dict[str, Any]], goals: dict[str, Any], wall: float) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="ResNet-50 peak: zbench --preset max vs plain references (bf16, channels-last)")
    for col in ("mode", "batch", "side", "img/s", "compile/first s", "zbench / this"):
        t.add_column(col, justify="left" if col in ("mode", "side") else "right")
    for r in rows:
        if r["side"] == "candidates":  # its own table, printed after this one
            continue
        med, first, ratio = r.get("median"), r.get("first_s"), r.get("zbench_ratio")
        if r["side"] == "start":
            cold, warm = r.get("cold_s"), r.get("warm_s")
            first = None
            note = (
                f"cold {cold:.1f} / warm {warm:.1f} s"
                if cold and warm
                else ("skipped" if r.get("skipped") else "failed")
            )
            t.add_row(
                r["mode"],
                str(r.get("batch") or "-"),
                "start (to 1st step)",
                f"{med:.0f}" if med else "-",
                note,
                "-",
            )
            continue
        note = (r.get("skipped") and "skipped") or (r["runs"] and not med and "failed") or ""
        t.add_row(
            r["mode"],
            str(r["batch"]),
            r["side"] + (" (rounds cut by the budget)" if "rounds_cut" in r else ""),
            f"{med:.0f}" if med else note or "-",
            f"{first:.1f}" if first else "-",
            f"{ratio:.3f}" if ratio else "-",
        )
    console = Console(width=100)
    console.print(t)
    for r in (r for r in rows if r["side"] == "candidates"):
        console.print(r.get("table") or f"candidates {r['mode']}: {r.get('skipped') or 'failed'}")
    for name, g in goals.items():
        at = f" at batch {g['batch']}" if "batch" in g else ""
        cold = f" (cold {g['cold_s']:.1f} s)" if g.get("cold_s") else ""
        runs_s = g.get("runs_s") or []
        spread = f" (warm runs: {', '.join(f'{s:.1f}' for s in runs_s)})" if len(runs_s) > 1 else ""
        stretch = ""
        if g.get("stretch"):
            stretch = f"; stretch {g['stretch']:.0f}: {g['zbench'] / g['stretch']:.3f} of it"
        console.print(
            f"goal {name}: zbench {g['zbench']:.3f}{at}{cold}{spread} vs {g['goal']} -> "
            f"{'met' if g['met'] else 'NOT met'}{stretch}"
        )
    console.print(f"total {wall:.0f} s (compile and first steps included, reported apart above)")


def main(argv: list[str]) -> int:
    a = parser().parse_args(argv)
    a.image_size = a.image_size or (32 if a.device == "cpu" else 224)
    if a.ref:
        return reference_main(a)
    if a.rounds < 1 or a.seconds <= 0 or a.warmup < 0 or a.warm_runs < 1:
        parser().error("--rounds, --seconds and --warm-runs must be positive, --warmup 0 or more")
    visible = runs.visible_gpus() if a.device == "cuda" else 0
    gpus = a.gpus or (2 if visible >= 2 else 1)
    if gpus > 1 and visible < gpus:
        parser().error(f"--gpus {gpus} but {visible} GPUs visible")
    logs = a.logs or Path(tempfile.mkdtemp(prefix="zbench-peak-"))
    logs.mkdir(parents=True, exist_ok=True)
    jobs = plan(a, gpus)
    for mode in {m for side, m, _ in jobs if side == "start"}:
        if a.start_home and (a.start_home / mode).is_dir() and any((a.start_home / mode).iterdir()):
            parser().error(
                f"--start-home {a.start_home} already holds a {mode} data folder: its cold start "
                "would start warm; give a new folder (or leave `start` out of --sides to reuse it)"
            )
    if not jobs:
        parser().error(
            f"--sides {','.join(a.sides)} plans nothing with --modes {','.join(a.modes)}, "
            f"--device {a.device} and {counted(gpus, 'GPU')}"
        )
    once = ("start", "candidates")  # the other sides run --rounds processes
    est = sum(estimate(a, s, m, False) * (1 if s in once else a.rounds) for s, m, _ in jobs)
    print(
        f"{len(jobs)} rows, ~{est / 60:.1f} min in all; budget {a.budget / 60:.1f} min",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    rows = execute(a, jobs, gpus, logs)
    wall = time.perf_counter() - t0
    goals = summarize(rows)
    print_table(rows, goals, wall)
    print(f"children's logs: {logs}", file=sys.stderr)
    if a.out:
        out = {"wall_s": wall, "budget_s": a.budget, "goals": goals, "rows": rows}
        a.out.write_text(json.dumps(out, indent=1))
    failed = any(r["runs"] and not r.get("median") for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.pop("TORCH_LOGS", None)
    sys.exit(main(sys.argv[1:]))
