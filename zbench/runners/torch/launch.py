"""Several GPUs: re-launch this runner under torchrun, one process per GPU (weak scaling).

The launcher imports no framework. Rank 0 writes the events to a file of the launcher's; the launcher
forwards them to the caller's target as they come, so an inherited ``fd:N`` (which torchrun's children
do not inherit) works too, and a run whose ranks died without a word still ends with an ``error``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from zbench.contract.config import RunConfig
from zbench.contract.protocol import EventTail, EventWriter

ENV_RANK = "LOCAL_RANK"  # set by torchrun in every child
STOP_GRACE_S = 8.0  # under the supervisor's 10 s: torchrun's own worker shutdown gets its time


def is_child() -> bool:
    return ENV_RANK in os.environ and "WORLD_SIZE" in os.environ


def multi_node(cfg: RunConfig) -> bool:
    """Whether the launcher options ask torchrun for more than one node (``--nnodes K``)."""
    extra = list(cfg.extra)
    for i, arg in enumerate(extra):
        value = extra[i + 1] if arg == "--nnodes" and i + 1 < len(extra) else None
        if arg.startswith("--nnodes="):
            value = arg.split("=", 1)[1]
        if value is not None:
            return value.split(":")[-1] != "1"
    return False


def torchrun_argv(cfg: RunConfig, events: str) -> list[str]:
    """``python -m torch.distributed.run ... -m zbench.runners <argv>``; with no rendezvous options
    after ``--``, a single-node ``--standalone`` run."""
    launcher = [sys.executable, "-m", "torch.distributed.run"]
    launcher += list(cfg.extra) if cfg.extra else ["--standalone", "--nnodes", "1"]
    launcher += ["--nproc-per-node", str(cfg.gpus)]
    inner = RunConfig(**{**cfg.as_dict(), "extra": ()}).to_argv(events=events)
    return [*launcher, "-m", "zbench.runners", *inner]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off: some hosts hang with it on
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default, said explicitly
    return env


def stop_torchrun(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_S) -> int:
    """SIGTERM to torchrun and wait for it: it stops its workers (each in its own session, out of
    reach of a signal to our process group) before it exits. Killing it outright, as
    ``subprocess.call`` does on an interrupt, would orphan them. SIGKILL only after ``grace``."""
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    while True:
        try:
            return proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            grace = 5.0
        except KeyboardInterrupt:  # a second SIGTERM while waiting: keep waiting
            continue


def launch(cfg: RunConfig, writer: EventWriter) -> int:
    with tempfile.TemporaryDirectory(prefix="zbench-ddp-") as tmp:
        events = Path(tmp) / "events.jsonl"
        events.touch()
        tail = EventTail(events)
        seen: set[str] = set()
        done = threading.Event()

        def forward() -> None:
            while True:
                finished = done.is_set()
                for event in tail.poll():
                    seen.add(str(event["type"]))
                    kind = str(event.pop("type"))
                    writer.emit(kind, **event)  # type: ignore[arg-type]
                if finished:
                    return
                done.wait(0.2)

        thread = threading.Thread(target=forward, name="zbench-events", daemon=True)
        thread.start()
        proc = subprocess.Popen(torchrun_argv(cfg, str(events)), env=child_env())
        interrupted = False
        try:
            rc = proc.wait()
        except KeyboardInterrupt:  # SIGTERM (the runner turns it into this) or Ctrl-C
            interrupted = True
            rc = stop_torchrun(proc)
        done.set()
        thread.join()
    if rc != 0 and "error" not in seen:
        message = f"torchrun exited with status {rc}; see the log for each rank"
        if interrupted or rc in (130, -2):
            writer.error("interrupted", message)
        else:
            writer.error("crash", message)
    if rc == 0 and "result" not in seen and not multi_node(cfg):  # rank 0 may be on another node
        writer.error("crash", "torchrun finished but rank 0 reported no result")
        return 1
    return 0 if rc == 0 else (rc if rc == 2 else 1)
