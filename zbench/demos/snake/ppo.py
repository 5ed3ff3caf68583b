"""PPO with action masking on the batched env: rollouts, GAE and minibatch epochs all on the device."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from zbench.demos.snake.env import SnakeEnv
from zbench.demos.snake.model import SnakeNet
from zbench.demos.snake.optim import Adam


@dataclass(frozen=True)
class PPOConfig:
    """PPO settings: rollout horizon, epochs, minibatch, GAE, clipping, loss weights, net width."""

    horizon: int = 64  # steps per board per rollout
    epochs: int = 4
    minibatch: int = 16384
    lr: float = 3e-4
    gamma: float = 0.99
    lam: float = 0.95
    clip: float = 0.2
    entropy: float = 0.01
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    width: int = 32  # the CNN's first conv channels (the CPU uses 8)


class EpisodeStats:
    """Finished games, summed on the device (read once per iteration, not once per step)."""

    def __init__(self, device: torch.device) -> None:
        self.sum = torch.zeros((), device=device)
        self.count = torch.zeros((), dtype=torch.int64, device=device)
        self.best = torch.zeros((), dtype=torch.int64, device=device)
        self.wins = torch.zeros((), dtype=torch.int64, device=device)

    def add(self, done: torch.Tensor, score: torch.Tensor, won: torch.Tensor) -> None:
        self.sum += (score * done).sum()
        self.count += done.sum()
        self.best = torch.maximum(self.best, (score * done).max())
        self.wins += (won & done).sum()

    def read(self) -> tuple[float, int, int, int]:
        """(sum, count, best, wins) as Python numbers, then reset; synchronises."""
        values = torch.stack(
            [self.sum.double(), self.count.double(), self.best.double(), self.wins.double()]
        ).tolist()
        self.sum.zero_()
        self.count.zero_()
        self.best.zero_()
        self.wins.zero_()
        return values[0], int(values[1]), int(values[2]), int(values[3])


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits in fp32 with the illegal actions at -1e9, so they are never sampled."""
    return logits.float().masked_fill(~mask, -1e9)


class PPO:
    """PPO learner: rollouts of every board into device buffers, GAE, clipped minibatch updates."""

    def __init__(
        self, env: SnakeEnv, config: PPOConfig | None = None, *, compile: bool = False
    ) -> None:
        self.env, self.cfg = env, config or PPOConfig()
        torch.distributions.Distribution.set_default_validate_args(False)  # no per-step checks
        dev = env.device
        self.device = dev
        self.net = SnakeNet(env.N, width=self.cfg.width).to(dev)
        self.opt = Adam(self.net.parameters(), lr=self.cfg.lr, eps=1e-5)
        self.autocast = dev.type == "cuda"  # bf16 on the GPU; the CPU runs fp32
        self.policy: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor | None]] = self.net
        if compile and dev.type == "cuda":
            self.policy = torch.compile(self.net)
        t, b, side = self.cfg.horizon, env.B, env.N + 2
        self.obs = torch.zeros(t, b, 4, side, side, device=dev)
        self.masks = torch.zeros(t, b, 4, dtype=torch.bool, device=dev)
        self.actions = torch.zeros(t, b, dtype=torch.int64, device=dev)
        self.logp = torch.zeros(t, b, device=dev)
        self.values = torch.zeros(t, b, device=dev)
        self.rewards = torch.zeros(t, b, device=dev)
        self.dones = torch.zeros(t, b, device=dev)
        self.stats = EpisodeStats(dev)

    def _forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
            logits, value = self.policy(obs)
        assert value is not None
        return logits.float(), value.float()

    @torch.no_grad()
    def rollout(self, on_step: Callable[[], None] | None = None) -> None:
        env = self.env
        for t in range(self.cfg.horizon):
            obs, mask = env.observe(), env.action_mask()
            logits, value = self._forward(obs)
            dist = torch.distributions.Categorical(logits=masked_logits(logits, mask))
            action = dist.sample()
            self.obs[t], self.masks[t], self.actions[t] = obs, mask, action
            self.logp[t], self.values[t] = dist.log_prob(action), value
            out = env.step(action)
            self.rewards[t], self.dones[t] = out.reward, out.done.float()
            self.stats.add(out.done, out.score, out.won)
            if on_step is not None:
                on_step()
        self._next_value = self._forward(env.observe())[1]

    @torch.no_grad()
    def advantages(self) -> tuple[torch.Tensor, torch.Tensor]:
        cfg = self.cfg
        adv = torch.zeros_like(self.rewards)
        last = torch.zeros_like(self._next_value)
        next_value = self._next_value
        for t in reversed(range(cfg.horizon)):
            alive = 1.0 - self.dones[t]
            delta = self.rewards[t] + cfg.gamma * next_value * alive - self.values[t]
            last = delta + cfg.gamma * cfg.lam * alive * last
            adv[t] = last
            next_value = self.values[t]
        return adv, adv + self.values

    def update(self) -> dict[str, float]:
        cfg = self.cfg
        adv, ret = self.advantages()
        n = cfg.horizon * self.env.B
        obs = self.obs.reshape(n, *self.obs.shape[2:])
        masks, actions = self.masks.reshape(n, 4), self.actions.reshape(n)
        old_logp, adv, ret = self.logp.reshape(n), adv.reshape(n), ret.reshape(n)
        size = min(cfg.minibatch, n)
        losses = torch.zeros(3, device=self.device)
        count = 0
        for _ in range(cfg.epochs):
            order = torch.randperm(n, device=self.device)
            for start in range(0, n - size + 1, size):
                idx = order[start : start + size]
                logits, value = self._forward(obs[idx])
                dist = torch.distributions.Categorical(logits=masked_logits(logits, masks[idx]))
                logp = dist.log_prob(actions[idx])
                a = adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                ratio = (logp - old_logp[idx]).exp()
                pg = -torch.min(ratio * a, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a).mean()
                vloss = 0.5 * (value - ret[idx]).pow(2).mean()
                ent = dist.entropy().mean()
                loss = pg + cfg.value_coef * vloss - cfg.entropy * ent
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
                self.opt.step()
                losses += torch.stack([pg.detach(), vloss.detach(), ent.detach()])
                count += 1
        pg_l, v_l, ent_v = (losses / max(count, 1)).tolist()
        return {"policy_loss": pg_l, "value_loss": v_l, "entropy": ent_v}

    @property
    def steps_per_iteration(self) -> int:
        return self.cfg.horizon * self.env.B
