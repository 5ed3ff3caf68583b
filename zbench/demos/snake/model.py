"""The small CNN both learners use, and safe checkpoint save/load (state_dict + weights_only)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from zbench.demos.snake.env import OBS_CHANNELS


class SnakeNet(nn.Module):
    """Conv(w) -> Conv(2w, stride 2) -> Conv(2w) -> Linear(8w) -> ``outputs`` (+ a value head); w=32.

    The stride keeps the flattened width small (64 x 7 x 7 on a 12x12 board) so a training step of
    tens of thousands of boards stays cheap; PPO reads ``(logits, value)``, DQN the Q-values."""

    def __init__(
        self, size: int, outputs: int = 4, value_head: bool = True, width: int = 32
    ) -> None:
        super().__init__()
        w = width
        side = size + 2
        half = (side + 1) // 2
        self.size, self.width = size, width
        self.body = nn.Sequential(
            nn.Conv2d(OBS_CHANNELS, w, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(2 * w * half * half, 8 * w),
            nn.ReLU(),
        )
        self.head = nn.Linear(8 * w, outputs)
        self.value = nn.Linear(8 * w, 1) if value_head else None
        nn.init.orthogonal_(self.head.weight, 0.01)
        nn.init.zeros_(self.head.bias)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        h = self.body(obs)
        value = self.value(h)[:, 0] if self.value is not None else None
        return self.head(h), value


def save_checkpoint(path: Path, net: SnakeNet, meta: dict[str, Any]) -> Path:
    """``torch.save`` of the state_dict and plain metadata, written atomically (tmp + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to("cpu") for k, v in net.state_dict().items()}
    payload = {"state_dict": state, "meta": dict(meta, size=net.size, width=net.width)}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)
    return path


def load_checkpoint(path: str | os.PathLike[str], device: str = "cpu") -> tuple[SnakeNet, dict]:
    """The net and its metadata; ``weights_only=True`` refuses anything but tensors and plain data."""
    from zbench.demos.checkpoint import BadInput, load

    payload = load(path, device)
    if not isinstance(payload, dict) or "state_dict" not in payload:
        raise BadInput(f"{path} is not a zbench snake checkpoint")
    meta = dict(payload.get("meta") or {})
    state = payload["state_dict"]
    has_value = any(k.startswith("value.") for k in state)
    net = SnakeNet(int(meta["size"]), value_head=has_value, width=int(meta.get("width", 32)))
    net.load_state_dict(state)
    return net.to(device).eval(), meta
