"""The published Deep SORT through its maintained PyPI port (deep-sort-realtime), for comparison.

Fed the same detections and features as our tracker, with the published settings (deep_sort_app.py
and the README's MOT16 run), and reported the way deep_sort_app.py writes results: confirmed
tracks updated in this frame or the one before, at their filtered box.
"""

from __future__ import annotations

import numpy as np

from zbench.demos.tracking.deepsort import DeepSortParams, TrackOut


def available() -> bool:
    """Whether deep-sort-realtime (the published Deep SORT's port) can be imported here."""
    try:
        import deep_sort_realtime.deepsort_tracker  # noqa: F401
    except ImportError:
        return False
    return True


class ReferenceDeepSort:
    """``update(tlwh, scores, features)`` like `DeepSortTracker`, computed by deep-sort-realtime."""

    def __init__(self, params: DeepSortParams | None = None) -> None:
        from deep_sort_realtime.deepsort_tracker import DeepSort

        self.params = p = params or DeepSortParams()
        self.tracker = DeepSort(
            max_iou_distance=p.max_iou_distance,
            max_age=p.max_age,
            n_init=p.n_init,
            nms_max_overlap=1.0,
            max_cosine_distance=p.max_cosine_distance,
            nn_budget=p.nn_budget,
            embedder=None,
        )

    def update(self, tlwh: np.ndarray, scores: np.ndarray, features: np.ndarray) -> list[TrackOut]:
        tlwh = np.asarray(tlwh, np.float64).reshape(-1, 4)
        scores = np.asarray(scores, np.float64).reshape(-1)
        keep = scores >= self.params.min_confidence  # deep_sort_app.py's min_confidence
        raw = [
            (list(map(float, b)), float(s), "person")
            for b, s in zip(tlwh[keep], scores[keep], strict=True)
        ]
        embeds = [np.asarray(f, np.float32) for f in np.asarray(features)[keep]]
        tracks = self.tracker.update_tracks(raw, embeds=embeds)
        return [
            TrackOut(int(t.track_id), tuple(float(v) for v in t.to_ltwh()))  # type: ignore[arg-type]
            for t in tracks
            if t.is_confirmed() and t.time_since_update <= 1
        ]
