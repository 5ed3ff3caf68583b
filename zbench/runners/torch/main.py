"""Entry of the PyTorch runners: one process under the harness, or a torchrun launch."""

from __future__ import annotations

from zbench.contract.config import RunConfig
from zbench.contract.protocol import EventWriter


def run(config: RunConfig, writer: EventWriter) -> int:
    """Run ``config`` and write its events; the process exit status (0, 1 failed, 2 bad input)."""
    from zbench.runners.torch.launch import is_child, launch, multi_node

    if (config.gpus > 1 or multi_node(config)) and not is_child():
        return launch(config, writer)  # imports no framework in this process
    from zbench.runners import harness
    from zbench.runners.torch.adapter import TorchAdapter

    return harness.run(TorchAdapter(), config, writer)
