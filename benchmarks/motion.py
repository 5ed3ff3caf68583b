"""Motion-transfer demo on one GPU: train on rendered heads, then speed (FPS) and held-out quality.

    python benchmarks/motion.py --minutes 4 --out motion.json --out-dir motion-out
    python benchmarks/motion.py --smoke --out /tmp/m.json --out-dir /tmp/m   # CPU, tiny, seconds

Speed is end to end on the device: a uint8 driving frame tensor in, a uint8 output frame out, bf16,
batch 1 streaming and batched, eager and torch.compile. Quality: each held-out clip is rebuilt from
its first frame; L1 (whole frame and head only) and true-landmark distance (AKD) against the
unwarped source, a global affine warp estimated from the two frames (`affine`, the simple baseline)
and one fitted to the true landmarks (`affine_oracle`, privileged: docs/demos-motion.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from zbench.demos.motion import demo, evaluate, renderer, train, video  # noqa: E402
from zbench.demos.motion.infer import Animator  # noqa: E402
from zbench.demos.motion.model import MotionConfig, MotionModel  # noqa: E402


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=4.0, help="training budget (default 4)")
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--batch", type=int, default=16, help="training batch")
    p.add_argument("--lr", type=float, default=train.LR, help=f"peak learning rate ({train.LR:g})")
    p.add_argument("--fps-batch", type=int, default=32, help="batched inference size")
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile rows")
    p.add_argument(
        "--recipe",
        choices=tuple(train.RECIPES),
        default=train.DEFAULT_RECIPE,
        help=f"training recipe (default {train.DEFAULT_RECIPE}, the demo's): base; perc_near, closer "
        "pairs plus a random-feature perceptual term; deep, the reconstruction pyramid down to 8 px "
        "(benchmarks/motion_ablation.py)",
    )
    p.add_argument("--smoke", action="store_true", help="tiny model, 64x64, a few steps (CPU test)")
    p.add_argument("--out", type=Path, required=True, help="JSON results path")
    p.add_argument("--out-dir", type=Path, required=True, help="checkpoint, GIF and PNG strip")
    args = p.parse_args(argv)
    if args.minutes <= 0 or args.size % 32 or args.size < 64:
        p.error("--minutes must be > 0 and --size a multiple of 32, at least 64")
    if not 0 < args.lr < 1:
        p.error("--lr must be between 0 and 1")
    if args.smoke:
        args.size, args.batch, args.fps_batch = 64, 4, 4
    return args


def log(msg: str) -> None:
    print(f"[motion {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def train_phase(args, device) -> tuple[MotionModel, dict]:
    cfg = demo.SMOKE_CONFIG if args.smoke else MotionConfig()
    model = MotionModel(cfg).to(device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    near = train.recipe_near(args.recipe)
    pairs = train.RenderedPairs(args.size, args.batch, device, seed=0, near=near)
    losses = train.recipe_losses(args.recipe, args.size, device)
    last = [time.perf_counter()]

    def on_step(st: train.TrainStatus) -> None:
        if time.perf_counter() - last[0] >= 30 or st.step == 1:
            last[0] = time.perf_counter()
            parts = " ".join(f"{k}={v:.4f}" for k, v in st.losses.items())
            log(f"step {st.step} at {st.elapsed:.0f}s: {parts}")

    steps = 8 if args.smoke else None
    t0 = time.perf_counter()
    opt, hist = train.train(
        model,
        pairs,
        steps=steps,
        seconds=args.minutes * 60,
        lr=args.lr,
        callback=on_step,
        losses=losses,
    )
    wall = time.perf_counter() - t0
    step = int(hist[-1]["step"])
    train.save(model, args.out_dir, opt, step)
    log(f"trained {step} steps in {wall:.0f}s ({step * args.batch / wall:.1f} pairs/s)")
    info = {
        "steps": step,
        "seconds": wall,
        "batch": args.batch,
        "size": args.size,
        "lr": args.lr,
        "recipe": args.recipe,
        "params": sum(p.numel() for p in model.parameters()),
        "config": cfg.to_dict(),
        "loss_first": hist[0]["total"],
        "loss_last": hist[-1]["total"],
        "loss_curve": [[h["step"], round(h["total"], 5)] for h in hist[:: max(1, len(hist) // 60)]],
    }
    return model, info


def speed_phase(args, model) -> list[dict]:
    rows = []
    frames = 40 if args.smoke else 600
    plans = [(False, 1), (False, args.fps_batch)]
    if not args.no_compile:
        plans += [(True, 1), (True, args.fps_batch)]
    for compiled, batch in plans:
        name = f"{'compile' if compiled else 'eager'} b{batch}"
        t0 = time.perf_counter()
        try:
            r = evaluate.measure_fps(
                model,
                args.size,
                batch=batch,
                frames=frames,
                warmup=3 if args.smoke else 30,
                compile=compiled,
            )
            rows.append({"name": name, **r})
            log(f"{name}: {r['fps']:.0f} frames/s ({r['ms_per_call']:.2f} ms per call)")
        except Exception as exc:  # a compile failure must not lose the training just done
            rows.append({"name": name, "error": f"{type(exc).__name__}: {exc}"[:300]})
            log(f"{name}: failed: {exc}")
        log(f"{name} took {time.perf_counter() - t0:.0f}s")
    return rows


def sample_strip(args, model, device) -> dict:
    """Scripted driving -> GIF (source | driving | result) and a 6-frame PNG strip."""
    opts = demo.MotionOptions(size=args.size, frames=12 if args.smoke else 100, device=str(device))
    src, frames, _ = demo._driving(opts, device)
    drv = np.stack(list(frames))
    anim = Animator(model)
    anim.set_source(torch.from_numpy(src).to(device))
    outs = anim(torch.from_numpy(drv).to(device)).cpu().numpy()
    strip = [video.side_by_side(src, d, o) for d, o in zip(drv, outs, strict=True)]
    gif = video.write_video(args.out_dir / "motion-sample.gif", strip[::2], fps=12.5)
    picks = np.linspace(0, len(strip) - 1, 6).astype(int)
    png = video.write_png(
        args.out_dir / "motion-strip.png", np.concatenate([strip[i] for i in picks], 0)
    )
    return {"gif": str(gif), "png": str(png)}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    device = torch.device("cpu" if args.smoke or not torch.cuda.is_available() else "cuda")
    t_all = time.perf_counter()
    log(
        f"device {device}"
        + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else "")
    )
    model, train_info = train_phase(args, device)
    model.eval()
    clips, lms, masks = evaluate.held_out_clips(
        4 if args.smoke else 24, 8 if args.smoke else 24, args.size, device
    )
    quality = evaluate.quality(model, clips, lms, masks)
    speed = speed_phase(args, model)
    pics = sample_strip(args, model, device)
    result = {
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "torch": torch.__version__,
        "train": train_info,
        "quality": quality,
        "speed": speed,
        "samples": pics,
        "renderer_landmarks": list(renderer.LANDMARKS),
        "wall_s": round(time.perf_counter() - t_all, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print("\n| held-out (reconstruction) | L1 | L1 head | AKD px |\n|---|---|---|---|")
    for name, q in quality.items():
        print(f"| {name} | {q['l1']:.4f} | {q['l1_head']:.4f} | {q['akd_px']:.2f} |")
    for base in ("source", "affine", "affine_oracle"):
        ratios = [
            f"{key} {quality['model'][key] / max(quality[base][key], 1e-9):.2f}"
            for key in ("l1", "l1_head", "akd_px")
        ]
        print(f"model / {base} (below 1: model ahead): {', '.join(ratios)}")
    print(f"\n| inference {args.size}x{args.size} bf16 | frames/s | ms/call |\n|---|---|---|")
    for r in speed:
        print(
            f"| {r['name']} | {r.get('fps', float('nan')):.0f} | {r.get('ms_per_call', float('nan')):.2f} |"
        )
    print(
        f"\ntrained {train_info['steps']} steps in {train_info['seconds']:.0f}s; total {result['wall_s']}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
