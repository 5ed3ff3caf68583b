"""``zbench probe``: submits a ``probe`` job to the one supervisor, follows it to its end and
prints the figures it stored (``jobs/probe_record.py`` builds them). Ctrl-C leaves the job running,
as for any job."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from typing import Any

from zbench.contract.probe import ProbeConfig

POLL_S = 0.25


def run_probe(gpus: str | None = None, quick: bool = False, json_out: bool = False,
              p2p_seconds: float | None = None) -> int:  # fmt: skip
    """Submit a probe job (``--gpus``: those GPUs, else every GPU the supervisor offers), follow
    it to its end and print the stored figures. Exit 0 done, 1 the probe failed, 2 bad input."""
    from zbench.telemetry.backends import parse_gpus

    if p2p_seconds is None:
        p2p_seconds = float(os.environ.get("ZBENCH_PROBE_P2P_SECONDS", "3"))
    if importlib.util.find_spec("torch") is None:
        print("zbench probe needs PyTorch: pip install 'zbench[torch]'", file=sys.stderr)
        return 1
    try:
        gpu_list = parse_gpus(gpus)
    except ValueError as exc:
        print(f"zbench probe: {exc}", file=sys.stderr)
        return 2
    from zbench.jobs import api
    from zbench.jobs.gpus import visible_gpus

    offered = visible_gpus()
    missing = [g for g in gpu_list or () if g not in offered]
    if missing:
        print(f"zbench probe: --gpus: GPU {missing[0]} is not one of {offered}", file=sys.stderr)
        return 2
    config = ProbeConfig(gpus=len(gpu_list or ()), quick=quick, p2p_seconds=p2p_seconds)
    spec = api.JobSpec(config=config, gpu_ids=tuple(gpu_list) if gpu_list else None)
    [job_id] = api.submit([spec])
    info = _follow(job_id, quiet=json_out)
    if info is None:
        print(f"zbench probe: detached; job {job_id} keeps running (`zbench jobs`, "
              f"`zbench cancel {job_id}`)", file=sys.stderr)  # fmt: skip
        return 1
    if info.state != "done" or info.run_id is None:
        tail = api.log_tail(job_id, lines=5)
        reason = info.reason or (tail[-1] if tail else info.state)
        print(f"zbench probe: {reason.split(': ', 1)[-1]}", file=sys.stderr)
        return 1
    from zbench import paths
    from zbench.store import Store

    run = Store(paths.db_path(None)).get_run(info.run_id) or {}
    result = run.get("result") or {}
    if json_out:
        out = {"job_id": job_id, "run_id": info.run_id, "rows": result.get("rows", []),
               "raw": result.get("tests", [])}  # fmt: skip
        print(json.dumps(out, indent=2))
    else:
        from zbench.jobs.probe_view import print_rows

        print_rows(result.get("rows", []))
    return 0


def _follow(job_id: int, *, quiet: bool) -> Any:
    """The job's ``JobInfo`` once it has finished, with a progress bar meanwhile; None after
    Ctrl-C (the job belongs to the supervisor and keeps running)."""
    from rich.progress import Progress

    from zbench.jobs import api

    try:
        with Progress(disable=quiet, transient=True) as progress:
            task = progress.add_task(f"probe (job {job_id})", total=None)
            while True:
                info = api.get_job(job_id)
                progress.update(task, completed=info.step or 0, total=info.total,
                                description=f"probe (job {job_id}): {info.phase or info.state}")  # fmt: skip
                if info.finished:
                    return info
                time.sleep(POLL_S)
    except KeyboardInterrupt:
        return None
