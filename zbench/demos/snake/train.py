"""The Snake demo's training loop: progress and rate-limited ``frame`` events, checkpoints, result.

Also used by ``benchmarks/snake.py`` (with a writer of its own), so the figures the benchmark
prints are the ones a ``zbench demo snake`` job stores.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch

from zbench.contract.demo_options import DemoConfig
from zbench.contract.demos import SNAKE_REVIEW_BEST
from zbench.demos.snake.dqn import DQN, DQNConfig
from zbench.demos.snake.env import Rewards, SnakeEnv
from zbench.demos.snake.model import save_checkpoint
from zbench.demos.snake.ppo import PPO, PPOConfig
from zbench.runners.harness import Unavailable

FRAME_INTERVAL_S = 0.25  # at most four frames a second
PROGRESS_INTERVAL_S = 1.0
DEFAULT_ENVS = {"cuda": 8192, "cpu": 64}


class Writer(Protocol):
    """What the training loop needs of an event writer: emit, phase and progress."""

    def emit(self, type: Any, **fields: Any) -> dict[str, Any]: ...
    def phase(self, name: Any, **fields: Any) -> None: ...
    def progress(
        self, step: int, total: int, samples_per_s: float | None = None, **f: Any
    ) -> None: ...


def pick_device(name: str) -> torch.device:
    """The torch device named by ``--device``; Unavailable when CUDA is asked for but absent."""
    if name == "cuda" and not torch.cuda.is_available():
        raise Unavailable("CUDA is not available here; use --device cpu")
    return torch.device(name)


def make_learner(config: DemoConfig, device: torch.device) -> PPO | DQN:
    """The env and the chosen learner (PPO or DQN), with smaller settings on the CPU."""
    envs = config.envs or DEFAULT_ENVS[device.type]
    rewards = Rewards.faithful() if config.faithful else Rewards()
    env = SnakeEnv(envs, config.board, device, rewards=rewards, seed=config.seed)
    torch.manual_seed(config.seed)
    cpu = device.type == "cpu"
    if config.algo == "dqn":
        dcfg = DQNConfig(capacity=50_000, batch=512, updates=2, width=8) if cpu else DQNConfig()
        if cpu:
            dcfg = DQNConfig(**{**dcfg.__dict__, "eps_steps": 200_000})
        return DQN(env, dcfg)
    pcfg = PPOConfig(horizon=32, minibatch=1024, epochs=3, lr=1e-3, width=8) if cpu else PPOConfig()
    return PPO(env, pcfg, compile=config.compile)


def default_checkpoint(config: DemoConfig) -> Path:
    """A new checkpoint path in zbench's data folder, named by algorithm, board size and time."""
    from zbench import paths

    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"{config.algo}{'-faithful' if config.faithful else ''}-{config.board}x{config.board}"
    return paths.home() / "demos" / "snake" / f"{name}-{stamp}.pt"


class Watch:
    """Which board the live view follows: the longest snake, kept until its game ends."""

    def __init__(self) -> None:
        self.index = 0
        self.length = 0

    def pick(self, env: SnakeEnv) -> dict[str, object]:
        length = int(env.length[self.index])
        if length < self.length:  # its game ended: follow the best board now
            self.index = int(env.length.argmax())
            length = int(env.length[self.index])
        self.length = length
        board = env.board(self.index)
        board["env"] = self.index
        return board


@dataclass
class Tally:
    """The training's running figures: board steps, games, wins, the best score, the mean score of
    the last few iterations' games, when the review's best was beaten, and the learning curve."""

    started: float
    steps: int = 0
    games: int = 0
    wins: int = 0
    best: int = 0
    mean: float = 0.0
    beat_at: float | None = None
    curve: list[dict[str, Any]] = field(default_factory=list)
    recent: deque[tuple[float, int]] = field(default_factory=lambda: deque(maxlen=5))

    def add(self, steps: int, total: float, count: int, best: int, wins: int, now: float) -> None:
        """One iteration's rollout: ``count`` games finished, scoring ``total`` in all."""
        self.steps += steps
        self.games += count
        self.wins += wins
        self.best = max(self.best, best)
        if count:
            self.recent.append((total, count))
            self.mean = sum(s for s, _ in self.recent) / sum(c for _, c in self.recent)
        if self.beat_at is None and self.best > SNAKE_REVIEW_BEST:
            self.beat_at = now - self.started

    def point(self, now: float) -> dict[str, Any]:
        """A point of the learning curve, kept and sent with the progress event."""
        point = {
            "t_s": round(now - self.started, 2),
            "env_steps": self.steps,
            "mean_score": round(self.mean, 3),
            "best_score": self.best,
            "games": self.games,
        }
        self.curve.append(point)
        return point


def run(config: DemoConfig, writer: Writer, *, started: float | None = None) -> dict[str, Any]:
    """Train for ``config.minutes``; returns the ``result`` fields."""
    tally = Tally(started if started is not None else time.time())
    device = pick_device(config.device)
    learner = make_learner(config, device)
    env = learner.env
    ckpt = Path(config.checkpoint) if config.checkpoint else default_checkpoint(config)
    budget = config.minutes * 60.0
    writer.phase("warmup", envs=env.B, board=env.N, algo=config.algo)
    env_rate = measure_env(env.N, env.B, device)
    writer.phase("measure", env_steps_per_s=env_rate)

    t0 = time.time()
    watch = Watch()
    last_frame = last_progress = 0.0

    def on_step() -> None:
        nonlocal last_frame
        now = time.time()
        if now - last_frame >= FRAME_INTERVAL_S:
            last_frame = now
            writer.emit(
                "frame",
                demo="snake",
                board=watch.pick(env),
                t_s=round(now - tally.started, 2),
                env_steps=tally.steps,
                mean_score=round(tally.mean, 2),
                best_score=tally.best,
            )

    while True:
        learner.rollout(on_step)
        stats = learner.update()
        total, count, it_best, it_wins = learner.stats.read()
        now = time.time()
        tally.add(learner.steps_per_iteration, total, count, it_best, it_wins, now)
        elapsed = now - t0
        if now - last_progress >= PROGRESS_INTERVAL_S or elapsed >= budget:
            last_progress = now
            writer.progress(
                int(min(elapsed, budget)),
                int(budget),
                samples_per_s=tally.steps / max(elapsed, 1e-9),
                **tally.point(now),
                wins=tally.wins,
                **{k: round(v, 5) for k, v in stats.items()},
            )
        if elapsed >= budget:
            break

    if device.type == "cuda":
        torch.cuda.synchronize()
    wall = time.time() - t0
    meta = {
        "algo": config.algo,
        "faithful": config.faithful,
        "env_steps": tally.steps,
        "mean": tally.mean,
    }
    save_checkpoint(ckpt, learner.net, meta)
    return {
        "samples_per_s": tally.steps / wall,
        "unit": "board-steps",
        "env_steps": tally.steps,
        "env_only_steps_per_s": env_rate,
        "wall_s": round(wall, 2),
        "time_to_beat_review_s": round(tally.beat_at, 2) if tally.beat_at is not None else None,
        "review_best": SNAKE_REVIEW_BEST,
        "final_mean_score": round(tally.mean, 3),
        "best_score": tally.best,
        "games": tally.games,
        "wins": tally.wins,
        "envs": env.B,
        "board": env.N,
        "algo": config.algo,
        "faithful": config.faithful,
        "checkpoint": str(ckpt),
        "curve": tally.curve,
    }


def measure_env(size: int, envs: int, device: torch.device, steps: int = 50) -> float:
    """Board-steps/s of the environment alone (random legal actions, observation included)."""
    env = SnakeEnv(envs, size, device, seed=1)
    for _ in range(5):
        env.step(torch.multinomial(env.action_mask().float(), 1)[:, 0])
    if device.type == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        env.observe()
        env.step(torch.multinomial(env.action_mask().float(), 1)[:, 0])
    if device.type == "cuda":
        torch.cuda.synchronize()
    return envs * steps / (time.perf_counter() - t)
