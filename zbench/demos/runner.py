"""The shared demo part: demo options, their one parser, and the start/phase/result/error events.

Standard library and ``zbench.contract`` only: the CLI and the job supervisor build a demo's
command line from :class:`DemoConfig` and validate options with :func:`parse_args`; the demo process
(``python -m zbench.demos <demo> ... --events X``) parses its argv with the same parser. Each demo
module exposes ``run(config, writer) -> dict`` (the result fields) and writes ``progress`` and
``frame`` events itself; everything else about the event stream lives here.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import platform
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from types import FrameType
from typing import Any

from zbench.contract.config import UsageError
from zbench.contract.protocol import EventWriter

DEMOS: dict[str, str] = {"snake": "zbench.demos.snake.train"}
DEMO_TITLES: dict[str, str] = {"snake": "Snake by reinforcement learning"}
ALGOS: tuple[str, ...] = ("ppo", "dqn")


@dataclass(frozen=True)
class DemoConfig:
    """A demo run's options as given; ``envs=None`` takes the device's default (8192 on a GPU, 64
    on the CPU). Quacks like ``RunConfig`` where jobs need it (workload, framework, mode, gpus)."""

    demo: str = "snake"
    algo: str = "ppo"
    faithful: bool = False
    board: int = 12
    envs: int | None = None
    minutes: float = 5.0
    device: str = "cuda"
    seed: int = 0
    compile: bool = False
    checkpoint: str | None = None  # where to save the trained net (default: under ZBENCH_HOME)

    kind = "demo"
    framework = "demo"
    precision = None
    gpus = 1

    @property
    def workload(self) -> str:
        return self.demo

    @property
    def mode(self) -> str:
        return self.algo + ("-faithful" if self.faithful else "")

    def to_argv(self, events: str | None = None) -> list[str]:
        """The argv after ``python -m zbench.demos``."""
        argv = [self.demo]
        defaults = DemoConfig(demo=self.demo)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "demo" or value == getattr(defaults, f.name):
                continue
            flag = "--" + f.name.replace("_", "-")
            if isinstance(value, bool):
                argv.append(flag if value else "--no-" + f.name)
            elif value is not None:
                argv += [flag, str(value)]
        if events is not None:
            argv += ["--events", events]
        return argv

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.update(kind="demo", workload=self.demo, framework="demo", mode=self.mode)
        d["gpus"] = 0 if self.device == "cpu" else 1
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DemoConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)


def _int_at_least(low: int, high: int | None = None) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {span}, got {value}")
        return value

    return parse


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected minutes, got {text!r}") from None
    if not 0 < value <= 24 * 60:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1440, got {value:g}")
    return value


def build_parser(prog: str = "python -m zbench.demos") -> argparse.ArgumentParser:
    p = _Parser(prog=prog, description="Run one zbench demo and write runner-protocol events.")
    p.add_argument("demo", choices=sorted(DEMOS))
    p.add_argument("--algo", choices=ALGOS, default="ppo")
    p.add_argument("--faithful", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--board", type=_int_at_least(4, 64), default=12, help="board side, cells")
    p.add_argument("--envs", type=_int_at_least(1, 1 << 20), default=None, help="boards at once")
    p.add_argument("--minutes", type=_minutes, default=5.0, help="training budget")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=False)
    p.add_argument("--checkpoint", default=None, help="where to save the trained net")
    p.add_argument("--events", default=None, help="events file path or fd:N (default: stderr)")
    return p


def parse_args(argv: list[str]) -> tuple[DemoConfig, str | None]:
    """(config, events target). Raises ``UsageError`` with a one-line reason."""
    ns = build_parser().parse_args(argv)
    kwargs = {k: v for k, v in vars(ns).items() if k != "events"}
    return DemoConfig(**kwargs), ns.events


def launch_time() -> float:
    """When this process started (the clock of "time to beat the review" includes start-up)."""
    try:
        import psutil

        return float(psutil.Process().create_time())
    except Exception:  # psutil missing or /proc unreadable: the import time is close enough
        return _IMPORTED


_IMPORTED = time.time()


class Unavailable(RuntimeError):
    """What the demo needs is not here (CUDA, a framework): error kind ``unavailable``."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _error_kind(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if type(exc).__name__ in ("OutOfMemoryError", "OutOfMemory"):
        return "oom"
    if isinstance(exc, ImportError | Unavailable):
        return "unavailable"
    if isinstance(exc, UsageError):
        return "config"
    return "crash"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        config, target = parse_args(argv)
    except UsageError as exc:
        print(f"zbench.demos: {exc}", file=sys.stderr)
        return 2
    try:
        writer = EventWriter(target if target is not None else "fd:2")
    except OSError as exc:
        print(f"zbench.demos: cannot open events target {target}: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_sigterm)
    with writer:
        return run(config, writer)


def run(config: DemoConfig, writer: EventWriter) -> int:
    """Start, setup, the demo, result, done; errors become one ``error`` event and exit 1 (2 for
    bad input found late, such as a CUDA device that is not there)."""
    writer.emit(
        "start",
        demo=config.demo,
        workload=config.demo,
        framework="demo",
        title=DEMO_TITLES.get(config.demo, config.demo),
        config=config.as_dict(),
        environment={
            "python": platform.python_version(),
            "hostname": platform.node(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        },
    )
    writer.phase("setup")
    try:
        module = importlib.import_module(DEMOS[config.demo])
        result = module.run(config, writer, started=launch_time())
    except BaseException as exc:  # every failure must end as one error event
        kind = _error_kind(exc)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if kind == "crash":
            traceback.print_exc()
        print(f"zbench.demos: {kind}: {message}", file=sys.stderr)
        writer.error(kind, message)  # type: ignore[arg-type]
        return 2 if kind == "config" else 1
    writer.emit("result", demo=config.demo, **result)
    writer.phase("done")
    return 0
