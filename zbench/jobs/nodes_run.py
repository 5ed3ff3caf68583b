"""The process of a multi-node job on the launching machine: ``python -m zbench.jobs.nodes_run``.

The supervisor runs it as the job's runner (its own process group, its output in the job's log, its
events file the job's). It starts every node's agent (``jobs.nodes.plan``), then:

- forwards the runner-protocol events of the node that speaks for the run (torchrun's global rank 0,
  which the c10d rendezvous may place on any node; TensorFlow's worker 0) and every node's errors;
- adds per-node figures to the ``result`` event: each node's host, GPUs, its share of the global
  rate and its telemetry aggregated per phase (raw samples go to ``node-samples.jsonl`` beside the
  events);
- ends the job when a node dies: an ``error`` naming the node (the job ends ``failed`` with it), and
  the other nodes are stopped;
- on SIGTERM (cancel, timeout) stops every node: each agent's stdin is closed and its transport
  signalled, and each agent stops its launcher's process group.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from zbench.contract.protocol import EventWriter
from zbench.jobs.node import PREFIX
from zbench.jobs.nodes import Launch, Node, NodesConfig, plan
from zbench.results.aggregate import Sample, aggregate

STOP_GRACE_S = 9.0  # under the supervisor's 10 s
SRUN_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")


@dataclass
class NodeState:
    """What the launching machine knows of one node: its record, exit status, and samples."""

    node: Node
    info: dict[str, Any] = field(default_factory=dict)  # the agent's "node" record
    exit_rc: int | None = None  # the launcher's status, as the agent reported it
    ended: float | None = None
    transport_rc: int | None = None
    samples: list[Sample] = field(default_factory=list)


class Manager:
    """Starts each node's agent, merges their streams into the job's events; one fails, all stop."""

    def __init__(self, cfg: NodesConfig, writer: EventWriter, samples_path: Path) -> None:
        self.cfg = cfg
        self.writer = writer
        self.states = {n.rank: NodeState(n) for n in cfg.nodes}
        self.speaker: int | None = 0 if cfg.run.framework == "tf" else None
        self.phase = "setup"
        self.have_result = False
        self.failed: str | None = None
        self.stopping = False
        self.lock = threading.Lock()
        self.procs: list[tuple[Launch, subprocess.Popen[bytes]]] = []
        self.samples_out: IO[str] = open(samples_path, "a", encoding="utf-8")  # noqa: SIM115
        # The file rendezvous of a torch job whose nodes are all this machine, in the job's folder.
        self.store = samples_path.with_name("rendezvous.store")

    # --- the nodes' streams ---------------------------------------------------------------------

    def read(self, launch: Launch, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            rank = launch.ranks[0]
            if launch.via == "srun":
                m = SRUN_LABEL.match(line)
                if m and int(m.group(1)) in self.states:
                    rank, line = int(m.group(1)), m.group(2)
            self.on_line(rank, line)

    def on_line(self, rank: int, line: str) -> None:
        state = self.states[rank]
        if not line.startswith(PREFIX):
            print(f"[{state.node.label()}] {line}", flush=True)
            return
        kind, _, payload = line[len(PREFIX) :].partition(" ")
        try:
            data = json.loads(payload)
        except ValueError:
            return
        with self.lock:
            if kind == "node":
                state.info = data
                print(
                    f"[{state.node.label()}] agent pid {data.get('pid')} launcher pgid "
                    f"{data.get('pgid')} on {data.get('host')}",
                    flush=True,
                )
            elif kind == "event":
                self.on_event(state, data)
            elif kind == "sample":
                data["phase"] = self.phase
                state.samples.append(data)
                self.samples_out.write(json.dumps({"node": rank, **data}) + "\n")
            elif kind == "exit":
                state.exit_rc = int(data.get("rc", 1))

    def on_event(self, state: NodeState, event: dict[str, Any]) -> None:
        kind = str(event.pop("type", ""))
        for key in ("v", "t"):
            event.pop(key, None)
        rank = state.node.rank
        if kind == "error":
            if rank != self.speaker:
                event["host"] = state.node.host
            self.writer.emit("error", **event)
            return
        if kind == "start" and self.speaker is None:
            self.speaker = rank
        if rank != self.speaker:
            return
        if kind == "phase" and isinstance(event.get("phase"), str):
            self.phase = event["phase"]
        if kind == "result":
            event["nodes"] = self.node_figures(event.get("samples_per_s"))
            self.have_result = True
        self.writer.emit(kind, **event)  # type: ignore[arg-type]

    def node_figures(self, rate: Any) -> list[dict[str, Any]]:
        """Each node's GPUs, its share of the global rate (ranks step in lockstep with the same
        batch, so a node's share is its GPUs' fraction), and its telemetry per phase."""
        run = self.cfg.run
        per_node = run.gpus
        total = per_node * len(self.states)
        out = []
        for rank, st in sorted(self.states.items()):
            out.append(
                {
                    "rank": rank,
                    "host": st.node.host,
                    "hostname": st.info.get("host"),
                    "gpus": per_node if run.device == "cuda" else 0,
                    "gpu_ids": list(st.node.gpu_ids) if st.node.gpu_ids is not None else None,
                    "samples_per_s": float(rate) * per_node / total
                    if isinstance(rate, int | float)
                    else None,
                    "telemetry": aggregate(st.samples),
                }
            )
        return out

    # --- life -----------------------------------------------------------------------------------

    def start(self, run_id: str) -> None:
        for launch in plan(self.cfg, run_id, store=self.store):
            print(f"$ {' '.join(launch.argv)}", flush=True)
            proc = subprocess.Popen(
                launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            self.procs.append((launch, proc))
            threading.Thread(target=self.read, args=(launch, proc), daemon=True).start()

    def stop_all(self) -> None:
        """Close every agent's stdin (each then stops its launcher) and SIGTERM the transports
        (an ssh client's exit closes the remote agent's stdin too; srun passes it to its tasks)."""
        for launch, proc in self.procs:
            if proc.poll() is None:
                if proc.stdin is not None:
                    with contextlib.suppress(OSError):
                        proc.stdin.close()
                if launch.via != "local":
                    with contextlib.suppress(ProcessLookupError):
                        proc.send_signal(signal.SIGTERM)

    def request_stop(self, *_: object) -> None:
        self.stopping = True

    def dead_node(self) -> NodeState | None:
        """The node to blame among those that ended badly: one that vanished (no exit record: killed,
        machine or connection lost) before one whose launcher failed, the earliest first."""
        bad = [s for s in self.states.values() if s.ended is not None and self._bad(s)]
        bad.sort(key=lambda s: (s.exit_rc is not None, s.ended))
        return bad[0] if bad else None

    def _bad(self, s: NodeState) -> bool:
        return s.exit_rc != 0 or (s.transport_rc or 0) != 0

    def describe(self, s: NodeState, via: str) -> str:
        rc = s.transport_rc
        if s.exit_rc is not None:
            return f"{s.node.label()} failed: its launcher exited with status {s.exit_rc}"
        if via == "ssh" and rc == 255:
            return f"{s.node.label()} was lost: the ssh connection failed or dropped (status 255)"
        if rc is not None and rc < 0:
            name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else rc
            return f"{s.node.label()} died: its agent was killed by {name}"
        return f"{s.node.label()} died: its agent exited with status {rc} without a word"

    def run(self, run_id: str) -> int:
        self.start(run_id)
        stop_sent: float | None = None
        while True:
            now = time.time()
            for launch, proc in self.procs:
                rc = proc.poll()
                if rc is None:
                    continue
                for rank in launch.ranks:
                    st = self.states[rank]
                    if st.ended is None:
                        st.ended, st.transport_rc = now, rc
            if all(proc.poll() is not None for _, proc in self.procs):
                break
            with self.lock:
                dead = self.dead_node()
                if dead is not None and self.failed is None and not self.stopping:
                    via = next(la.via for la, _ in self.procs if dead.node.rank in la.ranks)
                    self.failed = self.describe(dead, via)
                    print(f"zbench: {self.failed}; stopping the other nodes", flush=True)
                    self.writer.error(
                        "crash", self.failed, node={"rank": dead.node.rank, "host": dead.node.host}
                    )
            if (self.failed or self.stopping) and stop_sent is None:
                stop_sent = now
                self.stop_all()
            if stop_sent is not None and now - stop_sent > STOP_GRACE_S:
                for _, proc in self.procs:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
            time.sleep(0.1)
        time.sleep(0.3)  # the reader threads' last lines
        with self.lock:
            self.samples_out.close()
            if self.failed:
                return 1
            if self.stopping:
                self.writer.error("interrupted", "stopped: every node was asked to stop")
                return 1
            if not self.have_result:
                self.writer.error("crash", "every node finished but none reported a result")
                return 1
        return 0


def main(argv: list[str] | None = None) -> int:
    """Run a multi-node job from its JSON config, writing its events; SIGTERM or SIGINT stops it."""
    parser = argparse.ArgumentParser(prog="python -m zbench.jobs.nodes_run")
    parser.add_argument("--events", required=True)
    parser.add_argument("--config", required=True, help="the job's config (JSON)")
    args = parser.parse_args(argv)
    cfg = NodesConfig.from_dict(json.loads(args.config))
    events = Path(args.events)
    with EventWriter(events) as writer:
        manager = Manager(cfg, writer, events.with_name("node-samples.jsonl"))

        def on_signal(signum: int, frame: FrameType | None) -> None:
            manager.request_stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        run_id = f"zbench-{events.parent.name}-{os.getpid()}"
        return manager.run(run_id)


if __name__ == "__main__":
    sys.exit(main())
