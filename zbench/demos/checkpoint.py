"""Reading a demo's checkpoint in the runner: ``torch.load(weights_only=True)``, and a file it
cannot read is bad input (one line, exit 2), never a traceback nor PyTorch's advice to turn
``weights_only`` off (which would let the file run code)."""

from __future__ import annotations

import os
from typing import Any

from zbench.contract.inputs import checkpoint_problem
from zbench.runners.harness import BadInput


def load(path: str | os.PathLike[str], device: Any, what: str = "checkpoint") -> Any:
    """The checkpoint's contents (tensors and plain data only); :class:`BadInput` otherwise."""
    import torch

    problem = checkpoint_problem(path, what)
    if problem:
        raise BadInput(problem)
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # its message may advise weights_only=False: never shown
        raise BadInput(
            f"{what} {path}: not a checkpoint of tensors zbench can read ({type(exc).__name__})"
        ) from None
