"""A fake Services with canned jobs and results that records what the app asks of it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zbench.jobs.api import JobInfo
from zbench.tui.services import LaunchRequest, Queued

NOW = 1_760_000_100.0  # the frozen clock of every TUI test


def FakeJob(id: int, workload: str, **over: Any) -> JobInfo:
    """A ``jobs.api.JobInfo`` (the one job type the TUI reads) with a running job's defaults."""
    fields: dict[str, Any] = {
        "framework": "torch",
        "mode": "train",
        "precision": "fp32",
        "gpu_ids": (0,),
        "state": "running",
        "phase": "measure",
        "step": 30,
        "total": 100,
        "samples_per_s": 2210.5,
        "reason": None,
        "created": NOW - 120,
        "started": NOW - 100,
        "ended": None,
        "events_path": None,
        "log_path": None,
        "run_id": None,
        "suite": None,
    }
    return JobInfo(id=id, workload=workload, **{**fields, **over})


@dataclass(frozen=True)
class FakeResult:
    workload: str
    framework: str
    mode: str
    gpus: int
    samples_per_s: float
    gpu_name: str = "NVIDIA H200"
    precision: str = "fp32"
    batch_size: int = 128
    gpu_util: float | None = 95.0
    mem_util: float | None = 40.0
    gpu_mem_bytes: int | None = 30 * 1024**3
    cpu_util: float | None = 12.0
    cpu_mem_bytes: int | None = 8 * 1024**3
    run_id: int | None = None
    job_id: int = 0
    created: float = NOW


def canned_jobs() -> list[JobInfo]:
    return [
        FakeJob(3, "resnet50", gpu_ids=(0, 1), samples_per_s=4398.2, step=64, total=100),
        FakeJob(
            2,
            "vgg16",
            framework="tf",
            state="queued",
            phase=None,
            step=None,
            total=None,
            samples_per_s=None,
        ),
        FakeJob(
            1, "unet2d", state="done", phase="done", step=100, ended=NOW - 200, started=NOW - 400
        ),
    ]


def canned_results() -> list[FakeResult]:
    rows = [
        FakeResult("resnet50", "torch", "train", 1, 2259.0),
        FakeResult("resnet50", "torch", "train", 2, 4398.0),
        FakeResult("resnet50", "tf", "train", 1, 1890.0),
        FakeResult("resnet50", "tf", "train", 2, 2010.0),
        FakeResult("vgg16", "torch", "train", 1, 890.0),
        FakeResult("vgg16", "torch", "infer", 1, 2710.0, batch_size=64),
        FakeResult("unet2d", "torch", "train", 1, 140.0, batch_size=32),
        FakeResult("fasterrcnn", "tf", "train", 1, 61.0, batch_size=16, gpu_util=None),
    ]
    return [dataclasses.replace(r, run_id=n, job_id=n) for n, r in enumerate(rows, 1)]


@dataclass
class FakeServices:
    jobs: list[JobInfo] = field(default_factory=canned_jobs)
    results: list[FakeResult] = field(default_factory=canned_results)
    submitted: list[LaunchRequest] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    runners: dict[int, int] = field(default_factory=dict)
    signalled: list[tuple[int, str]] = field(default_factory=list)
    refuse: dict[int, str] = field(default_factory=dict)  # pid -> why a signal is refused
    verdicts: dict[int, str] = field(
        default_factory=lambda: {
            3: "input-bound: GPU util under 50% in 38% of samples while the job's processes used"
            " 7.8 cores, host CPU 97%"
        }
    )

    def list_jobs(self) -> Sequence[JobInfo]:
        return list(self.jobs)

    def submit(self, request: LaunchRequest) -> Queued:
        self.submitted.append(request)
        first = max((j.id for j in self.jobs), default=0) + 1
        return Queued(tuple(range(first, first + max(1, len(request.configs)))))

    def cancel(self, job_id: int) -> None:
        self.cancelled.append(job_id)

    def log_tail(self, job_id: int, lines: int = 50) -> list[str]:
        return [f"[job {job_id}] step {s}/100 loss {2.5 - s / 100:.3f}" for s in range(0, 64, 8)][
            -lines:
        ]

    def throughput(self, job: Any) -> list[tuple[float, float]]:
        return [(NOW - 60 + 2 * i, 4000.0 + 400 * (1 - 0.9**i)) for i in range(30)]

    def verdict(self, job_id: int) -> str | None:
        return self.verdicts.get(job_id)

    def suite_names(self) -> list[str]:
        return ["review", "quick", "precision"]

    def suite_summary(self, name: str) -> str:
        return f"{name}: 6 jobs: resnet50 (torch, tf; train, infer). about 3 min here last time."

    def query_results(self) -> Sequence[FakeResult]:
        return list(self.results)

    def render(self, rows: Sequence[Any], fmt: str) -> str:
        # Enough of results.export for the tests: one line per row, in order.
        return (
            "\n".join(f"{fmt}|{r.workload}|{r.framework}|{r.gpus}|{r.samples_per_s}" for r in rows)
            + "\n"
        )

    def is_database(self, path: Path) -> bool:
        from zbench.store import holds_database  # the real check: any SQLite file

        return holds_database(path)

    def report(self, rows: Sequence[Any], folder: Path) -> Path:
        # Enough of results.report for the tests: a heading and one line per row, in order.
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "report.md"
        lines = ["# zbench report", ""] + [f"- {r.workload} {r.framework} x{r.gpus}" for r in rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def runner_pids(self) -> dict[int, int]:
        return dict(self.runners)

    def signal_process(self, pid: int, name: str) -> None:
        if pid in self.refuse:
            raise PermissionError(self.refuse[pid])
        self.signalled.append((pid, name))
