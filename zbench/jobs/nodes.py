"""Multi-node jobs: ``--nodes HOST[:GPUS],...`` (or ``slurm``) and the command line of every node.

A multi-node job is one job on the launching machine. Its config is the runner's ``RunConfig`` plus
the nodes; the supervisor runs ``python -m zbench.jobs.nodes_run`` for it (see
``runjob.command_for``), which starts one ``zbench.jobs.node`` agent per node and merges their
streams. The launchers are the frameworks' own multi-node modes, never a scheduler of ours:

- PyTorch: ``torchrun --nnodes K --node-rank i --rdzv-backend c10d --rdzv-endpoint FIRST:PORT``,
  the first node hosting the rendezvous store (``is_host``), ``--gpus`` processes on each node.
- TensorFlow: one worker per node with ``TF_CONFIG`` (``MultiWorkerMirroredStrategy``); worker i
  listens on PORT+i of its node.

Nodes named ``localhost``/``127.0.0.1`` run as local processes (the same agent and stream, no ssh);
any other name is reached with ``ssh`` (``jobs.remote``). ``--nodes slurm`` inside an allocation
starts every node's agent with one ``srun``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from zbench.contract.config import RunConfig
from zbench.contract.options import UsageError
from zbench.gpuids import GpuRequestError, parse_gpu_ids
from zbench.hostnames import HostError, split_host
from zbench.jobs import remote
from zbench.textfit import counted

ENV_RDZV_PORT = "ZBENCH_RDZV_PORT"
DEFAULT_RDZV_PORT = 29400  # torchrun's own c10d default; TensorFlow workers use PORT+i
SLURM = "slurm"


@dataclass(frozen=True)
class Node:
    """One machine of a multi-node job: its rank, its ssh host and the GPUs it may use."""

    rank: int
    host: str
    gpu_ids: tuple[int, ...] | None = None  # None: what the node's CUDA shows first

    def label(self) -> str:
        return f"node {self.rank} ({self.host})"


@dataclass(frozen=True)
class NodesConfig:
    """What a multi-node job runs: the runner options (``--gpus`` is per node) and its nodes. Shaped
    like ``RunConfig`` where ``jobs.api.submit`` reads it."""

    run: RunConfig
    nodes: tuple[Node, ...]
    launcher: str = "ssh"  # "ssh" (local processes for this machine's names) or "srun"

    kind = "nodes"  # its row of contract.kinds

    @property
    def workload(self) -> str:
        return self.run.workload

    @property
    def framework(self) -> str:
        return self.run.framework

    @property
    def mode(self) -> str:
        return self.run.mode

    @property
    def precision(self) -> str | None:
        return self.run.precision

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.run.as_dict(),
            "nodes": [{"host": n.host, "gpu_ids": n.gpu_ids} for n in self.nodes],
            "launcher": self.launcher,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NodesConfig:
        nodes = tuple(
            Node(i, str(n["host"]), tuple(n["gpu_ids"]) if n.get("gpu_ids") is not None else None)
            for i, n in enumerate(data["nodes"])
        )
        return cls(RunConfig.from_dict(data), nodes, str(data.get("launcher") or "ssh"))

    def check(self) -> str | None:
        """None: each node's runner checks its options there (paths are the nodes', not ours)."""
        return None

    def to_argv(self, events: str | None = None) -> list[str]:
        """The node manager's argv (``python -m zbench.jobs.nodes_run``): the whole config."""
        head = ["--events", events] if events is not None else []
        return [*head, "--config", json.dumps(self.as_dict())]

    def local_gpu_ids(self) -> tuple[int, ...]:
        """GPUs of this machine the job's local nodes use (the supervisor reserves them)."""
        if self.run.device != "cuda" or self.launcher == "srun":
            return ()
        ids: list[int] = []
        for n in self.nodes:
            if remote.is_local(n.host):
                ids += n.gpu_ids if n.gpu_ids is not None else range(self.run.gpus)
        return tuple(sorted(set(ids)))


def _gpu_ids(text: str, host: str) -> tuple[int, ...]:
    """``HOST:0+1``'s GPUs, checked and worded as every ``--gpu-ids`` is (zbench.gpuids)."""
    try:
        return parse_gpu_ids(text, option=f"--nodes {host}", sep="+") or ()
    except GpuRequestError as exc:
        raise UsageError(str(exc)) from None


def _node_part(part: str, text: str) -> tuple[str, str]:
    """One ``--nodes`` entry: ``HOST``, ``HOST:GPUS`` or ``HOST:PORT:GPUS`` (an ssh port; GPUS may
    be empty, ``HOST:PORT:``, for the first ``--gpus`` GPUs) as (``HOST`` or ``HOST:PORT``, GPUS).
    The host gets the one host check (``hostnames.split_host``)."""
    fields = part.split(":")
    host = ":".join(fields[:2]) if len(fields) == 3 else fields[0]
    try:
        if len(fields) > 3:
            raise HostError(f"{part!r} has more than HOST:PORT:GPUS")
        split_host(host)
    except HostError as exc:
        raise UsageError(
            f"--nodes wants HOST[:GPUS] or HOST:PORT:[GPUS],..., got {text!r}: {exc}"
        ) from None
    return host, fields[-1] if len(fields) > 1 else ""


def parse_nodes(text: str, run: RunConfig, environ: dict[str, str] | None = None) -> NodesConfig:
    """``--nodes`` as given: ``slurm``, or hosts joined by commas, each with optional GPU ids
    (``host:0+1``). A host named more than once without ids gets the next ``--gpus`` GPUs each time
    (``localhost,localhost --gpus 1``: GPU 0 and GPU 1, named explicitly). Raises :class:`UsageError`."""
    env = os.environ if environ is None else environ
    if run.extra:
        raise UsageError("--nodes sets the launcher's rendezvous options: drop those after --")
    rdzv_port(env)  # read when the job starts: a bad one is said now, before it is queued
    if text.strip() == SLURM:
        nodelist = env.get("SLURM_JOB_NODELIST")
        if not nodelist:
            raise UsageError(
                "--nodes slurm works inside a Slurm allocation (no SLURM_JOB_NODELIST)"
            )
        hosts = remote.slurm_hosts(nodelist)
        if not hosts:
            raise UsageError(f"SLURM_JOB_NODELIST {nodelist!r} names no node")
        return NodesConfig(run, tuple(Node(i, h) for i, h in enumerate(hosts)), "srun")
    nodes: list[Node] = []
    seen: dict[str, int] = {}
    parts = [_node_part(p.strip(), text) for p in text.split(",")]
    for i, (host, ids_text) in enumerate(parts):
        part = f"{host}:{ids_text}" if ids_text else host
        ids = _gpu_ids(ids_text, host) if ids_text else None
        if ids is not None and run.device == "cuda" and len(ids) != run.gpus:
            raise UsageError(
                f"--nodes {part}: names {counted(len(ids), 'GPU')} but --gpus asks for "
                f"{run.gpus} a node"
            )
        count = seen.get(host, 0)
        seen[host] = count + 1
        repeated = sum(1 for h, _ in parts if h == host) > 1
        if ids is None and repeated and run.device == "cuda":
            ids = tuple(range(count * run.gpus, (count + 1) * run.gpus))
        nodes.append(Node(i, host, ids if run.device == "cuda" else None))
    return NodesConfig(run, tuple(nodes))


# --- each node's command line --------------------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    """One process the launching machine starts: a node's agent (local or over ssh), or one
    ``srun`` for every node (``ranks`` then names them all, its lines labelled by task)."""

    ranks: tuple[int, ...]
    argv: list[str]
    via: str  # "local" | "ssh" | "srun"


def rdzv_port(environ: Mapping[str, str]) -> int | None:
    """``ZBENCH_RDZV_PORT`` as a port number (None: unset); a :class:`UsageError` when it is not
    one (``int()`` of it crashed the job as it started, after it had been queued)."""
    text = environ.get(ENV_RDZV_PORT, "").strip()
    if not text:
        return None
    if not (text.isdigit() and 1 <= int(text) <= 65535):
        raise UsageError(f"${ENV_RDZV_PORT}: {text!r} is not a port number (1 to 65535)")
    return int(text)


def rendezvous(cfg: NodesConfig, environ: dict[str, str] | None = None) -> tuple[str, int]:
    """(address, port) of the first node's rendezvous: a free port when it is this machine, else
    ``ZBENCH_RDZV_PORT`` (29400), which every node must reach through its firewall."""
    env = os.environ if environ is None else environ
    first = cfg.nodes[0].host
    address = remote.address_of(first)
    port = rdzv_port(env)
    if port is not None:
        return address, port
    if cfg.launcher != "srun" and (remote.is_local(first) or remote.is_loopback(address)):
        return address, remote.free_port()
    return address, DEFAULT_RDZV_PORT


def torchrun_options(
    cfg: NodesConfig, rank: str, address: str, port: int, run_id: str
) -> list[str]:
    """torchrun's options for one node: node count and rank, c10d rendezvous, no restarts."""
    return [
        "--nnodes",
        str(len(cfg.nodes)),
        "--node-rank",
        rank,
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        f"{address}:{port}",
        "--rdzv-id",
        run_id,
        "--rdzv-conf",
        f"is_host={1 if rank == '0' else 0}" if rank != "{rank}" else "is_host={is_host}",
        "--max-restarts",
        "0",
    ]


def tf_config(cfg: NodesConfig, rank: str, address: str, port: int) -> str:
    """TF_CONFIG for one worker: every node's address and port; ``{rank}`` left for srun to fill."""
    workers = []
    for n in cfg.nodes:
        host = address if n.rank == 0 else remote.address_of(n.host)
        workers.append(f"{host}:{port + n.rank}")
    index = int(rank) if rank.isdigit() else -1  # -1: srun's form, filled in by each task
    text = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})
    return text if index >= 0 else text.replace('"index": -1', '"index": {rank}')


def all_local(cfg: NodesConfig) -> bool:
    """Whether every node is this machine (``--nodes localhost,localhost``)."""
    return cfg.launcher != "srun" and all(remote.is_local(n.host) for n in cfg.nodes)


def file_rendezvous_options(cfg: NodesConfig, rank: str, store: Path) -> list[str]:
    """The torch launcher's options when every node is this machine: the ranks meet through a
    file store (``runners.torch.launch.file_rendezvous``), so nothing listens on the network;
    torchrun's c10d store would listen on every interface."""
    return [
        "--nnodes",
        str(len(cfg.nodes)),
        "--node-rank",
        rank,
        "--rdzv-backend",
        "file",
        "--rdzv-endpoint",
        str(store),
    ]


def agent_args(
    cfg: NodesConfig,
    node: Node | None,
    address: str,
    port: int,
    run_id: str,
    store: Path | None = None,
) -> list[str]:
    """``-m zbench.jobs.node ...`` for one node (``node`` None: the srun form, rank filled in by
    each task)."""
    rank = str(node.rank) if node is not None else "{rank}"
    args = ["-m", "zbench.jobs.node", "--rank", rank if node is not None else "-1"]
    if node is not None and node.gpu_ids is not None:
        args += ["--gpu-ids", ",".join(map(str, node.gpu_ids))]
    if node is None:
        args.append("--no-watch-stdin")
    run = cfg.run
    if run.framework == "tf":
        args += ["--tf-config", tf_config(cfg, rank, address, port), "--"]
        return [*args, *run.to_argv()]
    if store is not None and all_local(cfg):
        options = file_rendezvous_options(cfg, rank, store)
    else:
        options = torchrun_options(cfg, rank, address, port, run_id)
    return [*args, "--", *replace(run, extra=tuple(options)).to_argv()]


def plan(
    cfg: NodesConfig,
    run_id: str,
    environ: dict[str, str] | None = None,
    store: Path | None = None,
) -> list[Launch]:
    """Every node's launch. ``store``: a path on this machine for the file rendezvous of a torch
    job whose nodes are all this machine (without one, they use torchrun's c10d store)."""
    address, port = rendezvous(cfg, environ)
    if cfg.launcher == "srun":
        k = str(len(cfg.nodes))
        srun = ["srun", "--nodes", k, "--ntasks", k, "--ntasks-per-node", "1"]
        srun += ["--kill-on-bad-exit=1", "--label", "--unbuffered"]
        argv = [*srun, sys.executable, *agent_args(cfg, None, address, port, run_id)]
        return [Launch(tuple(n.rank for n in cfg.nodes), argv, "srun")]
    launches = []
    for node in cfg.nodes:
        args = agent_args(cfg, node, address, port, run_id, store)
        if remote.is_local(node.host):
            launches.append(Launch((node.rank,), [sys.executable, *args], "local"))
        else:
            argv = remote.ssh_command(node.host, [*remote.remote_python(), *args])
            launches.append(Launch((node.rank,), argv, "ssh"))
    return launches


def nodes_spec(
    text: str, run: RunConfig, gpu_ids: tuple[int, ...] | None, timeout: float | None
) -> Any:
    """The ``JobSpec`` of ``zbench run --nodes``; a :class:`UsageError` for bad input."""
    from zbench.jobs.api import JobSpec

    if gpu_ids is not None:
        raise UsageError("--gpu-ids is for one machine: with --nodes name GPUs as HOST:0+1")
    cfg = parse_nodes(text, run)
    if cfg.launcher != "srun":  # every ssh node answers now, or nothing is queued
        bad = remote.unreachable([n.host for n in cfg.nodes if not remote.is_local(n.host)])
        if bad:
            raise UsageError("--nodes: " + "; ".join(f"{host}: {why}" for host, why in bad.items()))
    local = cfg.local_gpu_ids()
    return JobSpec(cfg, local or None, timeout)  # type: ignore[arg-type]
