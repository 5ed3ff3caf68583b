"""Several GPUs: re-launch this runner once per GPU (weak scaling).

On one node the launcher starts the ranks itself and they meet through a file store in a private
temporary folder, with NCCL's and Gloo's bootstrap sockets on the loopback interface: nothing of a
single-node run listens on the network. torchrun cannot do that: its rendezvous store (a TCPStore)
listens on every interface and has no option to bind one, so it is used only when the user passes
rendezvous options after ``--`` (several nodes, which must be reachable anyway). Several "nodes"
that are all this machine (``--nodes localhost,localhost``) pass ``--rdzv-backend file
--rdzv-endpoint PATH`` instead, which torchrun does not have: each node's launcher then starts its
ranks itself, with their global ranks, and all meet through that one file store.

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
import time
from pathlib import Path

from zbench.contract.config import RunConfig
from zbench.contract.protocol import ENV_JOB_TMP, EventTail, EventWriter

ENV_RANK = "LOCAL_RANK"  # set in every child, by torchrun or by the local launcher
ENV_INIT = "ZBENCH_DIST_INIT"  # the local launcher's rendezvous (a file:// store) for the ranks
STOP_GRACE_S = 8.0  # under the supervisor's 10 s: torchrun's own worker shutdown gets its time
LOOPBACK = "lo"  # single node: NCCL's and Gloo's bootstrap sockets on loopback only


def is_child() -> bool:
    """Whether this process is one rank of a launch (its rank and world size are set)."""
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


def _option(extra: list[str], name: str) -> str | None:
    """The value of a launcher option (``--name V`` or ``--name=V``) in ``extra``, else None."""
    for i, arg in enumerate(extra):
        if arg == name and i + 1 < len(extra):
            return extra[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def file_rendezvous(cfg: RunConfig) -> tuple[int, int, Path] | None:
    """(nodes, this node's rank, the file store) when the launcher options ask for a rendezvous
    through a file (every node on this machine: nothing listens), else None."""
    extra = list(cfg.extra)
    if _option(extra, "--rdzv-backend") != "file":
        return None
    nodes, rank, path = (_option(extra, k) for k in ("--nnodes", "--node-rank", "--rdzv-endpoint"))
    if not (nodes and nodes.isdigit() and rank and rank.isdigit() and path):
        raise ValueError("--rdzv-backend file needs --nnodes K --node-rank I --rdzv-endpoint PATH")
    return int(nodes), int(rank), Path(path)


def runner_argv(cfg: RunConfig, events: str) -> list[str]:
    """What each rank runs: ``-m zbench.runners <argv>`` without the launcher options."""
    inner = RunConfig(**{**cfg.as_dict(), "extra": ()}).to_argv(events=events)
    return ["-m", "zbench.runners", *inner]


def torchrun_argv(cfg: RunConfig, events: str) -> list[str]:
    """``python -m torch.distributed.run <the user's rendezvous options> -m zbench.runners ...``."""
    launcher = [sys.executable, "-m", "torch.distributed.run", *cfg.extra]
    launcher += ["--nproc-per-node", str(cfg.gpus)]
    return [*launcher, *runner_argv(cfg, events)]


def child_env() -> dict[str, str]:
    """The ranks' environment: ours, with NVLink multicast off and one OpenMP thread by default."""
    env = dict(os.environ)
    env.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off: some hosts hang with it on
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's default, said explicitly
    return env


def rank_env(
    rank: int, world: int, store: Path, *, node: int = 0, per_node: int | None = None
) -> dict[str, str]:
    """The environment of one rank started here: torchrun's variables, the file store, loopback
    sockets. ``node`` and ``per_node`` (ranks on each node, default ``world``) place global rank
    ``rank`` on one of several nodes of this machine."""
    env = child_env()
    per_node = world if per_node is None else per_node
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank - node * per_node),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(per_node),
        GROUP_RANK=str(node),
        MASTER_ADDR="127.0.0.1",  # read by nothing here; a library that looks finds loopback
    )
    env[ENV_INIT] = store.resolve().as_uri()
    env.setdefault("NCCL_SOCKET_IFNAME", LOOPBACK)
    env.setdefault("GLOO_SOCKET_IFNAME", LOOPBACK)
    return env


class LocalRanks:
    """The ranks of a single-node run, started by us in our process group (a signal to the group
    reaches them all); the first rank to fail stops the others, as torchrun does."""

    def __init__(
        self, cfg: RunConfig, events: str, store: Path, *, node: int = 0, nodes: int = 1
    ) -> None:
        argv = [sys.executable, *runner_argv(cfg, events)]
        world, first = nodes * cfg.gpus, node * cfg.gpus
        self.procs = [
            subprocess.Popen(argv, env=rank_env(r, world, store, node=node, per_node=cfg.gpus))
            for r in range(first, first + cfg.gpus)
        ]

    def wait(self) -> int:
        """The first non-zero exit status of a rank (the others stopped), else 0."""
        while True:
            codes = [p.poll() for p in self.procs]
            failed = [c for c in codes if c not in (None, 0)]
            if failed:
                self.stop()
                return failed[0]
            if all(c == 0 for c in codes):
                return 0
            time.sleep(0.1)

    def stop(self, grace: float = STOP_GRACE_S) -> int:
        """Stop the ranks still running (`terminate`); the first non-zero exit status, else 0."""
        return next((c for c in terminate(self.procs, grace) if c), 0)


def terminate(procs: list[subprocess.Popen[bytes]], grace: float = STOP_GRACE_S) -> list[int]:
    """SIGTERM to each process still running, SIGKILL to any left after ``grace``; their exit
    statuses. A second SIGTERM (or Ctrl-C) while waiting does not cut the wait short."""
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        while True:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
                break
            except subprocess.TimeoutExpired:
                p.kill()
                deadline = time.monotonic() + 5.0
            except KeyboardInterrupt:
                continue
    return [int(p.returncode) for p in procs]


def stop_torchrun(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_S) -> int:
    """SIGTERM to torchrun and wait for it: it stops its workers (each in its own session, out of
    reach of a signal to our process group) before it exits. Killing it outright, as
    ``subprocess.call`` does on an interrupt, would orphan them. SIGKILL only after ``grace``."""
    return terminate([proc], grace)[0]


def launch(cfg: RunConfig, writer: EventWriter) -> int:
    """Run the benchmark as one rank per GPU, forwarding their events; an error event on failure."""
    # In the job's own scratch folder when the supervisor gives one: it removes that folder
    # however the launcher ended, so a `kill -9` leaves nothing in the system's temporary folder.
    scratch = os.environ.get(ENV_JOB_TMP) or None
    with tempfile.TemporaryDirectory(
        prefix="zbench-ddp-", dir=scratch if scratch and os.path.isdir(scratch) else None
    ) as tmp:
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
        interrupted = False
        local_nodes = file_rendezvous(cfg)  # several nodes, all on this machine: nothing listens
        if cfg.extra and local_nodes is None:
            launcher = "torchrun"
            proc = subprocess.Popen(torchrun_argv(cfg, str(events)), env=child_env())
            try:
                rc = proc.wait()
            except KeyboardInterrupt:  # SIGTERM (the runner turns it into this) or Ctrl-C
                interrupted = True
                rc = stop_torchrun(proc)
        else:
            launcher = "a rank"
            if local_nodes is None:
                ranks = LocalRanks(cfg, str(events), Path(tmp) / "store")
            else:
                nodes, node, store = local_nodes
                store.parent.mkdir(parents=True, exist_ok=True)
                ranks = LocalRanks(cfg, str(events), store, node=node, nodes=nodes)
            try:
                rc = ranks.wait()
            except KeyboardInterrupt:
                interrupted = True
                rc = ranks.stop()
        done.set()
        thread.join()
    if rc != 0 and "error" not in seen:
        message = f"{launcher} exited with status {rc}; see the log for each rank"
        if interrupted or rc in (130, -2):
            writer.error("interrupted", message)
        else:
            writer.error("crash", message)
    if rc == 0 and "result" not in seen and not multi_node(cfg):  # rank 0 may be on another node
        writer.error("crash", "the ranks finished but rank 0 reported no result")
        return 1
    return 0 if rc == 0 else (rc if rc == 2 else 1)
