"""``zbench monitor``: a headless live view (Rich), or one JSON object per sample with ``--json``."""

from __future__ import annotations

import json
import queue
import sys
from pathlib import Path
from typing import Any

from zbench.telemetry.backends import open_backend, parse_gpus
from zbench.telemetry.sampler import Sampler
from zbench.telemetry.snapshot import Snapshot, to_dict


def _fail(message: str) -> int:
    print(f"zbench monitor: {message}", file=sys.stderr)
    return 2


def run_monitor(
    interval: float = 0.5,
    count: int | None = None,
    gpus: str | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    json_out: bool = False,
) -> int:
    try:
        gpu_list = parse_gpus(gpus)
        backend = open_backend(replay=replay, gpus=gpu_list)
    except (ValueError, FileNotFoundError) as exc:
        return _fail(str(exc))
    writer = None
    if record is not None:
        from zbench.telemetry.trace import TraceWriter

        try:
            writer = TraceWriter(record, interval=interval)
        except OSError as exc:
            backend.close()
            return _fail(f"cannot write {record}: {exc.strerror or exc}")

    inbox: queue.Queue[Snapshot] = queue.Queue()
    sampler = Sampler(backend, interval=interval)
    sampler.subscribe(inbox.put)
    seen = 0
    try:
        with _Output(json_out) as out:
            sampler.start()
            while count is None or seen < count:
                try:
                    snap = inbox.get(timeout=0.25)
                except queue.Empty:
                    continue
                seen += 1
                if writer is not None:
                    writer.write(snap)
                out.show(snap)
                if getattr(backend, "finished", False):
                    break  # a replayed trace ran out
    except KeyboardInterrupt:
        pass
    finally:
        sampler.stop()
        if writer is not None:
            writer.close()
        backend.close()
    return 0


class _Output:
    """JSON lines (flushed per line) or a Rich Live table."""

    def __init__(self, json_out: bool) -> None:
        self.json_out = json_out
        self.live: Any = None

    def __enter__(self) -> _Output:
        if not self.json_out:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            self.console = Console()
            self.live = Live(Text("sampling..."), console=self.console, auto_refresh=False)
            self.live.__enter__()
        return self

    def show(self, snap: Snapshot) -> None:
        if self.json_out:
            sys.stdout.write(json.dumps(to_dict(snap), separators=(",", ":")) + "\n")
            sys.stdout.flush()
            return
        from zbench.telemetry.monitor_view import render

        assert self.live is not None
        self.live.update(render(snap), refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)
            if not self.console.is_terminal:
                self.console.line()
