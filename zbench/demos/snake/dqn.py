"""Double DQN, the review's algorithm: a replay buffer on the device and a target network.

The original project's settings (batch 32, target sync every 100 updates, Adam 1e-6, replay 50k,
one env) learn too slowly to show anything in minutes; this keeps the algorithm and feeds it from
every board at once: each iteration steps all boards once and takes ``updates`` gradient steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from zbench.demos.snake.env import OBS_CHANNELS, SnakeEnv
from zbench.demos.snake.model import SnakeNet
from zbench.demos.snake.optim import Adam
from zbench.demos.snake.ppo import EpisodeStats


@dataclass(frozen=True)
class DQNConfig:
    """Double DQN settings: horizon, replay size, batch, updates, epsilon decay, net width."""

    horizon: int = 16  # env steps per iteration (all boards)
    capacity: int = 500_000
    batch: int = 4096
    updates: int = 8  # gradient steps per iteration
    lr: float = 2.5e-4
    gamma: float = 0.99
    target_sync: int = 250  # gradient steps between target-network copies
    eps_start: float = 1.0
    eps_end: float = 0.02
    eps_steps: int = 20_000_000  # env steps of the linear epsilon decay
    width: int = 32


class DQN:
    """Double DQN learner on the batched env: a device replay buffer, online and target nets."""

    def __init__(self, env: SnakeEnv, config: DQNConfig | None = None) -> None:
        self.env, self.cfg = env, config or DQNConfig()
        dev = env.device
        self.device = dev
        self.net = SnakeNet(env.N, value_head=False, width=self.cfg.width).to(dev)
        self.target = SnakeNet(env.N, value_head=False, width=self.cfg.width).to(dev)
        self.target.load_state_dict(self.net.state_dict())
        self.opt = Adam(self.net.parameters(), lr=self.cfg.lr)
        self.autocast = dev.type == "cuda"
        cap, side = max(self.cfg.capacity, env.B), env.N + 2
        store = torch.bfloat16 if dev.type == "cuda" else torch.float32
        self.obs = torch.zeros(cap, OBS_CHANNELS, side, side, dtype=store, device=dev)
        self.next_obs = torch.zeros_like(self.obs)
        self.actions = torch.zeros(cap, dtype=torch.int64, device=dev)
        self.rewards = torch.zeros(cap, device=dev)
        self.dones = torch.zeros(cap, device=dev)
        self.cap, self.pos, self.full = cap, 0, False
        self.env_steps, self.grad_steps = 0, 0
        self.stats = EpisodeStats(dev)
        self._obs = env.observe()

    def _q(self, net: nn.Module, obs: torch.Tensor) -> torch.Tensor:
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
            return net(obs.float())[0].float()

    @property
    def epsilon(self) -> float:
        cfg = self.cfg
        frac = min(1.0, self.env_steps / max(cfg.eps_steps, 1))
        return cfg.eps_start + frac * (cfg.eps_end - cfg.eps_start)

    @torch.no_grad()
    def rollout(self, on_step: Callable[[], None] | None = None) -> None:
        env, b = self.env, self.env.B
        for _ in range(self.cfg.horizon):
            obs = self._obs
            greedy = self._q(self.net, obs).argmax(dim=1)
            rand = torch.randint(0, 4, (b,), device=self.device, generator=env.gen)
            explore = torch.rand(b, device=self.device, generator=env.gen) < self.epsilon
            action = torch.where(explore, rand, greedy)
            out = env.step(action)
            nxt = env.observe()
            idx = (self.pos + torch.arange(b, device=self.device)) % self.cap
            self.obs[idx], self.next_obs[idx] = obs.to(self.obs.dtype), nxt.to(self.obs.dtype)
            self.actions[idx], self.rewards[idx] = action, out.reward
            self.dones[idx] = out.done.float()
            self.full = self.full or self.pos + b >= self.cap
            self.pos = (self.pos + b) % self.cap
            self.env_steps += b
            self.stats.add(out.done, out.score, out.won)
            self._obs = nxt
            if on_step is not None:
                on_step()

    def update(self) -> dict[str, float]:
        cfg = self.cfg
        size = self.cap if self.full else self.pos
        total = torch.zeros((), device=self.device)
        for _ in range(cfg.updates):
            idx = torch.randint(0, size, (min(cfg.batch, size),), device=self.device)
            q = self._q(self.net, self.obs[idx]).gather(1, self.actions[idx, None])[:, 0]
            with torch.no_grad():
                nxt = self.next_obs[idx]
                best = self._q(self.net, nxt).argmax(dim=1, keepdim=True)  # double DQN
                q_next = self._q(self.target, nxt).gather(1, best)[:, 0]
                y = self.rewards[idx] + cfg.gamma * (1.0 - self.dones[idx]) * q_next
            loss = nn.functional.smooth_l1_loss(q, y)
            self.opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.net.parameters(), 10.0)
            self.opt.step()
            total += loss.detach()
            self.grad_steps += 1
            if self.grad_steps % cfg.target_sync == 0:
                self.target.load_state_dict(self.net.state_dict())
        return {"loss": float(total) / cfg.updates, "epsilon": self.epsilon}

    @property
    def steps_per_iteration(self) -> int:
        return self.cfg.horizon * self.env.B
