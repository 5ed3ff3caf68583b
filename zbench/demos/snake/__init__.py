"""Snake learned by reinforcement learning: a batched GPU env, PPO and double DQN, live frames."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

_IMPORTED = time.time()


def launch_time() -> float:
    """When this process started (the clock of "time to beat the review" includes start-up)."""
    try:
        import psutil

        return float(psutil.Process().create_time())
    except Exception:  # psutil missing or /proc unreadable: the import time is close enough
        return _IMPORTED


class _Writer:
    """The training loop's writer (emit, phase, progress) over the harness's ``emit``."""

    def __init__(self, emit: Callable[..., Any]) -> None:
        self.emit = emit

    def phase(self, name: str, **fields: Any) -> None:
        self.emit("phase", phase=name, **fields)

    def progress(self, step: int, total: int, samples_per_s: float | None = None, **f: Any) -> None:
        self.emit("progress", step=step, total=total, samples_per_s=samples_per_s, **f)


def check(options: Mapping[str, Any]) -> str | None:
    """A ``--compile`` that would do nothing (it would still be recorded), or a ``--checkpoint``
    that cannot be written (it is saved after the training budget)."""
    from zbench.contract.inputs import output_problem

    if options.get("compile") and options.get("device") == "cpu":
        return "--compile: the policy compiles on the GPU only; drop it with --device cpu"
    if options.get("compile") and options.get("algo") == "dqn":
        return "--compile: only ppo's policy compiles; drop it with --algo dqn"
    path = options.get("checkpoint")
    return None if path is None else output_problem(str(path), "--checkpoint", folder=False)


def run(options: Mapping[str, Any], emit: Callable[..., Any]) -> dict[str, Any]:
    """Entry for the demo adapter (imports torch only when called); returns the figures."""
    from zbench.contract.demo_options import DemoConfig
    from zbench.demos.snake.train import run as train

    return train(DemoConfig.of("snake", **options), _Writer(emit), started=launch_time())
