"""A runner that speaks the runner protocol without a framework, for supervisor tests.

Takes the real runner options (parsed by ``zbench.contract.config.parse_args``); what it does comes
after ``--``: ``behave=ok|crash|hang|oom|slow|noresult|selfkill|resulthang|sessionchild|
ignoreterm|hostoom|badinput|scratchkill`` (``resulthang``: reports its result, then hangs; ``sessionchild``: starts a
child in its own session, as torchrun starts its workers, then hangs; ``ignoreterm``: ignores
SIGTERM and hangs; ``hostoom``: fails as PyTorch does when the host is out of memory;
``badinput``: refuses its dataset as the harness does, a ``config`` error and exit status 2;
``scratchkill``: makes a launcher's scratch folder as a ``--gpus N`` run does, then SIGKILLs
itself),
``step_s=SECONDS``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

from zbench.contract.config import parse_args
from zbench.contract.protocol import ENV_JOB_TMP, EventWriter


def main(argv: list[str]) -> int:
    config, events = parse_args(argv)
    opts = dict(a.split("=", 1) for a in config.extra if "=" in a)
    behave = opts.get("behave", os.environ.get("FAKE_RUNNER_BEHAVE", "ok"))
    step_s = float(opts.get("step_s", "0.02" if behave != "slow" else "0.3"))
    steps = config.steps or 10
    warmup = config.warmup if config.warmup is not None else 3
    batch = config.batch_size or 8
    assert events is not None
    w = EventWriter(events)
    print(f"fake runner {config.workload} behave={behave} pid={os.getpid()}", flush=True)
    print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
    w.emit(
        "start",
        config={**config.as_dict(), "batch_size": batch, "precision": config.precision or "fp32"},
        env={"framework": "fake 1.0"},
    )
    w.phase("setup")
    if behave == "crash":
        print("Traceback: something broke", flush=True)
        return 3
    if behave == "hostoom":
        message = "DefaultCPUAllocator: can't allocate memory: you tried to allocate 9 GB"
        w.error("crash", f"RuntimeError: {message}")
        print(f"RuntimeError: {message}", flush=True)
        return 1
    if behave == "ignoreterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ignoring SIGTERM", flush=True)
        while True:
            time.sleep(1)
    if behave == "oom":
        w.error("oom", "CUDA out of memory. Tried to allocate 2.00 GiB")
        print("torch.OutOfMemoryError: CUDA out of memory", flush=True)
        return 1
    if behave == "sessionchild":
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
        )
        print(f"session child pid={child.pid}", flush=True)
        while True:
            time.sleep(1)
    if behave == "badinput":
        w.error("config", "--data /data/flowers: not a Flowers-102 folder (no jpg/ inside)")
        print("zbench: --data /data/flowers: not a Flowers-102 folder", file=sys.stderr)
        return 2
    if behave == "scratchkill":
        scratch = tempfile.mkdtemp(prefix="zbench-ddp-", dir=os.environ.get(ENV_JOB_TMP))
        print(f"scratch={scratch}", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    if behave == "selfkill":
        os.kill(os.getpid(), signal.SIGKILL)
    w.phase("warmup")
    for _ in range(warmup):
        time.sleep(step_s)
    w.phase("measure")
    t0 = time.time()
    for step in range(1, steps + 1):
        if behave == "hang":
            print("hanging", flush=True)
            while True:
                time.sleep(1)
        time.sleep(step_s)
        w.progress(step, steps, samples_per_s=step * batch / (time.time() - t0))
    window = time.time() - t0
    w.phase("done")
    if behave != "noresult":
        w.emit(
            "result",
            samples_per_s=steps * batch / window,
            steps=steps,
            window_s=window,
            batch_size=batch,
            precision=config.precision or "fp32",
            step_time_median_ms=1000 * window / steps,
        )
    if behave == "resulthang":
        print("result written; hanging", flush=True)
        while True:
            time.sleep(1)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
