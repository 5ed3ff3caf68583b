"""A batched Snake game in PyTorch tensors: every board steps at once on the device.

State per board: ``age`` (N x N, each cell holds the steps until it is free: 0 empty, the head holds the
length, the tail 1), head row/column, direction, length, fruit cell, steps since the last fruit.
A step is a fixed sequence of tensor ops with no host synchronisation; boards that end are reset in the
same step, so the batch never shrinks. Fruit is spawned on a free cell by masking random scores with
the occupancy and taking the argmax (no rejection loop).

Actions are absolute: 0 up, 1 right, 2 down, 3 left. A reversal is ignored (the snake keeps going).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

DR = (-1, 0, 1, 0)  # row change per action: up, right, down, left
DC = (0, 1, 0, -1)
START_LENGTH = 3
OBS_CHANNELS = 4  # head, body (ordered by age), fruit, wall; on an (N+2) x (N+2) padded grid


@dataclass(frozen=True)
class Rewards:
    """Reward of one step. ``faithful()`` is the original project's (+0.1 per step survived, +1
    fruit, -1 death); the default adds a small pull toward the fruit and a starvation penalty."""

    fruit: float = 1.0
    death: float = -1.0
    step: float = 0.0
    toward: float = 0.01  # + when the head gets closer to the fruit (Manhattan), - when away
    starve: float = -1.0  # the step limit without food was reached

    @classmethod
    def faithful(cls) -> Rewards:
        return cls(fruit=1.0, death=-1.0, step=0.1, toward=0.0, starve=0.0)


@dataclass
class StepOut:
    """One step's outcome per board: reward, game over, final score, board filled, fruit eaten."""

    reward: torch.Tensor  # [B] float32
    done: torch.Tensor  # [B] bool: the game ended at this step (the board shows a new game)
    score: torch.Tensor  # [B] int64: the ended game's score (fruits eaten); valid where done
    won: torch.Tensor  # [B] bool: the board was filled
    ate: torch.Tensor  # [B] bool


class SnakeEnv:
    """``num_envs`` boards of ``size`` x ``size`` on ``device``."""

    def __init__(
        self,
        num_envs: int,
        size: int = 12,
        device: str | torch.device = "cpu",
        *,
        step_limit: int | None = None,
        rewards: Rewards | None = None,
        seed: int | None = None,
    ) -> None:
        if size < 4:
            raise ValueError(f"the board must be at least 4x4, got {size}")
        if num_envs < 1:
            raise ValueError(f"need at least one board, got {num_envs}")
        self.B, self.N = num_envs, size
        self.device = torch.device(device)
        self.step_limit = step_limit if step_limit is not None else size * size
        self.rewards = rewards or Rewards()
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed if seed is not None else 0)
        dev = self.device
        self._dr = torch.tensor(DR, device=dev)
        self._dc = torch.tensor(DC, device=dev)
        self._ar = torch.arange(self.B, device=dev)
        n = size
        # The start: length 3 in the middle row, heading right, head at column n // 2.
        self._r0, self._c0 = n // 2, n // 2
        tmpl = torch.zeros(n, n, dtype=torch.int32, device=dev)
        for k in range(START_LENGTH):
            tmpl[self._r0, self._c0 - k] = START_LENGTH - k
        self._template = tmpl
        self.age = tmpl.expand(self.B, n, n).clone()
        self.head_r = torch.full((self.B,), self._r0, dtype=torch.int64, device=dev)
        self.head_c = torch.full((self.B,), self._c0, dtype=torch.int64, device=dev)
        self.direction = torch.ones(self.B, dtype=torch.int64, device=dev)
        self.length = torch.full((self.B,), START_LENGTH, dtype=torch.int64, device=dev)
        self.hunger = torch.zeros(self.B, dtype=torch.int64, device=dev)
        self.fruit = self._spawn(self.age)

    # --- state ---------------------------------------------------------------------------------

    @property
    def score(self) -> torch.Tensor:
        return self.length - START_LENGTH

    @property
    def max_score(self) -> int:
        return self.N * self.N - START_LENGTH

    def _spawn(self, age: torch.Tensor) -> torch.Tensor:
        """A uniformly random free cell per board (flat index); a full board gets index 0."""
        scores = torch.rand(age.shape[0], self.N * self.N, generator=self.gen, device=self.device)
        scores = scores.masked_fill(age.reshape(age.shape[0], -1) > 0, -1.0)
        return scores.argmax(dim=1)

    def action_mask(self) -> torch.Tensor:
        """[B, 4] bool: actions that neither reverse nor die at once. A trapped board allows every
        non-reversing action (it dies whatever it does), so a mask row is never all False."""
        n = self.N
        r = self.head_r[:, None] + self._dr[None, :]
        c = self.head_c[:, None] + self._dc[None, :]
        inside = (r >= 0) & (r < n) & (c >= 0) & (c < n)
        flat = (r.clamp(0, n - 1) * n + c.clamp(0, n - 1)).reshape(self.B, 4)
        cell = self.age.reshape(self.B, -1).gather(1, flat)
        is_fruit = flat == self.fruit[:, None]
        # The tail (age 1) moves away this step unless the snake eats; the fruit cell is never body.
        free = (cell <= 1) | is_fruit
        actions = torch.arange(4, device=self.device)[None, :]
        not_back = actions != ((self.direction[:, None] + 2) % 4)
        ok = inside & free & not_back
        return torch.where(ok.any(dim=1, keepdim=True), ok, not_back)

    def observe(self, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """[B, 4, N+2, N+2]: head, body age / length (head 1, tail smallest), fruit, wall border."""
        n, b = self.N, self.B
        planes = torch.zeros(b, 3, n * n, dtype=dtype, device=self.device)
        planes[:, 0].scatter_(1, (self.head_r * n + self.head_c)[:, None], 1.0)
        planes[:, 1] = self.age.reshape(b, -1).to(dtype) / self.length[:, None].to(dtype)
        planes[:, 2].scatter_(1, self.fruit[:, None], 1.0)
        obs = torch.zeros(b, OBS_CHANNELS, n + 2, n + 2, dtype=dtype, device=self.device)
        obs[:, :3, 1 : n + 1, 1 : n + 1] = planes.view(b, 3, n, n)
        obs[:, 3] = 1.0
        obs[:, 3, 1 : n + 1, 1 : n + 1] = 0.0
        return obs

    # --- the step -----------------------------------------------------------------------------

    def step(self, action: torch.Tensor) -> StepOut:
        n, b, rw = self.N, self.B, self.rewards
        action = action.to(device=self.device, dtype=torch.int64)
        back = action == (self.direction + 2) % 4
        action = torch.where(back, self.direction, action)
        r = self.head_r + self._dr[action]
        c = self.head_c + self._dc[action]
        wall = (r < 0) | (r >= n) | (c < 0) | (c >= n)
        flat = r.clamp(0, n - 1) * n + c.clamp(0, n - 1)
        ate = (flat == self.fruit) & ~wall
        age = self.age.reshape(b, -1)
        # Without food every body cell ages by one (the tail frees); with food the body stays.
        moved = torch.where(ate[:, None], age, (age - 1).clamp_(min=0))
        self_hit = moved.gather(1, flat[:, None])[:, 0] > 0
        dead = wall | self_hit
        length = self.length + ate.long()
        moved = moved.scatter(1, flat[:, None], length[:, None].to(moved.dtype))
        full = length >= n * n
        hunger = torch.where(ate, torch.zeros_like(self.hunger), self.hunger + 1)
        starved = (hunger >= self.step_limit) & ~dead & ~full

        # Distance shaping: Manhattan distance to the fruit before and after the move.
        fr, fc = self.fruit // n, self.fruit % n
        before = (self.head_r - fr).abs() + (self.head_c - fc).abs()
        after = (r - fr).abs() + (c - fc).abs()
        closer = torch.sign(before - after).float()
        reward = torch.full((b,), rw.step, device=self.device)
        reward = reward + rw.toward * torch.where(ate, torch.zeros_like(closer), closer)
        reward = reward + ate.float() * rw.fruit
        reward = torch.where(dead, torch.full_like(reward, rw.death), reward)
        reward = torch.where(starved, reward + rw.starve, reward)

        done = dead | starved | full
        score = torch.where(ate & ~dead, length, self.length) - START_LENGTH
        # Survivors keep the moved board; ended boards restart from the template.
        new_age = torch.where(done[:, None], self._template.reshape(1, -1), moved).reshape(b, n, n)
        self.age = new_age
        self.head_r = torch.where(done, torch.full_like(r, self._r0), r)
        self.head_c = torch.where(done, torch.full_like(c, self._c0), c)
        self.direction = torch.where(done, torch.ones_like(action), action)
        self.length = torch.where(done, torch.full_like(length, START_LENGTH), length)
        self.hunger = torch.where(done, torch.zeros_like(hunger), hunger)
        need_fruit = ate | done
        self.fruit = torch.where(need_fruit, self._spawn(new_age), self.fruit)
        return StepOut(reward=reward, done=done, score=score, won=full, ate=ate & ~dead)

    def board(self, index: int) -> dict[str, object]:
        """One board as plain data (a ``frame`` event's ``board`` field); synchronises."""
        age = self.age[index].tolist()
        return {
            "size": self.N,
            "age": age,
            "head": [int(self.head_r[index]), int(self.head_c[index])],
            "fruit": [int(self.fruit[index]) // self.N, int(self.fruit[index]) % self.N],
            "length": int(self.length[index]),
            "score": int(self.length[index]) - START_LENGTH,
        }
