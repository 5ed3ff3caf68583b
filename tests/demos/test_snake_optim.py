"""The Snake learners' Adam (zbench/demos/snake/optim.py): torch.optim.Adam's update to the bit,
without the import of torch._dynamo that the class pays on its first use."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

from zbench.demos.snake.optim import Adam


def test_it_updates_as_torch_optim_adam_to_the_bit() -> None:
    torch.manual_seed(0)
    ours = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    theirs = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    theirs.load_state_dict(ours.state_dict())
    frozen = nn.Linear(2, 2)  # a parameter without a gradient: both skip it
    mine = Adam([*ours.parameters(), *frozen.parameters()], lr=3e-3, eps=1e-5)
    ref = torch.optim.Adam([*theirs.parameters(), *frozen.parameters()], lr=3e-3, eps=1e-5)
    for step in range(5):
        x = torch.randn(8, 6)
        for net, opt in ((ours, mine), (theirs, ref)):
            opt.zero_grad()
            (net(x) ** 2).mean().backward()
            opt.step()
        for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
            assert torch.equal(a, b), step
    assert all(p.grad is None for p in frozen.parameters())
    mine.zero_grad()
    assert all(p.grad is None for p in ours.parameters())


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_a_learner_rolls_out_and_updates_without_importing_torch_dynamo(algo: str) -> None:
    """torch._dynamo's import took 6 s on an H100 host, before the first frame; a fresh
    interpreter, as the job's runner is, trains without it."""
    code = (
        "import sys, torch\n"
        "from zbench.contract.demo_options import DemoConfig\n"
        "from zbench.demos.snake.train import make_learner\n"
        f"learner = make_learner(DemoConfig.of('snake', algo='{algo}', envs=4, board=6),"
        " torch.device('cpu'))\n"
        "for _ in range(2):\n"
        "    learner.rollout()\n"
        "    learner.update()\n"
        "print('torch._dynamo' in sys.modules, 'torch.optim' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
