"""Tracking demo on one GPU: train, detector AP, end-to-end and tracker FPS, association quality.

    python benchmarks/tracking.py --minutes 3 --out tracking.json --out-dir tracking-out
    python benchmarks/tracking.py --smoke --out /tmp/t.json --out-dir /tmp/t   # CPU, tiny

1. Train the detector (2/3 of --minutes) and the re-id embedder (1/3) on rendered scenes; AP@0.5
   on held-out 1080p frames (figures under 30 % visible ignored).
2. End to end on 1080p frames with --targets figures, pre-rendered on the device (so the renderer
   is not timed): detector, embedder, tracker and the whole chain, bf16; stages in turn, overlapped
   with a tracker thread, and in chunks of 4 and 8 frames (`Pipeline.run_batched`), each with its
   HOTA/MOTA/IDF1. `--skip-association` leaves out step 4 (speed only).
3. Tracker alone on the CPU at --targets figures, identical jittered-truth detections and features:
   our Deep SORT, our ByteTrack, deep-sort-realtime (the published algorithm's maintained port).
4. Association quality on --sequences generated sequences, identical detections (jittered truth with
   misses and false alarms) and identical features (our embedder on the frames): HOTA, MOTA, IDF1
   of our Deep SORT vs deep-sort-realtime at the published defaults, and ByteTrack.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MISSING = []
for _mod, _wheel in (("scipy", "scipy"), ("trackeval", "trackeval (pip install --no-deps)")):
    try:
        __import__(_mod)
    except ImportError:
        MISSING.append(_wheel)
if MISSING:
    print(f"missing packages: {', '.join(MISSING)}", file=sys.stderr)
    sys.exit(2)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from zbench.demos.tracking import detector as det  # noqa: E402
from zbench.demos.tracking import metrics, mot_io, pipeline, reference, sources, train  # noqa: E402
from zbench.demos.tracking.bytetrack import ByteTracker, ByteTrackParams  # noqa: E402
from zbench.demos.tracking.deepsort import DeepSortParams, DeepSortTracker  # noqa: E402
from zbench.demos.tracking.embedder import Embedder, ReidNet  # noqa: E402
from zbench.demos.tracking.fused import FusedTracker  # noqa: E402
from zbench.demos.tracking.scene import Scene, SceneConfig  # noqa: E402


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=3.0, help="training budget (default 3)")
    p.add_argument("--targets", type=int, default=50)
    p.add_argument("--frames", type=int, default=300, help="frames of the speed sequence")
    p.add_argument("--sequences", type=int, default=3, help="association-quality sequences")
    p.add_argument("--seq-frames", type=int, default=150)
    p.add_argument(
        "--checkpoint-dir", type=Path, help="load detector.pt/embedder.pt, skip training"
    )
    p.add_argument(
        "--skip-association",
        action="store_true",
        help="speed only: skip the association-quality sequences (step 4)",
    )
    p.add_argument("--smoke", action="store_true", help="tiny frames and models (CPU test)")
    p.add_argument("--out", type=Path, required=True, help="JSON results path")
    p.add_argument("--out-dir", type=Path, required=True, help="checkpoints and result files")
    a = p.parse_args(argv)
    if a.smoke:
        a.targets, a.frames, a.sequences, a.seq_frames = 6, 8, 1, 12
    return a


def log(msg: str) -> None:
    print(msg, flush=True)


def models(a, device, size):
    if a.checkpoint_dir:
        dmodel = det.build_detector().to(device)
        det.load_detector_state(
            dmodel, train.load_state(a.checkpoint_dir / "detector.pt", device)["model"]
        )
        emodel = ReidNet().to(device)
        state = train.load_state(a.checkpoint_dir / "embedder.pt", device)["model"]
        emodel.load_state_dict({k: v for k, v in state.items() if not k.startswith("classifier.")})
        return dmodel, emodel, {"loaded": str(a.checkpoint_dir)}
    steps = 1 if a.smoke else None
    secs = None if a.smoke else a.minutes * 60
    dmodel = det.build_detector(*((size[1], size[0], 20) if a.smoke else (540, 960, 200))).to(
        device
    )
    t0 = time.monotonic()
    dl = train.train_detector(
        dmodel,
        steps=steps,
        seconds=secs and secs * 2 / 3,
        batch=1 if a.smoke else 8,
        size=size,
        callback=lambda s: s.step % 100 or log(f"  detector step {s.step} loss {s.loss:.3f}"),
    )
    t1 = time.monotonic()
    emodel = ReidNet(train.NUM_IDENTITIES).to(device)
    el = train.train_embedder(
        emodel,
        steps=steps,
        seconds=secs and secs / 3,
        batch=1 if a.smoke else 6,
        size=size,
        callback=lambda s: s.step % 200 or log(f"  embedder step {s.step} loss {s.loss:.3f}"),
    )
    t2 = time.monotonic()
    train.save(a.out_dir / "detector.pt", dmodel, steps=len(dl))
    train.save(a.out_dir / "embedder.pt", emodel, steps=len(el))
    info = {
        "detector_steps": len(dl),
        "detector_s": round(t1 - t0, 1),
        "detector_loss": round(float(np.mean(dl[-20:])), 4),
        "embedder_steps": len(el),
        "embedder_s": round(t2 - t1, 1),
        "embedder_loss": round(float(np.nanmean(el[-20:])), 4),
    }
    return dmodel, emodel, info


# End-to-end modes: (name, CUDA graph for the backbone, frames per chunk (None: stages in turn),
# Python's thread switch interval in the chunked runs (None: what the demo uses,
# pipeline.switch_interval_for the batch; the others show what the GIL hand-over costs)).
MODES = (
    ("eager", False, None, None),
    ("serial", True, None, None),
    ("overlapped", True, 1, None),
    ("overlapped_switch5ms", True, 1, pipeline.PYTHON_SWITCH_INTERVAL_S),
    ("batch4", True, 4, None),
    ("batch8", True, 8, None),
    ("batch8_switch01ms", True, 8, pipeline.SWITCH_INTERVAL_S),
)


def warm_shapes(dmodel, emodel, frames) -> float:
    """One untimed pass over ``frames`` for each detector kind and chunk size the modes use, so
    that every mode and tracker finds the same per-shape state: the first call at a crop count
    builds the embedder's convolution plans (a chunk's crop count is new in nearly every chunk;
    the tracking demo's embedder read 270-396 frames/s in a process's first call, 1,155-1,334 in
    its second, docs/demos-tracking.md), which favoured whichever mode or tracker ran later on
    the same frames. Returns the seconds it took."""
    t0 = time.perf_counter()
    for graphs, batch in sorted({(g, b or 1) for _, g, b, _ in MODES}):
        tracker = pipeline.make_tracker("deepsort", DeepSortParams(), ByteTrackParams())
        pipe = pipeline.Pipeline(tracker, det.Detector(dmodel, graphs=graphs), Embedder(emodel))
        if batch == 1:
            for f in frames:
                pipe.step(f)
        else:
            pipe.run_batched(frames, batch)
    return round(time.perf_counter() - t0, 2)


def end_to_end(a, device, dmodel, emodel, tracker_name: str, frames) -> dict:
    """Each mode on the same frames after the same warm-up frames (same tracker state): stages in
    turn with the eager detector, then with the backbone replayed from a CUDA graph (the serial
    reference), then overlapped (tracker thread) one frame at a time and in chunks of 4 and 8.
    HOTA/MOTA/IDF1 per mode over the frames after the warm-up; bf16 batches may round differently
    from batch 1, so the tracks can differ slightly from the serial ones."""
    warm = 4 if a.smoke else 24  # whole chunks of 4 and 8
    gt = np.concatenate([f.gt for f in frames[warm:]])
    out: dict = {"warmup_frames": warm, "modes": {}}
    rows: dict[str, np.ndarray] = {}
    for mode, graphs, batch, switch in MODES:
        tracker = pipeline.make_tracker(tracker_name, DeepSortParams(), ByteTrackParams())
        detector = det.Detector(dmodel, graphs=graphs)
        pipe = pipeline.Pipeline(tracker, detector, Embedder(emodel), "model")
        r: dict = {}
        if batch is None:
            for f in frames[:warm]:
                pipe.step(f)
            pipe.times = pipeline.StageTimes()
            for f in frames[warm:]:
                pipe.step(f)
        else:
            pipe.run_batched(frames, batch, warm // batch, switch_interval=switch)
            r["warmup_s"] = round(pipe.times.warmup, 3)
        res = np.array(pipe.results).reshape(-1, 6)
        rows[mode] = res[res[:, 0] > warm]
        r["fps"] = pipe.times.fps()
        r["detections_per_frame"] = round(pipe.times.detections / max(pipe.times.frames, 1), 1)
        r["metrics"] = metrics.evaluate(gt, rows[mode])
        if mode == "serial":
            out["detector_cuda_graphs"] = detector.graphed
            out["detector_graph_error"] = detector.graph_error
        out["modes"][mode] = r
    for mode, r in out["modes"].items():
        r["same_tracks_as_serial"] = bool(np.array_equal(rows[mode], rows["serial"]))
    return out


def tracker_alone(a, targets: int) -> dict:
    cfg = SceneConfig(targets=targets, frames=a.frames, seed=123)
    scene, rng, frng = Scene(cfg), np.random.default_rng(0), np.random.default_rng(1)
    base = frng.normal(size=(100_000, 128))
    seq = []
    for _ in range(cfg.frames):
        _, truth = scene.next(draw=False)
        b, s, ids = pipeline.noisy_truth(truth, rng, cfg.width, cfg.height)
        feat = np.where(
            ids[:, None] >= 0,
            base[np.maximum(ids, 0) % len(base)],
            frng.normal(size=(len(ids), 128)),
        )
        seq.append((b, s, feat + 0.3 * frng.normal(size=feat.shape)))
    out = {
        "targets": targets,
        "detections_per_frame": round(float(np.mean([len(x[0]) for x in seq])), 1),
    }
    makers = {"deepsort": DeepSortTracker, "bytetrack": ByteTracker, "fused": FusedTracker}
    if reference.available():
        makers["deep_sort_realtime"] = reference.ReferenceDeepSort  # type: ignore[assignment]
    for name, make in makers.items():
        tk = make()
        n = len(seq) if name != "deep_sort_realtime" else min(len(seq), 100)
        t0 = time.perf_counter()
        for b, s, f in seq[:n]:
            tk.update(b, s, f)
        out[name] = round(n / (time.perf_counter() - t0), 1)
    if not reference.available():
        out["deep_sort_realtime"] = "not installed"
    return out


def association(a, device, emodel) -> dict:
    """Identical detections and features for every tracker, several sequences, TrackEval combined."""
    emb = Embedder(emodel)
    w, h = (320, 192) if a.smoke else (1920, 1080)
    trackers = {"deepsort": DeepSortTracker, "bytetrack": ByteTracker, "fused": FusedTracker}
    if reference.available():
        trackers["deep_sort_realtime"] = reference.ReferenceDeepSort  # type: ignore[assignment]
    per: dict[str, list] = {k: [] for k in trackers}
    ident = []
    for s in range(a.sequences):
        cfg = SceneConfig(w, h, a.targets, a.seq_frames, seed=1000 + s)
        rng = np.random.default_rng(s)
        inputs, gt = [], []
        for t, (img, truth) in enumerate(Scene(cfg, device), start=1):
            b, sc, _ = pipeline.noisy_truth(truth, rng, w, h)
            tlbr = torch.as_tensor(b, dtype=torch.float32, device=device)
            tlbr[:, 2:] += tlbr[:, :2]
            inputs.append((b, sc, emb(img, tlbr).float().cpu().numpy()))
            gt += mot_io.truth_rows(t, truth)
        mot_io.write_deepsort_npy(
            a.out_dir / f"bench-{s}.npy", {i + 1: x for i, x in enumerate(inputs)}
        )
        rows_by = {}
        for name, make in trackers.items():
            tk, rows = make(), []
            for t, (b, sc, f) in enumerate(inputs, start=1):
                rows += [[t, o.track_id, *o.tlwh] for o in tk.update(b, sc, f)]
            rows_by[name] = np.array(rows).reshape(-1, 6)
            mot_io.write_results(a.out_dir / f"bench-{s}-{name}.txt", rows_by[name])
            per[name].append(metrics.evaluate_raw(metrics.build_data(np.array(gt), rows_by[name])))
        if "deep_sort_realtime" in rows_by:
            x, y = rows_by["deepsort"], rows_by["deep_sort_realtime"]
            ident.append(bool(x.shape == y.shape and np.array_equal(x[:, :2], y[:, :2])))
    out = {name: metrics.combine(v) for name, v in per.items()}
    if ident:
        out["same_identities_as_reference"] = all(ident)
    else:
        out["deep_sort_realtime"] = "not installed"
    return out


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() and not a.smoke else "cpu")
    # cudnn.benchmark stays off: the embedder's batch (crops per frame) changes every frame.
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    size = (320, 192) if a.smoke else (960, 544)
    res: dict = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
    }
    log(f"[1/4] training on {res['device']} ({a.minutes} min budget)")
    dmodel, emodel, res["training"] = models(a, device, size)
    test = (size[0], size[1]) if a.smoke else (1920, 1080)
    held = train.held_out(3 if a.smoke else 50, test, device, a.targets)
    res["detector_ap50_1080p"] = round(train.detector_ap(dmodel, held), 4)
    log(f"  detector AP@0.5 on held-out frames: {res['detector_ap50_1080p']:.3f}")

    log(f"[2/4] end to end, {test[0]}x{test[1]}, {a.targets} targets, {a.frames} frames")
    t0 = time.perf_counter()
    frames = list(
        sources.generated(SceneConfig(test[0], test[1], a.targets, a.frames, seed=77), device)
    )
    res["render_fps"] = round(len(frames) / (time.perf_counter() - t0), 1)
    log("  an untimed pass per detector kind and chunk size first (per-shape plans)")
    res["shape_warmup_s"] = warm_shapes(dmodel, emodel, frames)
    res["end_to_end"] = {
        name: end_to_end(a, device, dmodel, emodel, name, frames)
        for name in ("deepsort", "bytetrack", "fused")
    }
    del frames
    log(f"[3/4] tracker alone on the CPU, {a.targets} targets")
    res["tracker_alone"] = tracker_alone(a, a.targets)
    if a.skip_association:
        log("[4/4] association quality: skipped (--skip-association)")
    else:
        log(f"[4/4] association quality, {a.sequences} sequences x {a.seq_frames} frames")
        res["association"] = association(a, device, emodel)

    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(res, indent=2))
    print_table(res)
    return 0


def print_table(res: dict) -> None:
    print(
        f"\ndevice {res['device']}  detector AP@0.5 {res['detector_ap50_1080p']:.3f}  training {res['training']}"
    )
    for name, r in res["end_to_end"].items():
        print(
            f"e2e {name} at batch 1 and in chunks, frames/s after {r['warmup_frames']} warm-up "
            f"frames; CUDA graphs {r['detector_cuda_graphs']} "
            f"({r['detector_graph_error'] or 'no error'})"
        )
        for mode, m in r["modes"].items():
            f, q = m["fps"], m["metrics"]
            print(
                f"    {mode:14s} det {f['detector']} emb {f['embedder']} trk {f['tracker']} "
                f"end-to-end {f['end_to_end']}  HOTA {q['HOTA']:.3f} MOTA {q['MOTA']:.3f} "
                f"IDF1 {q['IDF1']:.3f}  same tracks as serial {m['same_tracks_as_serial']}"
                + (f"  warm-up {m['warmup_s']} s" if "warmup_s" in m else "")
            )
    print(f"tracker alone (CPU, frames/s): {res['tracker_alone']}")
    for name, m in res.get("association", {}).items():
        if isinstance(m, dict):
            print(
                f"assoc {name:20s} HOTA {m['HOTA']:.3f} MOTA {m['MOTA']:.3f} IDF1 {m['IDF1']:.3f} IDSW {m['IDSW']}"
            )
        else:
            print(f"assoc {name}: {m}")


if __name__ == "__main__":
    sys.exit(main())
