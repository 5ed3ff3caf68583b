"""``zbench probe`` as a job: submits a ``probe`` job to the one supervisor and reads back the figures
it stored (``jobs/probe_record.py`` builds them). The CLI follows the job and prints (cli/probe.py)."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from zbench.contract.probe_options import ProbeConfig
from zbench.errors import ZbenchError
from zbench.gpuids import check_offered, no_gpu, parse_gpu_ids


class ProbeError(ZbenchError):
    """The probe could not run (no PyTorch, no GPU) or its job failed."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def submit_probe(
    gpus: str | None = None, quick: bool = False, p2p_seconds: float | None = None
) -> int:
    """Submit a probe job (``gpus``: those GPUs, else every GPU the supervisor offers); its id.
    Raises :class:`ProbeError`, or ``gpuids.GpuRequestError`` for a bad or absent ``--gpu-ids``."""
    from zbench.jobs import api
    from zbench.jobs.gpus import offered_gpus

    gpu_list = parse_gpu_ids(gpus)  # bad input first, whatever the machine has
    if p2p_seconds is None:
        p2p_seconds = float(os.environ.get("ZBENCH_PROBE_P2P_SECONDS", "3"))
    if importlib.util.find_spec("torch") is None:
        raise ProbeError("needs PyTorch: pip install 'zbench[torch]'", exit_code=1)
    offered, why = offered_gpus()  # both found before a job is queued that could only fail
    check_offered(gpu_list, offered, why=why)
    if not offered:
        raise ProbeError(no_gpu("the probe measures GPUs", why))
    config = ProbeConfig(gpus=len(gpu_list or ()), quick=quick, p2p_seconds=p2p_seconds)
    spec = api.JobSpec(config=config, gpu_ids=tuple(gpu_list) if gpu_list else None)
    [job_id] = api.submit([spec])
    return job_id


def probe_figures(job_id: int) -> dict[str, Any]:
    """The finished probe job's stored figures: ``rows`` (each beside its peak) and ``raw``; raises
    :class:`ProbeError` (exit 1) when the job did not end with a run."""
    from zbench import paths
    from zbench.jobs import api
    from zbench.jobs.states import JobState
    from zbench.store import RunFilter, Store

    info = api.get_job(job_id)
    if info.state != JobState.DONE or info.run_id is None:
        tail = api.log_tail(job_id, lines=5)
        reason = info.reason or (tail[-1] if tail else str(info.state))
        raise ProbeError(reason.split(": ", 1)[-1], exit_code=1)
    runs = Store(paths.db_path(None)).run_rows(RunFilter(run_ids=[info.run_id]))
    result = runs[0].result if runs else {}
    return {
        "job_id": job_id,
        "run_id": info.run_id,
        "rows": result.get("rows", []),
        "raw": result.get("tests", []),
    }
