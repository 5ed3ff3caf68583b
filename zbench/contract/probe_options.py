"""The options of a ``probe`` job (``zbench probe``): micro-benchmarks run by the supervisor as one
job kind, ``python -m zbench.runners.microbench``. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zbench.contract.kinds import PROBE as KIND


@dataclass(frozen=True)
class ProbeConfig:
    """``gpus``: how many GPUs the probe takes (0: every GPU the machine offers; the supervisor
    sets ``CUDA_VISIBLE_DEVICES`` to the ones it gives). ``quick``: smaller sizes, fewer repeats;
    ``p2p_seconds``: how long each GPU-to-GPU copy lasts. Quacks like ``RunConfig`` where jobs
    need it (workload, framework, mode, precision, device, gpus)."""

    gpus: int = 0
    quick: bool = False
    p2p_seconds: float = 3.0

    kind = KIND
    workload = KIND
    framework = "torch"
    mode = KIND
    precision = None
    device = "cuda"

    def check(self) -> str | None:
        """Options out of range, in one line (None: fine)."""
        ok = self.gpus >= 0 and 0 < self.p2p_seconds <= 3600
        return None if ok else "probe: --gpus at least 0, p2p seconds in (0, 3600]"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "workload": KIND,
            "framework": self.framework,
            "mode": KIND,
            "gpus": self.gpus,
            "quick": self.quick,
            "p2p_seconds": self.p2p_seconds,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeConfig:
        return cls(
            gpus=int(data.get("gpus") or 0),
            quick=bool(data.get("quick")),
            p2p_seconds=float(data.get("p2p_seconds") or 3.0),
        )

    def to_argv(self, events: str | None = None) -> list[str]:
        """The runner's options, with ``--events`` first when given."""
        head = ["--events", events] if events is not None else []
        quick = ["--quick"] if self.quick else []
        return [*head, *quick, "--p2p-seconds", f"{self.p2p_seconds:g}"]
