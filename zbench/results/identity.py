"""A result's identity: everything in its resolved configuration and environment that can change the
figures. Tables, exports, charts, ``compare`` and scaling keep rows with different identities apart.

The key is derived from the stored run (the runner's resolved ``config``, its ``env``, a few
``result`` fields and the GPU model). A field that is in neither list below counts as part of the
identity, so a field a runner starts recording tomorrow keeps unlike runs apart until someone decides
otherwise here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

# Config fields that are not identity: how a run was launched or repeated, not what was measured.
# ``gpus`` is identity, but is kept apart so scaling can pair runs that differ only in it.
CONFIG_NOT_IDENTITY = frozenset({"gpus", "seed", "repeat", "extra"})
# Environment fields that are not identity: where a run happened, not what it ran on. GPU names are
# represented by the GPU model below (a 2-GPU run lists two names, a 1-GPU run one).
ENV_NOT_IDENTITY = frozenset(
    {
        "host",
        "hostname",
        "gpu_ids",
        "cuda_visible_devices",
        "devices",
        "gpu_names",
        "gpu_capability",
        "tf_config_task",
        "machine",  # a stored `zbench doctor` record: the machine's description, not the setup
    }
)
# Result fields that describe the setup rather than the measurement.
RESULT_IDENTITY = ("precision_detail", "data")
# Fields the tables show as their own columns; the rest are named when two runs differ.
NAMES = {
    "batch_size": "batch per GPU",
    "image_size": "image size",
    "data_source": "data source",
    "channels_last": "channels-last",
    "precision_detail": "precision detail",
    "gpu_model": "GPU model",
    "cpu_processes": "CPU processes",
}


@dataclass(frozen=True)
class Identity:
    """Sorted (field, JSON value) pairs; equal identities mean like runs."""

    items: tuple[tuple[str, str], ...]

    def without(self, *names: str) -> Identity:
        return Identity(tuple((k, v) for k, v in self.items if k not in names))

    def short(self) -> str:
        """Eight hex digits, shown as a row's "Setup": like rows share it."""
        text = json.dumps(self.items)
        return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:8]

    def as_dict(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.items}


def _data_kind(config: dict[str, Any]) -> Any:
    # A dataset is named by its folder, not its path: the same data on two machines is alike.
    data = config.get("data")
    return None if not data else PurePath(str(data)).name


def gpu_model(row: Any) -> str:
    """What a run ran on: the GPU's name, or "CPU" for a CPU run (never a GPU's name)."""
    config = getattr(row, "config", None) or {}
    if config.get("device") == "cpu" or not getattr(row, "gpus", 0):
        return "CPU"
    return str(getattr(row, "gpu_name", None) or "unknown GPU")


def fields(row: Any) -> dict[str, Any]:
    """The identity's fields of a ``ResultRow`` (or anything with its attributes)."""
    config = dict(getattr(row, "config", None) or {})
    env = getattr(row, "env", None) or {}
    result = getattr(row, "result", None) or {}
    out: dict[str, Any] = {
        "workload": row.workload,
        "framework": row.framework,
        "mode": row.mode,
        "precision": getattr(row, "precision", None),
        "batch_size": getattr(row, "batch_size", None),
        "gpus": getattr(row, "gpus", None),
        "gpu_model": gpu_model(row),
    }
    processes = config.get("gpus")
    if out["gpu_model"] == "CPU" and isinstance(processes, int):
        # --gpus N on the CPU runs N processes (or TensorFlow replicas), and the GPU count is 0.
        out["cpu_processes"] = processes
    for key, value in config.items():
        if key not in CONFIG_NOT_IDENTITY and key not in out:
            out[key] = _data_kind(config) if key == "data" else value
    for key, value in env.items():
        if key not in ENV_NOT_IDENTITY:
            out.setdefault(f"env.{key}", value)
    for key in RESULT_IDENTITY:
        if result.get(key) is not None:
            out[f"result.{key}"] = result[key]
    nodes = result.get("nodes")
    if isinstance(nodes, list) and len(nodes) > 1:  # a run over several machines (--nodes)
        out["nodes"] = len(nodes)
    return out


def identity(row: Any) -> Identity:
    """A row's identity: every setup field that can change its figures, sorted, JSON-encoded."""
    return Identity(
        tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in fields(row).items()))
    )


def scaling_key(row: Any) -> Identity:
    """Identity but for the GPU count: runs with equal keys differ only in how many GPUs ran."""
    return identity(row).without("gpus")


def setup_id(row: Any) -> str:
    """A row's short setup id (eight hex digits): rows that compare share it."""
    return identity(row).short()


def label(name: str) -> str:
    """An identity field in words: ``image_size`` -> "image size", ``env.torch`` -> "torch"."""
    bare = name.split(".", 1)[-1]
    return NAMES.get(bare, bare.replace("_", " "))


def differing(per_row: Sequence[dict[str, Any]], shown: Iterable[str] = frozenset()) -> list[str]:
    """The fields (of ``fields()``, one dict per row) on which the rows differ, sorted, but for
    those in ``shown`` (a table's own columns); a field a row lacks counts as None."""
    keys = sorted({k for f in per_row for k in f} - set(shown))
    return [
        key for key in keys if len({json.dumps(f.get(key), sort_keys=True) for f in per_row}) > 1
    ]


def value_text(value: Any) -> str:
    """A field's value in words: ``on``/``off`` for a switch, JSON for a list, ``n/a`` for None."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def differences(a: Any, b: Any) -> list[tuple[str, Any, Any]]:
    """(field, value in a, value in b) for every identity field on which two runs differ."""
    fa, fb = fields(a), fields(b)
    return [(label(key), fa.get(key), fb.get(key)) for key in differing([fa, fb])]


def differences_text(a: Any, b: Any, limit: int | None = None) -> str:
    """``differences()`` in words, the first ``limit`` of them: "precision fp32 vs bf16; compile
    not recorded vs on" (a field an older run did not store), never Python's None and True."""

    def shown(row: dict[str, Any], key: str) -> str:
        if key not in row:
            return "not recorded"
        value = row[key]
        if isinstance(value, bool):
            return "on" if value else "off"
        return "none" if value is None else str(value)

    fa, fb = fields(a), fields(b)
    keys = differing([fa, fb])[:limit]
    return "; ".join(f"{label(k)} {shown(fa, k)} vs {shown(fb, k)}" for k in keys)


def telling_apart(names: Sequence[str], rows: Sequence[Any]) -> list[str]:
    """``names`` (one per row) made unique: a name that several rows of unlike setups share gets
    each row's setup id, so a chart never shows two setups under one name."""
    return [
        f"{name} {setup_id(row)}" if names.count(name) > 1 else name
        for name, row in zip(names, rows, strict=True)
    ]


def latest_per_identity(rows: Iterable[Any]) -> list[Any]:
    """The newest run of each identity (repeats of one setup collapse; unlike setups never do)."""
    best: dict[Identity, Any] = {}
    for r in rows:
        key = identity(r)
        if key not in best or (r.created or 0) >= (best[key].created or 0):
            best[key] = r
    return sorted(best.values(), key=lambda r: r.created or 0)


@dataclass(frozen=True)
class Scaling:
    """Runs identical but for the GPU count: ``base`` on one GPU, ``runs`` by GPU count."""

    base: Any
    runs: dict[int, Any]

    def speedup(self, n: int) -> float:
        return float(self.runs[n].samples_per_s) / float(self.base.samples_per_s)

    def efficiency(self, n: int) -> float:
        return self.speedup(n) / n


def scaling_groups(rows: Sequence[Any]) -> list[Scaling]:
    """Every set of like runs (newest of each identity) measured on one GPU and on more than one.
    A 2-GPU run at batch 2 never pairs with a 1-GPU run at batch 128."""
    groups: dict[Identity, dict[int, Any]] = {}
    for r in latest_per_identity(rows):
        if r.samples_per_s and gpu_model(r) != "CPU" and r.gpus:
            groups.setdefault(scaling_key(r), {})[int(r.gpus)] = r
    out = []
    for by_count in groups.values():
        if 1 in by_count and any(n > 1 for n in by_count):
            out.append(Scaling(by_count[1], {n: r for n, r in sorted(by_count.items()) if n > 1}))
    return out
