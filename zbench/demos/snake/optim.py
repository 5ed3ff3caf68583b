"""Adam for the Snake learners, over torch's functional Adam.

Why not ``torch.optim.Adam`` itself: its methods are wrapped to keep the compiler out, and the
wrapper's first call imports ``torch._dynamo``: 3-6 s of Python on an H100 host, which a job paid
before its first frame and inside its "time to beat the review" figure (``benchmarks/snake.py``
prints both). ``torch.optim._functional.adam`` is the update that class runs (the same foreach
kernels, chosen the same way) and imports nothing more. ``tests/demos/test_snake_optim.py`` holds
it to ``torch.optim.Adam`` bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch.optim._functional import adam


class Adam:
    """``torch.optim.Adam`` with its defaults but ``lr`` and ``eps``: ``zero_grad`` and ``step``."""

    def __init__(self, params: Iterable[torch.Tensor], lr: float, eps: float = 1e-8) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.eps, self.betas = lr, eps, (0.9, 0.999)
        self.exp_avgs = [
            torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params
        ]
        self.exp_avg_sqs = [
            torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params
        ]
        # torch.optim.Adam keeps its step counts as CPU scalars, unless capturable or fused
        self.steps = [torch.tensor(0.0) for _ in self.params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam step of every parameter with a gradient (as the class skips those without)."""
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        adam(
            [self.params[i] for i in live],
            [self.params[i].grad for i in live],  # type: ignore[misc]
            [self.exp_avgs[i] for i in live],
            [self.exp_avg_sqs[i] for i in live],
            [],
            [self.steps[i] for i in live],
            amsgrad=False,
            beta1=self.betas[0],
            beta2=self.betas[1],
            lr=self.lr,
            weight_decay=0.0,
            eps=self.eps,
            maximize=False,
        )
