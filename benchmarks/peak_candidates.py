"""Candidates for ResNet-50 under ``--preset max``, each measured beside the plain compiled reference
in one run, in interleaved windows (reference, candidate, reference, ...), medians compared.

Training reference: torch.compile (default mode), bf16 autocast, channels-last, cuDNN autotuner,
fused SGD, batch 256, no CUDA graph: what an expert writes. Candidates change one thing each, or
several together: the whole step captured in one CUDA graph (what ``--preset max`` does), inductor
switches (coordinate-descent tuning of the Triton kernels, pointwise autotuning, aggressive fusion),
the foreach optimizer, larger batches. Inference reference: torch.compile at batch 512; candidates:
inductor freezing, freezing plus the forward in one CUDA graph. ``--bn`` also times training
batch-norm + ReLU on ResNet-50's layer shapes: inductor's Triton kernels against cuDNN's NHWC
kernels (eager), forward and backward, and the stem max-pool (benchmarks/kernel_micro.py).

Each side (the references and every candidate) is its own process, all compiling at once with
one cold inductor cache made for this run: in one process dynamo would reuse one side's compiled
code for another's options. Then the windows run one at a time, each process timing its own steps
when the parent asks. Shapes are static; compile and capture are timed apart (``first_s``).

    python3 benchmarks/peak_candidates.py --out candidates.json
    python3 benchmarks/peak_candidates.py --only graph,batch384 --modes train
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.args import OneLineParser, comma_choices  # noqa: E402
from benchmarks.candidate_steps import (  # noqa: E402
    BY_NAME,
    CANDIDATES,
    NAMES,
    REF_BATCH,
    SETUPS,
    ZBENCH_SIDES,
    Candidate,
    make_step,
    zbench_step,
)
from benchmarks.reference import runs  # noqa: E402


def parser() -> OneLineParser:
    p = OneLineParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--only", type=lambda t: comma_choices(t, NAMES, "candidate"))
    p.add_argument(
        "--modes",
        type=lambda t: comma_choices(t, ("train", "infer"), "mode"),
        default=("train", "infer"),
    )
    p.add_argument("--windows", type=int, default=5, help="timed windows per side")
    p.add_argument("--seconds", type=float, default=1.2, help="target window length")
    p.add_argument("--budget", type=float, default=420, help="seconds; later candidates skipped")
    p.add_argument("--bn", action="store_true", help="also time batch-norm + ReLU alone")
    p.add_argument("--out", type=Path)
    p.add_argument("--logs", type=Path, help="children's output (default: a temporary folder)")
    p.add_argument(
        "--zbench-home",
        type=Path,
        help="data folder of the zbench sides (their compile cache; default: a fresh one)",
    )
    p.add_argument("--serve", help=argparse.SUPPRESS)  # internal: one side in this process
    p.add_argument("--child", help=argparse.SUPPRESS)
    return p


def serve(name: str) -> int:
    """One side in this process: build and compile its step, say ``ready <seconds>``, then run a
    timed window of N steps for each ``N`` read on stdin and answer its seconds; ``q`` ends."""
    import torch
    import torch._dynamo

    from benchmarks.reference import loop

    mode = name.removeprefix("ref-")
    c = (
        Candidate(name, mode=mode, batch=REF_BATCH[mode])
        if name.startswith("ref-")
        else BY_NAME[name]
    )
    if c.name not in ZBENCH_SIDES:  # zbench's runner makes its own settings, as in `zbench run`
        loop.set_precision("bf16")
        torch._dynamo.config.automatic_dynamic_shapes = False  # static shapes, as --preset max
    import torch._inductor.config as inductor_config

    for key, value in c.inductor:  # this process runs one side: its options set globally
        setattr(inductor_config, key, value)
    for name in c.setup:
        SETUPS[name]()
    t0 = time.perf_counter()
    step = zbench_step(c) if c.name in ZBENCH_SIDES else make_step(c)
    cuda = torch.device("cuda")
    loop.timed(step, 3, 0, cuda)
    print(
        f"ready {time.perf_counter() - t0:.1f} {torch.cuda.max_memory_allocated() / 2**30:.1f}",
        flush=True,
    )
    for line in sys.stdin:
        if line.strip() == "q":
            break
        print(f"{loop.timed(step, int(line), 0, cuda):.6f}", flush=True)
    return 0


# --- main --------------------------------------------------------------------------------------


class Side:
    """A serving process (``--serve NAME``) and its answers."""

    def __init__(self, name: str, env: dict[str, str], log: Path) -> None:
        self.name, self.log = name, log.open("w")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", name]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
            cwd=REPO,
        )
        self.first_s: float | None = None
        self.peak_gib: float | None = None
        self.error: str | None = None

    def wait_ready(self, deadline: float) -> bool:
        """Until its ``ready`` line, or the deadline (then it is stopped)."""
        assert self.proc.stdout is not None
        ready: list[str] = []

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:  # skip anything a library printed first
                if line.startswith("ready"):
                    ready.append(line)
                    return
            ready.append("")  # it ended

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(max(0.0, deadline - time.perf_counter()))
        if ready and ready[0]:
            _, first, peak = ready[0].split()
            self.first_s, self.peak_gib = float(first), float(peak)
            return True
        self.error = "not ready by the budget" if not ready else f"exit {self.proc.wait()}"
        self.stop()
        return False

    def window(self, steps: int) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{steps}\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} ended (see {self.log.name})")
            try:
                return float(line)
            except ValueError:
                continue  # a library's line

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write("q\n")
                self.proc.stdin.flush()
                self.proc.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def measure(ref: Side, cand: Side, c: Candidate, a: argparse.Namespace) -> dict[str, Any]:
    """Windows alternated between the reference and the candidate (one runs at a time)."""
    rate = 7000 if c.mode == "train" else 25000
    n_ref = max(10, round(a.seconds * rate / ref_batch(c.mode)))
    n_cand = max(10, round(a.seconds * rate / c.batch))
    refs, cands = [], []
    for _ in range(a.windows):
        refs.append(ref_batch(c.mode) * n_ref / ref.window(n_ref))
        cands.append(c.batch * n_cand / cand.window(n_cand))
    r, k = statistics.median(refs), statistics.median(cands)
    return {
        "candidate": c.name,
        "mode": c.mode,
        "batch": c.batch,
        "note": c.note,
        "first_s": cand.first_s,
        "ref_first_s": ref.first_s,
        "ref": round(r, 1),
        "cand": round(k, 1),
        "ratio": round(k / r, 4),
        "ref_windows": [round(x) for x in refs],
        "cand_windows": [round(x) for x in cands],
        "peak_gib": cand.peak_gib,
    }


def _config_value(config: Any, dotted: str) -> Any:
    """An inductor option's value in this process (the default: the parent sets none), or
    ``"missing"`` where this torch has no such option."""
    value = config
    for part in dotted.split("."):
        value = getattr(value, part, "missing")
    return value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)


def ref_batch(mode: str) -> int:
    return REF_BATCH[mode]


def main(argv: list[str]) -> int:
    a = parser().parse_args(argv)
    if a.serve:
        return serve(a.serve)
    if a.child == "bn":  # internal: the batch-norm timings, printed as JSON
        from benchmarks import kernel_micro

        print(json.dumps(kernel_micro.bn_micro()))
        return 0
    cache = Path(tempfile.mkdtemp(prefix="zbench-candidates-inductor-"))
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(cache),
        "TRITON_CACHE_DIR": str(cache / "triton"),
        "PYTHONWARNINGS": "ignore",
        "PYTHONPATH": str(REPO),
    }
    env.pop("TORCH_LOGS", None)
    logs = a.logs or Path(tempfile.mkdtemp(prefix="zbench-candidates-"))
    logs.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    deadline = t_start + a.budget
    chosen = [c for c in CANDIDATES if (not a.only or c.name in a.only) and c.mode in a.modes]
    out: dict[str, Any] = {"rows": [], "budget_s": a.budget}
    # Every side compiles at once, each in its own process (so dynamo never reuses one side's code
    # for another's options); then the windows run one at a time.
    sides = {f"ref-{m}": Side(f"ref-{m}", env, logs / f"ref-{m}.log") for m in a.modes}
    # zbench's sides compile into their data folder's cache, as `zbench run` does there, and write
    # Python's bytecode there (runs.start_env): a later start in it is a user's warm one.
    zenv = runs.start_env("zbench-candidates-home-", a.zbench_home)[1]
    sides.update(
        {
            c.name: Side(c.name, zenv if c.name in ZBENCH_SIDES else env, logs / f"{c.name}.log")
            for c in chosen
        }
    )
    ready_by = deadline - 15 * len(chosen) - (45 if a.bn else 0)  # leave time for the windows
    ready = {n: s.wait_ready(ready_by) for n, s in sides.items()}
    print(
        f"compiled: {', '.join(f'{n} {s.first_s} s' for n, s in sides.items() if s.first_s)}",
        flush=True,
    )
    for c in chosen:
        ref = sides[f"ref-{c.mode}"]
        if not (ready[c.name] and ready[f"ref-{c.mode}"]):
            why = sides[c.name].error or ref.error
            row: dict[str, Any] = {"candidate": c.name, "mode": c.mode, "error": why}
        else:
            try:
                row = measure(ref, sides[c.name], c, a)
            except (RuntimeError, ValueError, OSError) as exc:  # a side that died mid-window
                row = {"candidate": c.name, "mode": c.mode, "error": str(exc)[:200]}
            sides[c.name].stop()
        out["rows"].append(row)
        print(f"  {json.dumps(row)}", flush=True)
    for s in sides.values():
        s.stop()
    if a.bn:
        bn = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", "bn"],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
        )
        lines = bn.stdout.strip().splitlines()
        out["bn"] = json.loads(lines[-1]) if bn.returncode == 0 and lines else []
    out["wall_s"] = round(time.perf_counter() - t_start, 1)
    import torch
    import torch._inductor.config as inductor_config

    keys = sorted({k for c in chosen for k, _ in c.inductor})
    out["inductor_defaults"] = {k: _config_value(inductor_config, k) for k in keys}
    out.update(
        torch=torch.__version__,
        gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else "?",
    )
    print(table(out))
    if a.out:
        a.out.write_text(json.dumps(out, indent=1))
    return 0


def table(out: dict[str, Any]) -> str:
    """The Markdown table docs/performance.md keeps."""
    lines = [
        f"{out.get('gpu')}, torch {out.get('torch')}; img/s, medians of interleaved windows",
        "| candidate | mode | batch | reference | candidate | ratio | compile s | note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in out["rows"]:
        if "cand" in r:
            lines.append(
                f"| {r['candidate']} | {r['mode']} | {r['batch']} | {r['ref']:,.0f} | "
                f"{r['cand']:,.0f} | {r['ratio']:.3f} | {r['first_s']} | {r['note']} |"
            )
        else:
            why = r.get("skipped") or r.get("error", "?")
            lines.append(f"| {r['candidate']} | {r.get('mode', '')} | | | | | | {why} |")
    for r in out.get("bn", []):
        lines.append(f"bn {r}")
    if out.get("inductor_defaults"):
        defaults = ", ".join(f"{k}={v}" for k, v in out["inductor_defaults"].items())
        lines.append(f"inductor defaults: {defaults}")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.pop("TORCH_LOGS", None)
    sys.exit(main(sys.argv[1:]))
