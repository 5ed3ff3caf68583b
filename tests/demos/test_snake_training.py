"""A short CPU training run beats a random (legal-move) policy by a clear margin on a 6x6 board."""

from __future__ import annotations

import pytest
import torch

from zbench.demos.snake.env import SnakeEnv
from zbench.demos.snake.ppo import PPO, PPOConfig


def random_policy_mean(games: int = 200) -> float:
    env = SnakeEnv(64, 6, seed=5)
    scores: list[int] = []
    while len(scores) < games:
        out = env.step(torch.multinomial(env.action_mask().float(), 1)[:, 0])
        scores += out.score[out.done].tolist()
    return sum(scores) / len(scores)


@pytest.mark.slow
def test_ppo_beats_random_on_the_cpu() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = SnakeEnv(128, 6, seed=0)
    ppo = PPO(env, PPOConfig(horizon=32, minibatch=1024, epochs=3, lr=1e-3, width=8))
    means = []
    for _ in range(30):
        ppo.rollout()
        ppo.update()
        total, count, _, _ = ppo.stats.read()
        if count:
            means.append(total / count)
    baseline = random_policy_mean()
    trained = sum(means[-3:]) / 3
    assert trained > 2 * baseline + 1, (trained, baseline)
