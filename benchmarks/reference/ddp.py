"""The plain DDP reference: one process per GPU under ``torchrun --standalone --nproc-per-node N``.

Weak scaling (the batch is per GPU). Training wraps the model in DistributedDataParallel with
gradient-as-bucket-view (gradients are the all-reduce buckets: no copy); inference runs the model on
every rank. The timed window starts after warm-up with every rank synchronized and at a barrier and
ends with a synchronize; throughput is all ranks' samples over the slowest rank's window. Rank 0 writes
the result as JSON to ``--result``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.reference import loop, models


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("workload", "mode", "precision", "result"):
        p.add_argument(f"--{name}", required=True)
    for name in ("batch-size", "image-size", "steps", "warmup"):
        p.add_argument(f"--{name}", type=int, required=True)
    p.add_argument("--channels-last", action="store_true")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--windows", type=int, default=1)
    a = p.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    if a.device == "cuda":
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    try:
        loop.set_precision(a.precision)
        torch.manual_seed(0)
        model = models.build(a.workload, a.image_size).to(device)
        model = model.to(memory_format=models.memory_format(a.workload, a.channels_last))
        net: nn.Module = model
        if a.mode == "train":
            ids = [local] if device.type == "cuda" else None
            net = nn.parallel.DistributedDataParallel(
                model, device_ids=ids, gradient_as_bucket_view=True
            )
        step = loop.make_step(a, device, net)
        for _ in range(a.warmup):
            step()
        loop.sync(device)
        spans = []
        for _ in range(loop.windows(a)):  # back to back, the median kept, as zbench's runner does
            dist.barrier()
            seconds = loop.timed(step, a.steps, 0, device)
            span = torch.tensor([seconds], dtype=torch.float64, device=device)
            dist.all_reduce(span, op=dist.ReduceOp.MAX)  # the slowest rank's window
            spans.append(float(span))
        window = statistics.median(spans)
        world = dist.get_world_size()
        if dist.get_rank() == 0:
            samples = a.batch_size * a.steps * world
            result = {
                "samples_per_s": samples / window,
                "window_s": window,
                "window_rates": [samples / s for s in spans],
                "gpus": world,
            }
            Path(a.result).write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
