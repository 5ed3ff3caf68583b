"""Deep SORT update speed, the current tracker against its frozen pre-speed-up copy, side by side.

    python benchmarks/tracker_speed.py --out tracker_speed.json            # 50 targets, 300 frames
    python benchmarks/tracker_speed.py --runs 3 --frames 60 --out /tmp/s.json   # quick

The detections and features are benchmarks/tracking.py's tracker-alone sequence (jittered truth of
generated scenes with misses and false alarms, 128-d features around each figure's look). Each run
feeds the whole sequence to a fresh tracker of one implementation, then of the other (which goes
first alternates), as benchmarks/tracking.py times a tracker alone; the table gives the median
frames/s of each and the median of the runs' speed-ups, each run's pair timed back to back so that
a loaded host slows both alike. Every run also checks that both report the same identities in
every frame (the frozen copy carries the later corrections that make both assign
deep-sort-realtime's identities, so the two still compare frame by frame). ``--interleave`` feeds
both trackers frame by frame in turn instead: each then finds the caches holding the other's data,
as a tracker between detector and embedder calls would.
``--cpu-clock`` counts the thread's CPU time instead of wall time, for a host busy with other work.
CPU only; it needs scipy and (for the scene generator) torch.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.args import OneLineParser  # noqa: E402

try:
    import scipy  # noqa: F401
except ImportError:
    print("tracker_speed.py: missing package: scipy", file=sys.stderr)
    sys.exit(2)

import numpy as np  # noqa: E402

from zbench.demos.tracking.deepsort import DeepSortTracker  # noqa: E402
from zbench.demos.tracking.pipeline import noisy_truth  # noqa: E402
from zbench.demos.tracking.scene import Scene, SceneConfig  # noqa: E402

FROZEN = REPO / "tests" / "demos" / "tracking" / "deepsort_before.py"


def frozen_tracker() -> type:
    """The tracker as it was before the speed-up, kept with the tests that compare against it."""
    spec = importlib.util.spec_from_file_location("deepsort_before", FROZEN)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {FROZEN}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.DeepSortBefore


def sequence(targets: int, frames: int, seed: int = 123) -> list:
    """benchmarks/tracking.py's tracker-alone input: boxes, scores, features per frame."""
    cfg = SceneConfig(targets=targets, frames=frames, seed=seed)
    scene, rng, frng = Scene(cfg), np.random.default_rng(0), np.random.default_rng(1)
    base = frng.normal(size=(100_000, 128))
    seq = []
    for _ in range(cfg.frames):
        _, truth = scene.next(draw=False)
        b, s, ids = noisy_truth(truth, rng, cfg.width, cfg.height)
        feat = np.where(
            ids[:, None] >= 0,
            base[np.maximum(ids, 0) % len(base)],
            frng.normal(size=(len(ids), 128)),
        )
        seq.append((b, s, feat + 0.3 * frng.normal(size=feat.shape)))
    return seq


def run_once(
    makers: dict, seq: list, flip: bool, interleave: bool, clock=time.perf_counter
) -> tuple[dict, bool]:
    """Frames/s of each tracker over the sequence; whether they report the same ids."""
    trackers = {name: make() for name, make in makers.items()}
    names = list(trackers)[::-1] if flip else list(trackers)
    spent = dict.fromkeys(names, 0.0)
    ids: dict[str, list] = {name: [] for name in names}
    # One tracker after the other, or both frame by frame.
    schedule = (
        [(i, name) for i in range(len(seq)) for name in names]
        if interleave
        else [(i, name) for name in names for i in range(len(seq))]
    )
    for i, name in schedule:
        b, s, f = seq[i]
        t0 = clock()
        out = trackers[name].update(b, s, f)
        spent[name] += clock() - t0
        ids[name].append([o.track_id for o in out])
    return {name: len(seq) / spent[name] for name in names}, ids["before"] == ids["now"]


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=Path(__file__).name, description=__doc__.splitlines()[0])
    p.add_argument("--targets", type=int, default=50)
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--runs", type=int, default=7, help="timed runs of each (median reported)")
    p.add_argument("--interleave", action="store_true", help="both trackers frame by frame")
    p.add_argument(
        "--cpu-clock",
        action="store_true",
        help="count this thread's CPU time, not wall time (a host loaded by other work)",
    )
    p.add_argument("--out", type=Path, required=True, help="JSON results path")
    a = p.parse_args(argv)
    if a.targets < 1 or a.frames < 1 or a.runs < 1:
        p.error("--targets, --frames and --runs must be at least 1")
    seq = sequence(a.targets, a.frames)
    makers = {"before": frozen_tracker(), "now": DeepSortTracker}
    fps: dict[str, list[float]] = {k: [] for k in makers}
    same = True
    for r in range(a.runs):
        clock = time.thread_time if a.cpu_clock else time.perf_counter
        got, agree = run_once(makers, seq, bool(r % 2), a.interleave, clock)
        same &= agree
        for k, v in got.items():
            fps[k].append(v)
    med = {k: round(statistics.median(v), 1) for k, v in fps.items()}
    res = {
        "targets": a.targets,
        "frames": a.frames,
        "runs": a.runs,
        "interleave": a.interleave,
        "clock": "thread CPU time" if a.cpu_clock else "wall",
        "detections_per_frame": round(float(np.mean([len(x[0]) for x in seq])), 1),
        "fps_median": med,
        "fps_runs": {k: [round(x, 1) for x in v] for k, v in fps.items()},
        "speedup": round(
            statistics.median(n / b for n, b in zip(fps["now"], fps["before"], strict=True)), 2
        ),
        "same_identities": same,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=2))
    print(
        f"Deep SORT update, {a.targets} targets, {res['detections_per_frame']} detections/frame, "
        f"{a.frames} frames, median of {a.runs} runs, {res['clock']} clock"
        f"{', interleaved' if a.interleave else ''}"
    )
    print(f"{'tracker':8s} {'frames/s':>9s}  runs")
    for k in makers:
        print(f"{k:8s} {med[k]:9.1f}  {' '.join(f'{x:.0f}' for x in fps[k])}")
    print(
        f"speed-up {res['speedup']:.2f}x (median over runs)   same identities in every frame: {same}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
