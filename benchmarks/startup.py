"""CLI start-up: how long `zbench --help`, `zbench jobs`, `zbench results` and `zbench monitor --once` take
of their own.

    python benchmarks/startup.py [--repeat 9] [--json] [COMMAND ...]

Each command runs ``--repeat`` times as a fresh ``python -m zbench ...`` subprocess against a
private, empty data directory (one untimed run first creates the database and compiles bytecode,
as after a ``pip install``). Its own time is the median wall time minus the median of a bare
``python -c pass`` (the interpreter's and site's start-up, which zbench cannot change); the same
for CPU time (user + system), which a busy machine inflates less. Medians, because the machine may
be shared: the load average is printed beside the figures. The goal is
<= 0.3 s of own time for each command on an idle machine. ``monitor --once`` samples twice, 0.5 s
apart (so its rates are real); that wait is subtracted too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_S = 0.3
COMMANDS = {
    "help": (["--help"], 0.0),
    "jobs": (["jobs"], 0.0),
    "results": (["results"], 0.0),
    "monitor --once": (["monitor", "--once"], 0.5),  # the deliberate wait between its two samples
}


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _wall(argv: list[str], env: dict[str, str]) -> float:
    return _run(argv, env)[0]


def measure(names: list[str], repeat: int) -> dict[str, object]:
    """Median wall and own time of each command, with the baseline and the load average."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "ZBENCH_HOME": home, "COLUMNS": "100"}
        env.pop("ZBENCH_DB", None)
        env.pop(
            "PYTHONDONTWRITEBYTECODE", None
        )  # the warm run writes bytecode, as pip install does
        py = [sys.executable]
        for name in names:  # warm: database created, bytecode compiled
            _wall([*py, "-m", "zbench", *COMMANDS[name][0]], env)
        bare = [_run([*py, "-c", "pass"], env) for _ in range(repeat)]
        base = statistics.median(w for w, _ in bare)
        base_cpu = statistics.median(c for _, c in bare)
        rows = []
        for name in names:
            argv, wait = COMMANDS[name]
            runs = [_run([*py, "-m", "zbench", *argv], env) for _ in range(repeat)]
            times = [w for w, _ in runs]
            own = statistics.median(times) - base - wait
            rows.append(
                {
                    "command": f"zbench {name}",
                    "median_s": round(statistics.median(times), 3),
                    "min_s": round(min(times), 3),
                    "own_s": round(own, 3),
                    # CPU time is what a busy machine inflates least (the wall time waits for a core)
                    "own_cpu_s": round(statistics.median(c for _, c in runs) - base_cpu, 3),
                    "ok": own <= GOAL_S,
                }
            )
    return {
        "baseline_s": round(base, 3),
        "repeat": repeat,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "goal_s": GOAL_S,
        "rows": rows,
    }


def main() -> int:
    """Measure and print a table (or JSON); exit 1 when a command misses the goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "commands", nargs="*", help=f"Some of: {', '.join(COMMANDS)} (default all)."
    )
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args()
    unknown = [c for c in args.commands if c not in COMMANDS]
    if unknown:
        parser.error(f"unknown command {unknown[0]!r}; choose from {', '.join(COMMANDS)}")
    out = measure(args.commands or list(COMMANDS), max(1, args.repeat))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(
            f"baseline `python -c pass` {out['baseline_s']:.3f} s, median of {out['repeat']}; "
            f"load average {out['load_avg']} on {out['cpus']} CPUs"
        )
        head = f"{'command':<24}{'median s':>10}{'min s':>9}{'own s':>9}{'own CPU s':>11}"
        print(f"{head}  goal: own <= {GOAL_S} s")
        for row in out["rows"]:  # type: ignore[attr-defined]
            mark = "ok" if row["ok"] else "SLOW"
            print(
                f"{row['command']:<24}{row['median_s']:>10.3f}{row['min_s']:>9.3f}"
                f"{row['own_s']:>9.3f}{row['own_cpu_s']:>11.3f}  {mark}"
            )
    return 0 if all(r["ok"] for r in out["rows"]) else 1  # type: ignore[attr-defined]


if __name__ == "__main__":
    raise SystemExit(main())
