"""``zbench monitor``: a headless live view (Rich), or one JSON object per sample with ``--json``."""

from __future__ import annotations

import json
import queue
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from zbench.cli.outcome import fail
from zbench.gpuids import parse_gpu_ids
from zbench.telemetry.backends import open_backend
from zbench.telemetry.sampler import Sampler
from zbench.telemetry.snapshot import Snapshot, to_dict


def _held_bytes(path: Path) -> int:
    """The size of a regular file already at ``path`` (0: none, empty, or a device such as
    /dev/stdout): what a recording there would overwrite."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def run_monitor(
    interval: float = 0.5,
    count: int | None = None,
    gpus: str | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    json_out: bool = False,
    once: bool = False,
    wide: bool = False,
    runners: Callable[[], Mapping[int, int]] | None = None,
) -> int:
    """``once``: one sample, ``count``: that many. Either takes a first, priming sample it does not
    show, so CPU %, PCIe and NVLink rates are real in every sample shown (a first sample has no
    earlier counters to take a difference from). ``runners`` gives the running jobs' runner pids
    (pid -> job id) to name the job of a GPU process."""
    if once and count is not None:
        return fail(f"--once shows one sample: it cannot go with --count {count}")
    if once:
        count = 1
    prime = count is not None  # the live view's first frame is replaced within one interval
    try:
        gpu_list = parse_gpu_ids(gpus)
        backend = open_backend(replay=replay, gpus=gpu_list)
    except (ValueError, FileNotFoundError) as exc:
        return fail(str(exc))
    writer = None
    if record is not None and replay is not None and _same_file(record, replay):
        backend.close()
        return fail(f"--record {record} is the trace --replay plays: recording would overwrite it")
    if record is not None and (held := _held_bytes(record)):
        backend.close()
        return fail(
            f"--record {record} already holds {held:,} bytes (a recording?): give a new path, "
            "or delete it first"
        )
    if record is not None:
        from zbench.telemetry.trace import TraceWriter

        # A recording of a replay is the replayed machine's, not this one's (its header said
        # this host's name).
        header = getattr(backend, "header", None) if replay is not None else None
        meta = None
        if header and replay is not None:
            meta = {"host": header.get("host"), "replayed_from": replay.name}
        try:
            writer = TraceWriter(record, interval=interval, meta=meta)
        except OSError as exc:
            backend.close()
            return fail(f"cannot write {record}: {exc.strerror or exc}")

    inbox: queue.Queue[Snapshot] = queue.Queue()
    sampler = Sampler(backend, interval=interval)
    sampler.subscribe(inbox.put)
    seen = shown = 0
    try:
        with _Output(json_out, wide=wide, live=not once, runners=runners) as out:
            sampler.start()
            while count is None or shown < count:
                try:
                    snap = inbox.get(timeout=0.25)
                except queue.Empty:
                    continue
                seen += 1
                if prime and seen == 1 and not getattr(backend, "finished", False):
                    continue  # the priming sample: its rates have nothing to compare with
                if writer is not None:
                    writer.write(snap)
                out.show(snap)
                shown += 1
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


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)  # a link or another spelling of the same path counts too
    except OSError:  # the recording does not exist yet
        return False


class _Output:
    """JSON lines (flushed per line), a Rich Live table, or (``live=False``) one printed table."""

    def __init__(
        self,
        json_out: bool,
        *,
        wide: bool = False,
        live: bool = True,
        runners: Callable[[], Mapping[int, int]] | None = None,
    ) -> None:
        self.json_out = json_out
        self.wide = wide
        self.use_live = live
        self.runners = runners
        self.live: Any = None
        self.shown = 0

    def __enter__(self) -> _Output:
        if not self.json_out:
            from rich.console import Console

            self.console = Console(highlight=False)
            if self.use_live and self.console.is_terminal:
                from rich.live import Live
                from rich.text import Text

                self.live = Live(Text("sampling..."), console=self.console, auto_refresh=False)
                self.live.__enter__()
        return self

    def _runners(self) -> Mapping[int, int]:
        if self.runners is None:
            return {}
        try:
            return self.runners()
        except Exception:  # no jobs database yet, or it is busy: the job column stays empty
            return {}

    def show(self, snap: Snapshot) -> None:
        if self.json_out:
            sys.stdout.write(json.dumps(to_dict(snap), separators=(",", ":")) + "\n")
            sys.stdout.flush()
            return
        from zbench.cli.monitor_view import render
        from zbench.cli.tableview import table_width

        view = render(snap, table_width(self.console, self.wide), self._runners())
        if self.live is None:  # --once, or a pipe: every sample printed whole, one after another
            if self.shown:
                self.console.line()
            self.console.print(view, soft_wrap=True)
            self.shown += 1
        else:
            self.live.update(view, refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)
