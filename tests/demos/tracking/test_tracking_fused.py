"""The fused tracker: a low-score (occluded) detection keeps a track, a person found again after an
occlusion far from the prediction keeps the id by appearance, and on generated sequences with
identical detections and features it beats Deep SORT (benchmarks/tracking_trackers.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy")

from zbench.demos.tracking.bytetrack import ByteTracker
from zbench.demos.tracking.fused import FusedTracker

REPO = Path(__file__).resolve().parents[3]


def _look(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=32)
    return v / np.linalg.norm(v)


def test_low_score_detections_keep_the_track() -> None:
    tk = FusedTracker()
    ids = []
    for t in range(12):
        score = 0.9 if t < 5 else 0.3  # half hidden from frame 5: below the first pass
        out = tk.update(np.array([[100.0 + 4 * t, 50, 40, 100]]), np.array([score]), _look(1)[None])
        ids.append([o.track_id for o in out])
    assert ids[4] == ids[11] == [1]


def test_a_person_found_again_away_from_the_prediction_keeps_the_id() -> None:
    """Walks right for 20 frames, hidden for 12, comes back 60 px behind where the prediction
    went: no box overlap, so only appearance (inside the motion gate) can join them."""
    other = np.array([[600.0, 300, 40, 100]])

    def frame(box, tk):
        boxes = np.concatenate([box, other]) if len(box) else other
        feats = np.stack([_look(1), _look(2)]) if len(box) else _look(2)[None]
        return {o.track_id for o in tk.update(boxes, np.full(len(boxes), 0.9), feats)}

    def run(tk) -> tuple[set, set]:
        before = after = set()
        for t in range(20):
            before = frame(np.array([[100.0 + 4 * t, 50, 40, 100]]), tk)
        for _ in range(12):
            frame(np.zeros((0, 4)), tk)
        for t in range(3):
            after = frame(np.array([[116.0 + 4 * t, 50, 40, 100]]), tk)
        return before, after

    before, after = run(FusedTracker())
    assert after == before  # the same two ids
    b_before, b_after = run(ByteTracker())  # motion alone gives the person a new id
    assert b_after != b_before


@pytest.mark.slow
def test_benchmark_fused_beats_deepsort_on_identical_detections(tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "tracking_trackers.py"),
            "--sequences",
            "1",
            "--frames",
            "100",
            "--targets",
            "20",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(out.read_text())["trackers"]
    assert res["fused"]["HOTA"] >= res["deepsort"]["HOTA"] + 0.02
    assert res["fused"]["IDF1"] >= res["deepsort"]["IDF1"] + 0.02
    assert res["fused"]["IDSW"] < res["deepsort"]["IDSW"]
