"""Entry of the PyTorch runners: one process, or a torchrun launch for several GPUs."""

from __future__ import annotations

from zbench.runners.config import RunConfig
from zbench.runners.protocol import EventWriter


def run(config: RunConfig, writer: EventWriter) -> int:
    """Run ``config`` and write its events; the process exit status (0, 1 failed, 2 bad input)."""
    from zbench.runners.torch.launch import is_child, launch

    if config.gpus > 1 and not is_child():
        return launch(config, writer)  # imports no framework in this process
    from zbench.runners.torch.worker import run_worker

    return run_worker(config, writer)
