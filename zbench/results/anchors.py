"""Published figures (``anchors.json``) shown beside a user's results where they compare: same GPU
model and setup, and the same precision class, data kind and (where the source gives it) image size."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

ANCHORS_FILE = Path(__file__).with_name("anchors.json")


@dataclass(frozen=True)
class Anchor:
    """One published figure from anchors.json: GPU, workload and setup, samples/s, its source."""

    gpu: str
    match: tuple[str, ...]
    gpus: int
    workload: str
    framework: str
    mode: str
    precision: str
    also_matches: tuple[str, ...]
    samples_per_s: float
    batch_per_gpu: int | None
    source: str
    settings: str
    data: str | None = None  # synthetic, real, or None where the source does not say
    image_size: int | None = None

    def matches(
        self,
        gpu_name: str | None,
        gpus: int,
        workload: str,
        framework: str,
        mode: str,
        precision: str | None,
    ) -> bool:
        name = (gpu_name or "").upper()
        prec = (precision or "fp32").lower()
        return (
            bool(name)
            and all(token.upper() in name for token in self.match)
            and gpus == self.gpus
            and (workload, framework, mode) == (self.workload, self.framework, self.mode)
            and (prec == self.precision or prec in self.also_matches)
        )


def _anchor(item: dict[str, Any]) -> Anchor:
    return Anchor(
        gpu=item["gpu"],
        match=tuple(item["match"]),
        gpus=int(item["gpus"]),
        workload=item["workload"],
        framework=item["framework"],
        mode=item["mode"],
        precision=item["precision"],
        also_matches=tuple(item.get("also_matches", ())),
        samples_per_s=float(item["samples_per_s"]),
        batch_per_gpu=item.get("batch_per_gpu"),
        source=item["source"],
        settings=item["settings"],
        data=item.get("data"),
        image_size=item.get("image_size"),
    )


@cache
def load_anchors(path: Path = ANCHORS_FILE) -> tuple[Anchor, ...]:
    """Every published figure in ``path`` (anchors.json by default)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return tuple(_anchor(item) for item in data["anchors"])


def find_anchor(
    gpu_name: str | None,
    gpus: int,
    workload: str,
    framework: str,
    mode: str,
    precision: str | None,
) -> Anchor | None:
    """The first published figure for this GPU model and setup; an exact precision match wins
    over an equivalent one (TF32 published as "FP32")."""
    hits = [
        a for a in load_anchors() if a.matches(gpu_name, gpus, workload, framework, mode, precision)
    ]
    exact = [a for a in hits if a.precision == (precision or "fp32").lower()]
    pick = exact or hits
    return pick[0] if pick else None


def anchor_for(row: Any) -> Anchor | None:
    """``find_anchor`` for a ``ResultRow``."""
    return find_anchor(row.gpu_name, row.gpus, row.workload, row.framework, row.mode, row.precision)


@dataclass(frozen=True)
class Published:
    """The published figure for a row: ``anchor`` when it compares, else ``reason`` says why the one
    found does not (both None: nothing published for this setup)."""

    anchor: Anchor | None = None
    reason: str | None = None
    candidate: Anchor | None = None


def comparable(row: Any, anchor: Anchor) -> str | None:
    """None when ``anchor`` compares with ``row``; otherwise why not, in a few words."""
    from zbench.results.provenance import data_kind  # provenance imports nothing from here

    precision = (row.precision or "").lower()
    if precision != anchor.precision:
        ours = precision.upper() or "unrecorded precision"
        return f"published as {anchor.precision.upper()}, this run is {ours}"
    if anchor.data is None:
        return "the source does not say whether its data was synthetic or real"
    kind = data_kind(row)
    if kind != anchor.data:
        return f"published with {anchor.data} data, this run used {kind} data"
    size = (getattr(row, "config", None) or {}).get("image_size")
    if anchor.image_size is not None and size is not None and int(size) != anchor.image_size:
        return f"published at image size {anchor.image_size}, this run used {size}"
    return None


def published_for(row: Any) -> Published:
    """A row's published figure: one that compares, one found that does not (and why), or none."""
    candidate = anchor_for(row)
    if candidate is None:
        return Published()
    reason = comparable(row, candidate)
    return Published(None, reason, candidate) if reason else Published(candidate, None, candidate)
