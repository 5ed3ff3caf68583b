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


def test_the_tally_keeps_the_mean_of_the_last_five_iterations_and_when_the_review_fell() -> None:
    from zbench.contract.demos import SNAKE_REVIEW_BEST as REVIEW_BEST
    from zbench.demos.snake.train import Tally

    tally = Tally(started=100.0)
    tally.add(1000, total=0.0, count=0, best=0, wins=0, now=101.0)  # no game finished yet
    assert tally.mean == 0.0 and tally.games == 0
    for i in range(6):  # scores 1..6 per game, 10 games an iteration
        tally.add(1000, total=10.0 * (i + 1), count=10, best=i + 1, wins=i, now=102.0 + i)
    assert tally.mean == (2 + 3 + 4 + 5 + 6) / 5  # the first scoring iteration has aged out
    assert (tally.steps, tally.games, tally.wins, tally.best) == (7000, 60, 15, 6)
    assert tally.beat_at is None
    tally.add(1000, total=50.0, count=5, best=REVIEW_BEST + 1, wins=1, now=130.5)
    assert tally.beat_at == 30.5 and tally.best == REVIEW_BEST + 1
    tally.add(1000, total=50.0, count=5, best=REVIEW_BEST + 2, wins=1, now=140.0)
    assert tally.beat_at == 30.5  # the first time only
    point = tally.point(now=141.0)
    mean = (40 + 50 + 60 + 50 + 50) / (10 + 10 + 10 + 5 + 5)  # the last five iterations
    assert point == {
        "t_s": 41.0,
        "env_steps": 9000,
        "mean_score": mean,
        "best_score": 10,
        "games": 70,
    }
    assert tally.curve == [point]
