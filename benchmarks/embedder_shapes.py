"""The tracking embedder's first calls: a new crop count in nearly every chunk, against crops
padded to a few counts.

    python3 benchmarks/embedder_shapes.py --out embedder_shapes.json       # on a GPU, ~1 min
    python3 benchmarks/embedder_shapes.py --device cpu --chunks 3 --crops 20,30 --out /tmp/e.json

Found by the tracking demo (docs/demos-tracking.md): the embedder's span read 270-396 frames/s in
the first tracking call of every process and 1,155-1,334 in the second, on the same frames. A
chunk's crop count is its detections (600-800 at 50 figures and 8 frames), nearly always one the
process has not run yet. Each variant runs in a fresh process of its own (the effect is a first
call's): the same chunks twice, each call timed on the device (CUDA events), and the script
prints, per variant, the median and total milliseconds per chunk of the first pass and of the
second (every count seen). ``as-is`` is the demo's embedder; ``padN`` pads the crops with zeros
to a multiple of N (`Embedder(pad=N)`) and checks its features equal ``as-is``'s. The models'
weights are random: the speed of a ReidNet does not depend on them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.args import OneLineParser  # noqa: E402

VARIANTS = ("as-is", "pad32", "pad64", "pad128")


def _counts(text: str) -> tuple[int, int]:
    try:
        low, high = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants LOW,HIGH crop counts, got {text!r}") from None
    if not 0 < low <= high:
        raise argparse.ArgumentTypeError(f"wants 0 < LOW <= HIGH, got {text!r}")
    return low, high


def child(variant: str, device: str, chunks: int, crops: tuple[int, int], seed: int) -> dict:
    """One variant in this process: the chunks twice, each embedder call timed on the device."""
    import torch

    from zbench.demos.tracking.embedder import Embedder, ReidNet

    torch.manual_seed(seed)
    dev = torch.device(device)
    pad = int(variant[3:]) if variant.startswith("pad") else 0
    model = ReidNet().to(dev)
    emb = Embedder(model, bf16=dev.type == "cuda", pad=pad)
    plain = Embedder(model, bf16=dev.type == "cuda") if pad else None
    gen = torch.Generator().manual_seed(seed)
    frames = torch.rand(8, 3, 270, 480, generator=gen).to(dev)  # quarter-1080p frames in [0, 1]
    boxes = []
    for _ in range(chunks):
        n = int(torch.randint(crops[0], crops[1] + 1, (1,), generator=gen))
        per = torch.full((8,), n // 8, dtype=torch.long)
        per[: n % 8] += 1
        chunk = []
        for k in per.tolist():
            xy = torch.rand(k, 2, generator=gen) * torch.tensor([400.0, 180.0])
            wh = 20 + torch.rand(k, 2, generator=gen) * torch.tensor([60.0, 80.0])
            chunk.append(torch.cat([xy, xy + wh], dim=1).to(dev))
        boxes.append(chunk)
    passes = []
    for _ in range(2):
        spans = []
        for chunk in boxes:
            if dev.type == "cuda":
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                emb.batch(frames, chunk)
                b.record()
                b.synchronize()
                spans.append(a.elapsed_time(b))
            else:
                t0 = time.perf_counter()
                emb.batch(frames, chunk)
                spans.append((time.perf_counter() - t0) * 1000)
        passes.append(
            {"median_ms": round(statistics.median(spans), 3), "total_ms": round(sum(spans), 1)}
        )
    out: dict = {"variant": variant, "first": passes[0], "second": passes[1]}
    if plain is not None:  # padding must not change a crop's feature
        got, want = emb.batch(frames, boxes[0]), plain.batch(frames, boxes[0])
        out["max_feature_diff"] = float((got - want).abs().max())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="embedder_shapes.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--chunks", type=int, default=60, help="chunks of 8 frames per pass")
    ap.add_argument("--crops", type=_counts, default=(600, 800), help="LOW,HIGH crops a chunk")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.child, a.device, a.chunks, a.crops, a.seed)))
        return 0
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    bad = [v for v in variants if v != "as-is" and not (v[:3] == "pad" and v[3:].isdigit())]
    if bad or not variants:
        ap.error(f"unknown variant {', '.join(bad) or '(none)'}: as-is or padN")
    if a.chunks < 1:
        ap.error("--chunks wants at least 1")
    results = []
    for v in variants:
        argv_child = [sys.executable, __file__, "--child", v, "--device", a.device]
        argv_child += ["--chunks", str(a.chunks), "--crops", "{},{}".format(*a.crops)]
        argv_child += ["--seed", str(a.seed), "--out", os.devnull]
        run = subprocess.run(argv_child, capture_output=True, text=True, check=False)
        if run.returncode != 0:
            tail = (run.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"embedder_shapes.py: variant {v} failed: {tail}", file=sys.stderr)
            return 1
        results.append(json.loads(run.stdout.strip().splitlines()[-1]))
    print(
        f"{'variant':<8} {'first: median ms':>17} {'total ms':>9} {'second: median ms':>18} {'total ms':>9}"
    )
    for r in results:
        f, s = r["first"], r["second"]
        print(
            f"{r['variant']:<8} {f['median_ms']:>17.3f} {f['total_ms']:>9.1f}"
            f" {s['median_ms']:>18.3f} {s['total_ms']:>9.1f}"
        )
    a.out.write_text(json.dumps({"device": a.device, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
