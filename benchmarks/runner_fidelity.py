"""zbench's ResNet-50 training throughput vs a minimal plain-PyTorch loop on the same GPU.

Both sides train torchvision's ResNet-50 (random weights) on one synthetic batch kept on the device,
with the same batch, precision and TF32 switches. Rounds alternate zbench and the plain loop (each a
fresh process, so neither inherits the other's caches), and the medians are compared. Target: the
ratio zbench / plain is 0.99 or more, i.e. zbench's harness costs under 1%.

    python benchmarks/runner_fidelity.py --rounds 3 --batch-size 128 --precision fp32
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def plain_loop(batch: int, precision: str, steps: int, warmup: int, device: str) -> float:
    """The reference: what anyone would write by hand. Returns images/s."""
    import torch
    import torchvision

    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    dev = torch.device(device)
    model = torchvision.models.resnet50(weights=None).to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler(dev.type) if precision == "fp16" else None

    def step() -> None:
        with torch.autocast(dev.type, dtype=dtype, enabled=dtype is not None):
            loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        opt.zero_grad(set_to_none=True)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()

    for _ in range(warmup):
        step()
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    return batch * steps / (time.perf_counter() - t0)


def zbench_round(batch: int, precision: str, steps: int, warmup: int, device: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        argv = [sys.executable, "-m", "zbench.runners", "resnet50", "--batch-size", str(batch)]
        argv += ["--precision", precision, "--steps", str(steps), "--warmup", str(warmup)]
        argv += ["--device", device, "--events", str(events)]
        subprocess.run(argv, cwd=REPO, check=True)
        for line in events.read_text().splitlines():
            event = json.loads(line)
            if event["type"] == "result":
                return float(event["samples_per_s"])
    raise RuntimeError("the zbench runner reported no result")


def plain_round(batch: int, precision: str, steps: int, warmup: int, device: str) -> float:
    argv = [sys.executable, __file__, "--plain", "--batch-size", str(batch)]
    argv += ["--precision", precision, "--steps", str(steps), "--warmup", str(warmup)]
    argv += ["--device", device]
    out = subprocess.run(argv, cwd=REPO, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--precision", default="fp32", choices=("fp32", "tf32", "fp16", "bf16"))
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--plain", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    args = (a.batch_size, a.precision, a.steps, a.warmup, a.device)
    if a.plain:
        print(plain_loop(*args))
        return 0
    ours, plain = [], []
    for r in range(a.rounds):
        ours.append(zbench_round(*args))
        plain.append(plain_round(*args))
        print(
            f"round {r + 1}: zbench {ours[-1]:.1f} img/s, plain {plain[-1]:.1f} img/s", flush=True
        )
    ratio = statistics.median(ours) / statistics.median(plain)
    print(
        f"ResNet-50 train, batch {a.batch_size}, {a.precision}: zbench median "
        f"{statistics.median(ours):.1f} img/s, plain median {statistics.median(plain):.1f} img/s, "
        f"ratio {ratio:.3f} ({'meets' if ratio >= 0.99 else 'below'} the 0.99 target)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
