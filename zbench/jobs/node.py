"""One node of a multi-node job: ``python -m zbench.jobs.node --rank I [options] -- <runner argv>``.

The launching machine starts this on every node (over ssh, srun, or as a local process) with its
stdin and stdout piped. It runs the node's launcher (``python -m zbench.runners ...``, torchrun or a
TensorFlow worker) in a session of its own, and writes one stream on stdout:

- ``@zbench node {...}``: once, first: this node's host name, pid and the launcher's process group;
- ``@zbench event {...}``: each runner-protocol event the launcher wrote (its events file is local);
- ``@zbench sample {...}``: this node's telemetry for the job's GPUs and process tree;
- ``@zbench exit {"rc": N}``: last, the launcher's exit status;
- any other line: the launcher's own output (the job's log).

Stopping: SIGTERM, SIGHUP, or end of stdin (the ssh session or the launching process is gone) stop
the launcher's whole process group, SIGKILL after a grace period. Watching stdin is what makes a killed
``ssh`` client stop the remote processes: without a terminal, sshd sends no hangup, but it closes the
session's stdin.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from zbench.contract.protocol import EventTail
from zbench.jobs.liveness import child_env, signal_tree
from zbench.jobs.runjob import runner_command
from zbench.telemetry.snapshot import Snapshot

PREFIX = "@zbench "
STOP_GRACE_S = 8.0


class Out:
    """stdout shared by the threads: one whole line per write."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def line(self, text: str) -> None:
        with self.lock:
            try:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
            except (BrokenPipeError, ValueError):
                pass  # the reader is gone; stdin's end stops us

    def record(self, kind: str, data: dict[str, Any]) -> None:
        self.line(PREFIX + kind + " " + json.dumps(data, allow_nan=False, default=str))


class Agent:
    """One node's agent: runs the runner, forwards output and events, samples, stops on request."""

    def __init__(self, args: argparse.Namespace, runner: list[str]) -> None:
        self.args = args
        self.runner = runner
        self.out = Out()
        self.proc: subprocess.Popen[bytes] | None = None
        self.stop_at: float | None = None
        self.finished = threading.Event()

    def start(self, events: Path) -> subprocess.Popen[bytes]:
        env = child_env()
        env.setdefault("PYTHONUNBUFFERED", "1")
        if self.args.gpu_ids is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.args.gpu_ids
        if self.args.tf_config:
            env["TF_CONFIG"] = self.args.tf_config
        cut = self.runner.index("--") if "--" in self.runner else len(self.runner)
        head, tail = self.runner[:cut], self.runner[cut:]  # launcher options stay after --events
        cmd = [*runner_command(), *head, "--events", str(events), *tail]
        print(f"$ {' '.join(cmd)}", flush=True)
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # one process group to stop, whatever the launcher starts
            env=env,
        )

    def stop(self, *_: object) -> None:
        """SIGTERM to the launcher's group now; :meth:`run` sends SIGKILL after the grace."""
        if self.stop_at is None and self.proc is not None and self.proc.poll() is None:
            self.stop_at = time.monotonic() + self.args.grace
            signal_tree(self.proc.pid, signal.SIGTERM)

    # --- threads ------------------------------------------------------------------------------

    def pump_output(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            text = raw.decode("utf-8", "replace").rstrip("\n")
            if text.startswith(PREFIX):
                text = " " + text  # a launcher's line never passes for one of ours
            self.out.line(text)

    def pump_events(self, tail: EventTail) -> None:
        while True:
            last = self.finished.is_set()
            for event in tail.poll():
                self.out.record("event", event)
            if last:
                return
            self.finished.wait(0.1)

    def watch_stdin(self) -> None:
        # os.read, not sys.stdin: a daemon thread blocked in a buffered read aborts the
        # interpreter's shutdown.
        with contextlib.suppress(OSError):
            while os.read(0, 4096):
                pass
        self.stop()

    def sample(self, pid: int) -> None:
        from zbench.jobs.sampling import open_sampler
        from zbench.results.aggregate import compact_sample

        gpu_ids = _gpu_list(self.args.gpu_ids)
        sampler = open_sampler(self.args.interval)

        def on_snapshot(snap: Snapshot) -> None:
            if self.finished.is_set():
                return
            ids = gpu_ids if gpu_ids is not None else [g.index for g in snap.gpus]
            self.out.record("sample", compact_sample(snap, ids, pid, None))

        sampler.subscribe(on_snapshot)
        sampler.watch_tree(pid)
        sampler.start()
        self.finished.wait()
        sampler.stop()
        sampler.close()

    # --- the node's life ------------------------------------------------------------------------

    def run(self) -> int:
        with tempfile.TemporaryDirectory(prefix="zbench-node-") as tmp:
            events = Path(tmp) / "events.jsonl"
            events.touch()
            proc = self.proc = self.start(events)
            self.out.record(
                "node",
                {
                    "rank": self.args.rank,
                    "host": socket.gethostname(),
                    "pid": os.getpid(),
                    "pgid": proc.pid,
                    "gpu_ids": _gpu_list(self.args.gpu_ids),
                },
            )
            threads = [
                threading.Thread(target=self.pump_output, args=(proc,), daemon=True),
                threading.Thread(target=self.pump_events, args=(EventTail(events),), daemon=True),
            ]
            if self.args.interval > 0:
                threads.append(threading.Thread(target=self.sample, args=(proc.pid,), daemon=True))
            if self.args.watch_stdin:
                threading.Thread(target=self.watch_stdin, daemon=True).start()
            for t in threads:
                t.start()
            while (rc := proc.poll()) is None:
                if self.stop_at is not None and time.monotonic() >= self.stop_at:
                    signal_tree(proc.pid, signal.SIGKILL)
                    self.stop_at = None
                time.sleep(0.1)
            signal_tree(proc.pid, signal.SIGKILL)  # whatever the launcher left behind
            self.finished.set()
            for t in threads:
                t.join(timeout=5.0)
        self.out.record("exit", {"rc": rc})
        return 0 if rc == 0 else (rc if 0 < rc < 128 else 1)


def _gpu_list(text: str | None) -> list[int] | None:
    if text is None:
        return None
    return [int(p) for p in text.split(",") if p.strip().isdigit()]


def _fill(text: str, rank: int) -> str:
    """Placeholders of an srun command line, which is the same for every task."""
    return text.replace("{rank}", str(rank)).replace("{is_host}", "1" if rank == 0 else "0")


def build_parser() -> argparse.ArgumentParser:
    """The node agent's options: rank, GPUs, TF_CONFIG, sampling interval, grace, stdin watch."""
    p = argparse.ArgumentParser(prog="python -m zbench.jobs.node")
    p.add_argument("--rank", type=int, required=True, help="this node's index in the job")
    p.add_argument("--gpu-ids", default=None, help="CUDA_VISIBLE_DEVICES for this node")
    p.add_argument("--tf-config", default=None, help="TF_CONFIG for a TensorFlow worker")
    p.add_argument("--interval", type=float, default=0.5, help="telemetry period (0: none)")
    p.add_argument("--grace", type=float, default=STOP_GRACE_S)
    p.add_argument(
        "--watch-stdin",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="stop when stdin ends (off under srun, which gives stdin to one task only)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one node's share of a multi-node job; the runner's argv follows ``--`` (2 if absent)."""
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args = build_parser().parse_args(argv[:cut])
    runner = argv[cut + 1 :]
    if not runner:
        print("zbench.jobs.node: no runner options after --", file=sys.stderr)
        return 2
    if args.rank == -1:  # under srun: the task's node index
        args.rank = int(os.environ.get("SLURM_NODEID", "0"))
        runner = [_fill(a, args.rank) for a in runner]
        if args.tf_config:
            args.tf_config = _fill(args.tf_config, args.rank)
    agent = Agent(args, runner)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        agent.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return agent.run()


if __name__ == "__main__":
    sys.exit(main())
