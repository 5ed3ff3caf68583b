"""``python -m zbench.runners <workload> [options] --events <path|fd:N>``: one benchmark run.

Exit status: 0 done, 1 the work failed (an ``error`` event says why), 2 bad options or input (one
line on stderr, and an ``error`` event of kind ``config`` when an events target was given).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from types import FrameType

from zbench.contract.config import RunConfig, parse_args
from zbench.contract.options import UsageError
from zbench.contract.protocol import EventWriter
from zbench.contract.resolve import check_shape

RUNNERS = {"torch": "zbench.runners.torch.main", "tf": "zbench.runners.tf.adapter"}
EXTRAS = {"torch": "torch", "tf": "tf (or tf-cpu)"}
FRAMEWORK_MODULES = {"torch": "torch", "tf": "tensorflow"}


def _events_target(argv: list[str]) -> str | None:
    """``--events`` read by hand, for reporting options the parser rejected."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--events" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--events="):
            return arg.split("=", 1)[1]
    return None


def _open_writer(target: str | None) -> EventWriter:
    return EventWriter(target if target is not None else "fd:2")


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the runner reports an "interrupted" error and exits


def main(argv: list[str] | None = None) -> int:
    """Run one benchmark from the command line; bad options: stderr, an error event, exit 2."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        config, target = parse_args(argv, add_help=True)
    except UsageError as exc:
        print(f"zbench.runners: {exc}", file=sys.stderr)
        target = _events_target(argv)
        if target is not None:
            try:
                with _open_writer(target) as writer:
                    writer.error("config", str(exc))
            except OSError:
                pass  # the events target itself is what is wrong; stderr said it
        return 2
    try:
        writer = _open_writer(target)
    except OSError as exc:
        print(f"zbench.runners: cannot open events target {target}: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_sigterm)
    with writer:
        return _dispatch(config, writer)


def _dispatch(config: RunConfig, writer: EventWriter) -> int:
    fw = config.framework
    reason = check_shape(config)  # before a framework import: bad input is answered at once
    if reason:
        print(f"zbench.runners: {reason}", file=sys.stderr)
        writer.error("config", reason)
        return 2
    try:
        importlib.import_module(FRAMEWORK_MODULES[fw])
    except ImportError:
        message = (
            f"the {fw} runners need {FRAMEWORK_MODULES[fw]}: pip install 'zbench[{EXTRAS[fw]}]'"
        )
        print(f"zbench.runners: {message}", file=sys.stderr)
        writer.error("unavailable", message)
        return 1
    module = importlib.import_module(RUNNERS[fw])
    return int(module.run(config, writer))


def exit_rank(code: int) -> None:
    """End a rank of a several-GPU run without interpreter finalization.

    Once a DistributedDataParallel module has been made, its process group's worker threads keep
    running after ``destroy_process_group`` (seen with Gloo on torch 2.14, even with the module
    freed), so they are alive while Python tears itself down, and finalization can then abort the
    rank ("terminate called without an active exception"; pytorch/pytorch#190489, #179291) after
    its result was written. Everything a rank reports has gone out by now (the events file is
    closed), so it flushes its standard streams and leaves at once.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    status = main()
    if os.environ.get("LOCAL_RANK") is not None:  # a rank, started by our launcher or torchrun
        exit_rank(status)
    sys.exit(status)
