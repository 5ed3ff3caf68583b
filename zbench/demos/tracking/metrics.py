"""HOTA, MOTA and IDF1 with TrackEval's metric classes, fed a data dict built here.

TrackEval's file-based dataset classes expect its folder layout and config; its metric classes only
need, per frame, the ground-truth and tracker ids (relabelled to 0..n-1) and the IoU between them,
so we build that dict ourselves (``DO_PREPROC`` is ours too). The preprocessing follows TrackEval's
MOT17 rule: ground truth of distractor classes (2, 7, 8, 12), with the consider flag 0, or below
``min_vis`` visibility is ignored, and tracker boxes matched to it (Hungarian, IoU >= 0.5) are
removed rather than counted as false positives; other non-pedestrian classes are dropped. TrackEval is imported on first use, so only this module needs it.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from zbench.demos.tracking.boxes import iou_matrix
from zbench.demos.tracking.mot_io import rows_by_frame


class TrackEvalMissing(RuntimeError):
    """TrackEval cannot be imported: the tracks are not scored (their speeds still stand)."""


HINT = "pip install --no-deps trackeval (see docs/demos-tracking.md)"


def _trackeval():
    try:
        # TrackEval's package import prints a line for each optional dataset class whose
        # dependency is missing (BURST: pycocotools); only its metric classes are used here.
        with contextlib.redirect_stdout(io.StringIO()):
            import trackeval.metrics as tm
    except ImportError as exc:
        raise TrackEvalMissing(f"TrackEval is missing: {HINT}") from exc
    return tm


DISTRACTORS = (2, 7, 8, 12)  # person on vehicle, static person, distractor, reflection


def build_data(gt: np.ndarray, results: np.ndarray, min_vis: float = 0.1) -> dict[str, Any]:
    """TrackEval's per-sequence data dict from gt rows (9 columns) and result rows (>= 6)."""
    gt = np.asarray(gt, np.float64).reshape(-1, 9)
    cls = gt[:, 7]
    gt = gt[(cls == 1) | (cls == -1) | np.isin(cls, DISTRACTORS)]
    gt_by, res_by = rows_by_frame(gt), rows_by_frame(results)
    frames = sorted(set(gt_by) | set(res_by))
    first = min(frames) if frames else 1
    last = max(frames) if frames else 0
    gt_ids, tr_ids, sims = [], [], []
    for f in range(first, last + 1):
        g = gt_by.get(f, np.zeros((0, 9)))
        r = res_by.get(f, np.zeros((0, 6)))
        iou = iou_matrix(g[:, 2:6], r[:, 2:6]) if len(g) and len(r) else np.zeros((len(g), len(r)))
        ignore = (g[:, 6] == 0) | (g[:, 8] < min_vis) | np.isin(g[:, 7], DISTRACTORS)
        if ignore.any() and len(r):
            score = np.where(iou >= 0.5 - 1e-9, iou, 0)
            rows, cols = linear_sum_assignment(-score)
            hit = score[rows, cols] > 0
            drop = cols[hit & ignore[rows]]
            keep_r = np.setdiff1d(np.arange(len(r)), drop)
            r, iou = r[keep_r], iou[:, keep_r]
        g, iou = g[~ignore], iou[~ignore]
        gt_ids.append(g[:, 1].astype(np.int64))
        tr_ids.append(r[:, 1].astype(np.int64))
        sims.append(iou)
    gmap = {
        v: i for i, v in enumerate(np.unique(np.concatenate(gt_ids or [np.zeros(0, np.int64)])))
    }
    tmap = {
        v: i for i, v in enumerate(np.unique(np.concatenate(tr_ids or [np.zeros(0, np.int64)])))
    }
    return {
        "num_timesteps": len(gt_ids),
        "num_gt_ids": len(gmap),
        "num_tracker_ids": len(tmap),
        "num_gt_dets": int(sum(len(x) for x in gt_ids)),
        "num_tracker_dets": int(sum(len(x) for x in tr_ids)),
        "gt_ids": [np.array([gmap[v] for v in x], dtype=np.int64) for x in gt_ids],
        "tracker_ids": [np.array([tmap[v] for v in x], dtype=np.int64) for x in tr_ids],
        "similarity_scores": sims,
    }


def evaluate(gt: np.ndarray, results: np.ndarray, min_vis: float = 0.1) -> dict[str, float]:
    """HOTA, DetA, AssA, MOTA, MOTP, IDF1, IDSW, FP, FN for one sequence (fractions, not %)."""
    return summarize(evaluate_raw(build_data(gt, results, min_vis)))


def evaluate_raw(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """TrackEval's raw HOTA, CLEAR and Identity results for one sequence's data dict."""
    tm = _trackeval()
    cfg = {"PRINT_CONFIG": False}
    return {
        "HOTA": tm.HOTA(cfg).eval_sequence(data),
        "CLEAR": tm.CLEAR(cfg).eval_sequence(data),
        "Identity": tm.Identity(cfg).eval_sequence(data),
    }


def combine(per_seq: list[dict[str, dict[str, Any]]]) -> dict[str, float]:
    """Metrics over several sequences, combined the way TrackEval combines them (by counts)."""
    tm = _trackeval()
    cfg = {"PRINT_CONFIG": False}
    out = {}
    for name, cls in (("HOTA", tm.HOTA), ("CLEAR", tm.CLEAR), ("Identity", tm.Identity)):
        out[name] = cls(cfg).combine_sequences({str(i): r[name] for i, r in enumerate(per_seq)})
    return summarize(out)


def summarize(res: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The headline figures (HOTA, DetA, AssA, MOTA, MOTP, IDF1, IDSW, FP, FN) of raw results."""
    h, c, i = res["HOTA"], res["CLEAR"], res["Identity"]
    return {
        "HOTA": float(np.mean(h["HOTA"])),
        "DetA": float(np.mean(h["DetA"])),
        "AssA": float(np.mean(h["AssA"])),
        "MOTA": float(c["MOTA"]),
        "MOTP": float(c["MOTP"]),
        "IDF1": float(i["IDF1"]),
        "IDSW": int(c["IDSW"]),
        "FP": int(c["CLR_FP"]),
        "FN": int(c["CLR_FN"]),
    }
