"""Snake demo figures on one GPU: env-only board-steps/s, then a real ``zbench demo snake`` run.

    PYTHONPATH=. python benchmarks/snake.py --minutes 5 --out snake.json

1. The environment alone (random legal actions, observation built each step) at 1024, 8192 and
   32768 boards: board-steps/s (goal >= 1,000,000).
2. PPO training as the job runs it, ``python -m zbench.demos snake`` in a subprocess, so "time to beat
   the review's 8" counts from that process's launch, start-up included (goal <= 60 s). Its events
   give the learning curve (wall time, env steps, mean and best score), printed every 30 s, and the
   mean score at the end (goal >= 60 on 12x12 within 15 minutes), and when each phase began and
   the first frame came, from the launch (a live view waits that long for its first board).

Needs torch, numpy and rich only (no textual). Writes everything as JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def env_throughput(sizes: list[int], board: int, device: str) -> list[dict[str, float]]:
    import torch

    from zbench.demos.snake.train import measure_env

    rows = []
    for b in sizes:
        dev = torch.device(device)
        measure_env(board, b, dev, steps=10)  # warm the allocator and kernels
        rate = max(measure_env(board, b, dev, steps=100) for _ in range(3))
        rows.append({"envs": b, "board": board, "board_steps_per_s": rate})
    return rows


def train_run(args: argparse.Namespace, folder: Path) -> dict:
    events = folder / "events.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "zbench.demos",
        "snake",
        "--minutes",
        str(args.minutes),
        "--board",
        str(args.board),
        "--device",
        args.device,
        "--algo",
        args.algo,
        "--checkpoint",
        str(folder / "snake.pt"),
        "--events",
        str(events),
    ]
    if args.envs:
        cmd += ["--envs", str(args.envs)]
    if args.compile:
        cmd.append("--compile")
    env = dict(os.environ, PYTHONPATH=str(args.code), ZBENCH_HOME=str(folder))
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, cwd=args.code)
    found = {"rc": proc.returncode, "wall_s": time.time() - t0, "curve": [], "result": None}
    found["since_launch_s"] = since = {}  # each phase's start and the first frame, from the launch
    for line in events.read_text().splitlines() if events.exists() else []:
        ev = json.loads(line)
        key = f"phase {ev.get('phase')}" if ev["type"] == "phase" else ev["type"]
        if key in ("frame", "progress") or key.startswith("phase"):
            since.setdefault(key, round(ev["t"] - t0, 2))
        if ev["type"] == "progress":
            found["curve"].append(
                {
                    k: ev.get(k)
                    for k in (
                        "t_s",
                        "env_steps",
                        "mean_score",
                        "best_score",
                        "games",
                        "samples_per_s",
                    )
                }
            )
        elif ev["type"] in ("result", "error"):
            found[ev["type"]] = {k: v for k, v in ev.items() if k != "curve"}
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=5.0, help="training budget")
    p.add_argument("--board", type=int, default=12)
    p.add_argument("--envs", type=int, default=None, help="boards while training (default 8192)")
    p.add_argument("--algo", choices=("ppo", "dqn"), default="ppo")
    p.add_argument("--device", default="cuda")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--skip-env", action="store_true", help="only the training run")
    p.add_argument("--out", type=Path, default=Path("snake.json"))
    p.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        help="the zbench tree the training run imports (default: this one; another commit's, "
        "from git worktree or git archive, to compare the two on one machine)",
    )
    args = p.parse_args()
    con = Console()
    out: dict = {"args": {k: str(v) for k, v in vars(args).items()}}
    if not args.skip_env:
        rows = env_throughput([1024, 8192, 32768], args.board, args.device)
        out["env"] = rows
        t = Table(title="Env alone: board-steps/s (goal >= 1,000,000)")
        t.add_column("boards", justify="right")
        t.add_column("board-steps/s", justify="right")
        for r in rows:
            t.add_row(f"{r['envs']:,}", f"{r['board_steps_per_s']:,.0f}")
        con.print(t)
        args.out.write_text(json.dumps(out, indent=1))
    with tempfile.TemporaryDirectory() as tmp:
        run = train_run(args, Path(tmp))
    out["train"] = run
    args.out.write_text(json.dumps(out, indent=1))
    t = Table(title=f"{args.algo.upper()} on {args.board}x{args.board}: the curve every 30 s")
    for col in ("wall s", "env steps", "mean score", "best", "games", "steps/s"):
        t.add_column(col, justify="right")
    mark = 0.0
    for pt in run["curve"]:
        if pt["t_s"] is not None and pt["t_s"] >= mark:
            t.add_row(
                f"{pt['t_s']:.0f}",
                f"{pt['env_steps']:,}",
                f"{pt['mean_score']:.2f}",
                str(pt["best_score"]),
                f"{pt['games']:,}",
                f"{pt['samples_per_s']:,.0f}",
            )
            mark = pt["t_s"] + 30.0
    con.print(t)
    res = run.get("result") or {}
    if not res:
        con.print(f"[red]training failed (rc {run['rc']}): {run.get('error')}[/]")
        return 1
    since = run["since_launch_s"]
    con.print("from launch, s: " + "  ".join(f"{k} {v:.2f}" for k, v in since.items()))
    con.print(
        f"time to beat 8 (from launch): {res.get('time_to_beat_review_s')} s | final mean "
        f"{res['final_mean_score']} | best {res['best_score']} | {res['samples_per_s']:,.0f} "
        f"board-steps/s training | wins {res['wins']} of {res['games']:,} games | JSON: {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
