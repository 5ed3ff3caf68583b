"""cuDNN autotuning on vs off in zbench's own runner, per workload (fp32 training, review batch).

Each case runs ``python -m zbench.runners`` twice, with ``ZBENCH_CUDNN_BENCHMARK=0`` and ``=1``
(a fresh process each), and compares the median window rates. ``fasterrcnn-voc`` trains on a
generated VOC-layout set whose images vary in size (as real VOC's do): the case that decides whether
the autotuner stays off for detection on real images (docs/runner-protocol.md).

    python benchmarks/runner_settings.py --out settings.json
    python benchmarks/runner_settings.py --cases unet3d fasterrcnn-voc --steps 15 --out s.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from zbench.runners import datasets  # noqa: E402

CASES = ("resnet50", "vgg16", "unet2d", "unet3d", "fasterrcnn", "fasterrcnn-voc")
# The first ten of the VOC classes the dataset reader knows (a tiny VOC tree needs no more).
VOC_CLASSES = datasets.VOC_CLASSES[:10]


def make_voc(root: Path, n: int = 96) -> Path:
    """A VOC2007 layout of ``n`` random JPEGs of varied sizes, one or two boxes each."""
    import numpy as np
    from PIL import Image

    base = root / "VOCdevkit" / "VOC2007"
    for sub in ("JPEGImages", "Annotations", "ImageSets/Main"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    names = []
    for i in range(n):
        name = f"{i:06d}"
        w, h = int(rng.integers(300, 500)), int(rng.integers(300, 500))
        pixels = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(base / "JPEGImages" / f"{name}.jpg", quality=90)
        objects = ""
        for _ in range(int(rng.integers(1, 3))):
            x0, y0 = int(rng.integers(0, w // 2)), int(rng.integers(0, h // 2))
            x1, y1 = x0 + int(rng.integers(20, w // 2)), y0 + int(rng.integers(20, h // 2))
            cls = VOC_CLASSES[int(rng.integers(len(VOC_CLASSES)))]
            objects += (
                f"<object><name>{cls}</name><difficult>0</difficult><bndbox><xmin>{x0}"
                f"</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax></bndbox></object>"
            )
        (base / "Annotations" / f"{name}.xml").write_text(
            f"<annotation><filename>{name}.jpg</filename><size><width>{w}</width><height>{h}"
            f"</height><depth>3</depth></size>{objects}</annotation>"
        )
        names.append(name)
    (base / "ImageSets" / "Main" / "train.txt").write_text("\n".join(names) + "\n")
    return root


def run_case(case: str, autotune: bool, args: argparse.Namespace, voc: Path | None) -> dict:
    workload = case.split("-")[0]
    argv = [workload, "--steps", str(args.steps), "--warmup", str(args.warmup)]
    argv += ["--repeat", str(args.repeat), "--device", args.device]
    if case == "fasterrcnn-voc":
        argv += ["--data", str(voc), "--workers", "6"]
    env = {**os.environ, "ZBENCH_CUDNN_BENCHMARK": "1" if autotune else "0"}
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        cmd = [sys.executable, "-m", "zbench.runners", *argv, "--events", str(events)]
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        lines = [json.loads(x) for x in events.read_text().splitlines() if x.strip()]
    result = next((e for e in lines if e["type"] == "result"), None)
    if result is None:
        error = next((e for e in lines if e["type"] == "error"), {"message": proc.stderr[-300:]})
        return {"case": case, "autotune": autotune, "error": error["message"]}
    return {
        "case": case,
        "autotune": autotune,
        "samples_per_s": result["samples_per_s"],
        "spread_pct": result["samples_per_s_spread_pct"],
        "settings": result["settings"],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--device", default="cuda")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        voc = make_voc(Path(tmp) / "voc") if "fasterrcnn-voc" in args.cases else None
        for case in args.cases:
            off, on = run_case(case, False, args, voc), run_case(case, True, args, voc)
            ratio = (
                on["samples_per_s"] / off["samples_per_s"]
                if "samples_per_s" in on and "samples_per_s" in off
                else None
            )
            rows.append({"case": case, "off": off, "on": on, "on_over_off": ratio})
            show = f"{ratio:.3f}" if ratio else f"error: {off.get('error') or on.get('error')}"
            print(
                f"{case:16} off {off.get('samples_per_s', 0):9.1f}/s  "
                f"on {on.get('samples_per_s', 0):9.1f}/s  on/off {show}",
                flush=True,
            )
    args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
