"""Trackers side by side with identical detections and features: HOTA, MOTA, IDF1 and frames/s.

    python benchmarks/tracking_trackers.py --out trackers.json          # 3 x 300 frames, 50 targets
    taskset -c 0 python benchmarks/tracking_trackers.py --sequences 1   # one core, one sequence

The sequences are zbench's generated scenes (1920x1080, ``--targets`` figures walking, crossing and
hiding one another), taken without drawing: only the ground truth and each figure's visibility.
Detections are made from the truth the way a real detector errs: a figure is found with a
probability that falls with its visibility, a partly hidden one scores low (many under Deep SORT's
0.3 and ByteTrack's 0.5), boxes are jittered more the more a figure is hidden, and false alarms
come with mostly low scores. Features are 128-d unit vectors: each figure has a look drawn near
one of a few clothing clusters (so some figures look alike), and each detection's feature is that
look plus noise that grows as the figure is hidden; a false alarm gets a random look. Every
tracker gets the same detections and features; each is timed alone (its ``update`` calls, wall
clock), with numpy's threads pinned to one (run under ``taskset -c 0`` for one core).
Scores come from TrackEval (``pip install --no-deps trackeval``), combined over the sequences.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the tracker alone on one core: BLAS must not fan out

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from zbench.demos.tracking import metrics  # noqa: E402
from zbench.demos.tracking.bytetrack import ByteTracker  # noqa: E402
from zbench.demos.tracking.deepsort import DeepSortTracker  # noqa: E402
from zbench.demos.tracking.fused import FusedTracker  # noqa: E402
from zbench.demos.tracking.mot_io import truth_rows  # noqa: E402
from zbench.demos.tracking.scene import FrameTruth, Scene, SceneConfig  # noqa: E402

TRACKERS = {"deepsort": DeepSortTracker, "bytetrack": ByteTracker, "fused": FusedTracker}
DIM, CLUSTERS = 128, 8


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sequences", type=int, default=3)
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--targets", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    return p.parse_args(argv)


def detections(
    truth: FrameTruth, looks: dict[int, np.ndarray], rng: np.random.Generator, w: int, h: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One frame's detections (tlwh), scores and features, as described in the module's text."""
    vis = truth.visibility
    found = (vis >= 0.1) & (rng.random(len(vis)) < np.clip(0.15 + 1.1 * vis, 0, 0.97))
    box = truth.tlwh[found].copy()
    hidden = 1.0 - vis[found]
    jitter = (0.03 + 0.08 * hidden)[:, None]
    box[:, :2] += rng.normal(0, 1, (len(box), 2)) * jitter * box[:, 2:]
    box[:, 2:] *= np.exp(rng.normal(0, 1, (len(box), 2)) * jitter)
    score = np.clip(0.2 + 0.75 * vis[found] + rng.normal(0, 0.12, len(box)), 0.05, 1.0)
    noise = rng.normal(0, 1, (len(box), DIM))
    noise *= ((0.45 + 1.2 * hidden) / np.linalg.norm(noise, axis=1))[:, None]
    ids = truth.ids[found]
    feat = np.stack([looks[int(i)] for i in ids]) + noise if len(ids) else np.zeros((0, DIM))
    n_fp = rng.poisson(2.0)
    fh = rng.uniform(0.08, 0.25, n_fp) * h
    fp = np.stack([rng.uniform(0, w, n_fp), rng.uniform(0.3, 0.85, n_fp) * h, fh * 0.4, fh], 1)
    fp_score = np.where(
        rng.random(n_fp) < 0.8, rng.uniform(0.1, 0.5, n_fp), rng.uniform(0.5, 0.8, n_fp)
    )
    fp_feat = rng.normal(0, 1, (n_fp, DIM))
    feats = np.concatenate([feat, fp_feat])
    feats /= np.linalg.norm(feats, axis=1, keepdims=True)
    return np.concatenate([box, fp]), np.concatenate([score, fp_score]), feats.astype(np.float32)


def sequence(cfg: SceneConfig, seed: int) -> tuple[list[tuple], np.ndarray]:
    """Detections and features per frame, and the ground truth rows."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (CLUSTERS, DIM))
    looks: dict[int, np.ndarray] = {}
    scene, frames, gt = Scene(cfg), [], []
    for t in range(1, cfg.frames + 1):
        _, truth = scene.next(draw=False)
        for i in truth.ids.tolist():
            if i not in looks:  # a look near one clothing cluster: some figures look alike
                v = centres[rng.integers(CLUSTERS)] + 0.9 * rng.normal(0, 1, DIM)
                looks[i] = v / np.linalg.norm(v)
        frames.append(detections(truth, looks, rng, cfg.width, cfg.height))
        gt += truth_rows(t, truth)
    return frames, np.array(gt).reshape(-1, 9)


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    per: dict[str, list] = {k: [] for k in TRACKERS}
    seconds = dict.fromkeys(TRACKERS, 0.0)
    frames_total, dets_total = 0, 0
    for s in range(a.sequences):
        cfg = SceneConfig(targets=a.targets, frames=a.frames, seed=a.seed + 2000 + s)
        frames, gt = sequence(cfg, a.seed + s)
        frames_total += len(frames)
        dets_total += sum(len(f[0]) for f in frames)
        for name, make in TRACKERS.items():
            tk, rows = make(), []
            t0 = time.perf_counter()
            outs = [tk.update(b, sc, f) for b, sc, f in frames]
            seconds[name] += time.perf_counter() - t0
            for t, out in enumerate(outs, start=1):
                rows += [[t, o.track_id, *o.tlwh] for o in out]
            data = metrics.build_data(gt, np.array(rows).reshape(-1, 6), 0.1)
            per[name].append(metrics.evaluate_raw(data))
    res: dict = {
        "sequences": a.sequences,
        "frames": a.frames,
        "targets": a.targets,
        "detections_per_frame": round(dets_total / frames_total, 1),
        "trackers": {},
    }
    for name in TRACKERS:
        m = metrics.combine(per[name])
        m["frames_per_s"] = round(frames_total / seconds[name], 1)
        res["trackers"][name] = m
    base = res["trackers"]["deepsort"]
    print(
        f"{a.sequences} sequences x {a.frames} frames, {a.targets} targets, "
        f"{res['detections_per_frame']} detections a frame"
    )
    print(
        f"{'tracker':<10} {'HOTA':>6} {'MOTA':>6} {'IDF1':>6} {'IDSW':>5} {'frames/s':>9}  "
        "HOTA/IDF1 vs deepsort"
    )
    for name, m in res["trackers"].items():
        d_h, d_i = 100 * (m["HOTA"] - base["HOTA"]), 100 * (m["IDF1"] - base["IDF1"])
        print(
            f"{name:<10} {m['HOTA']:6.3f} {m['MOTA']:6.3f} {m['IDF1']:6.3f} {m['IDSW']:5d} "
            f"{m['frames_per_s']:9,.0f}  {d_h:+.1f} / {d_i:+.1f} points"
        )
    if a.out:
        a.out.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
