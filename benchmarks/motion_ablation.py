"""Where the motion model's head geometry is lost: training variants side by side, one seed each.

Every variant trains a fresh model for the same steps on rendered pairs and is scored on the same
held-out clips as `benchmarks/motion.py` (`evaluate.quality`); the table gives the model's figures
over the unwarped source's and the estimated affine warp's (below 1: the model is ahead).

- `base`: the demo's training as it is.
- `near`: the driving pose lies 10-50 % of the way from the source pose to another random pose
  (the default draws two independent poses), so the reconstruction loss sees smaller moves.
- `perc`: adds a perceptual term on the features of a fixed, randomly initialised VGG-like stack
  (no pretrained weights exist offline); weight 10, three image scales.
- `perc_near`: both.
- `sep`: adds a separation prior on the keypoints (`train.separation`, Zhang et al. 2018: pairs
  closer than about 0.2 in [-1, 1] units push apart; weight 1), against the keypoints drawing
  together towards the centre; `sep_perc_near` adds it to `perc_near`.
- `deep`: the reconstruction pyramid goes down to 8 px at every size (`train.pyramid_levels`: 6
  levels at 256 px instead of 4, the same 4 at 64 px); `deep_perc_near` adds it to `perc_near`.
- `oracle_kp`: the renderer's true landmarks of both frames are the keypoints (identity
  Jacobians), so nothing has to be discovered: a bound on what dense motion and generator reach
  when keypoints are right, in the same steps. Not a method: it is given what no method has.

    python benchmarks/motion_ablation.py --steps 300 --out ablation.json   # about 2 min a variant
                                                                          # on 2 CPU cores
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from zbench.demos.motion import evaluate, renderer, train
from zbench.demos.motion.model import MotionConfig, MotionModel

VARIANTS = (
    "base",
    "near",
    "perc",
    "perc_near",
    "sep",
    "sep_perc_near",
    "deep",
    "deep_perc_near",
    "oracle_kp",
)
SMALL = MotionConfig(
    kp_expansion=16,
    kp_max=128,
    kp_blocks=3,
    dm_expansion=16,
    dm_max=128,
    dm_blocks=3,
    gen_expansion=16,
    gen_max=128,
)


def _eye(b: int, k: int, device: torch.device) -> torch.Tensor:
    return torch.eye(2, device=device).expand(b, k, 2, 2)


def run_variant(name: str, a: argparse.Namespace) -> dict:
    torch.manual_seed(a.seed)
    oracle = name == "oracle_kp"
    cfg = SMALL if a.size <= 64 else MotionConfig()
    if oracle:
        cfg = MotionConfig(**{**cfg.to_dict(), "num_kp": len(renderer.LANDMARKS)})
    model = MotionModel(cfg).to(a.device)
    pairs = train.RenderedPairs(a.size, a.batch, a.device, a.seed, near="near" in name)
    feats = train.RandomFeatures().to(a.device) if "perc" in name else None
    sep = train.SEP_SIGMA if "sep" in name else None
    levels = train.pyramid_levels(a.size) if "deep" in name else 4

    def losses(
        model: MotionModel, source: torch.Tensor, driving: torch.Tensor, theta: torch.Tensor
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        if not oracle:
            return train.compute_losses(model, source, driving, theta, feats, sep, levels)
        assert pairs.landmarks is not None
        (ls, ld), eye = pairs.landmarks, _eye(source.shape[0], cfg.num_kp, source.device)
        out = model.animate(source, ls, eye, ld, eye)["prediction"]
        return {"recon": train.pyramid_l1(out.float(), driving)}, out

    start = time.perf_counter()
    train.train(
        model,
        pairs,
        steps=a.steps,
        bf16=a.device == "cuda",
        seed=a.seed,
        losses=losses,
    )
    train_s = time.perf_counter() - start
    images, landmarks, masks = evaluate.held_out_clips(a.clips, a.frames, a.size, a.device)
    n, t = landmarks.shape[:2]
    lm_src = landmarks[:, :1].expand(n, t, -1, -1).reshape(n * t, -1, 2)
    lm_drv = landmarks.reshape(n * t, -1, 2)

    def drive(
        model: MotionModel, source: torch.Tensor, driving: torch.Tensor, first: int
    ) -> dict[str, torch.Tensor]:
        b, eye = source.shape[0], _eye(source.shape[0], cfg.num_kp, source.device)
        with train.autocast(source.device, a.device == "cuda"):
            out = model.animate(
                source, lm_src[first : first + b], eye, lm_drv[first : first + b], eye
            )
        return {k: v.float() for k, v in out.items()}

    q = evaluate.quality(
        model, images, landmarks, masks, bf16=a.device == "cuda", drive=drive if oracle else None
    )
    keys = ("l1", "l1_head", "akd_px")
    return {
        "variant": name,
        "steps": a.steps,
        "train_s": round(train_s, 1),
        "vs_source": {k: round(q["model"][k] / q["source"][k], 3) for k in keys},
        "vs_affine": {k: round(q["model"][k] / q["affine"][k], 3) for k in keys},
        "quality": q,
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma-separated: {', '.join(VARIANTS)}"
    )
    p.add_argument("--steps", type=int, default=300)
    p.add_argument(
        "--size", type=int, default=64, help="64 (small model) or a multiple of 32 >= 128"
    )
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clips", type=int, default=12, help="held-out clips")
    p.add_argument("--frames", type=int, default=8, help="frames per held-out clip")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", type=Path, help="JSON results")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    a = p.parse_args(argv)
    names = [v.strip() for v in a.variants.split(",") if v.strip()]
    bad = [v for v in names if v not in VARIANTS]
    if bad or not names:
        p.error(f"unknown variant {', '.join(bad) or '(none)'}; choose from {', '.join(VARIANTS)}")
    if a.steps < 1 or a.batch < 1 or a.clips < 1 or a.frames < 2:
        p.error("--steps, --batch and --clips must be at least 1, --frames at least 2")
    if a.size != 64 and (a.size < 128 or a.size % 32):
        p.error("--size must be 64 or a multiple of 32 from 128")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    rows = []
    print(
        f"{'variant':<13} {'steps':>5} {'train s':>7}   model/source: L1  head  AKD   model/affine: L1  head  AKD"
    )
    for name in names:
        r = run_variant(name, a)
        rows.append(r)
        s, f = r["vs_source"], r["vs_affine"]
        print(
            f"{name:<13} {r['steps']:>5} {r['train_s']:>7.0f}   {s['l1']:>17.3f} {s['l1_head']:>5.3f} {s['akd_px']:>5.3f}"
            f"   {f['l1']:>17.3f} {f['l1_head']:>5.3f} {f['akd_px']:>5.3f}",
            flush=True,
        )
    if a.out:
        a.out.write_text(
            json.dumps({"args": {k: str(v) for k, v in vars(a).items()}, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
