"""The tracking demo's entry: train (or load) detector and embedder, track a sequence, measure, report.

`run(options, emit)` is what a demo runner calls; emit(type, **fields) sends `phase`, `progress`,
`frame` and `result` events (schema in docs/demos-tracking.md).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zbench.contract.demos import TRACKING, TRACKING_BATCH, TRACKING_GENERATED_FRAMES
from zbench.demos.options import build
from zbench.demos.progress import PhaseProgress
from zbench.demos.tracking import detector as det
from zbench.demos.tracking import mot_io, pipeline, sources, train
from zbench.demos.tracking.bytetrack import ByteTrackParams
from zbench.demos.tracking.deepsort import DeepSortParams
from zbench.demos.tracking.embedder import Embedder, ReidNet
from zbench.demos.tracking.metrics import TrackEvalMissing
from zbench.demos.tracking.preview import FramePreview
from zbench.demos.tracking.video_out import QUEUE_FRAMES, VideoThread, host_picture

Emit = Callable[..., None]
DETECTOR_FILE, EMBEDDER_FILE = "detector.pt", "embedder.pt"
# The first chunk (CUDA-graph capture of the backbone at its batch, the models' first calls) is
# timed apart from the tracking rate.
WARMUP_CHUNKS = 1
# The embedder's crops padded to a multiple of this (0: not padded; Embedder's ``pad``), so its
# network meets a few batch sizes rather than a new one per chunk. 0 until a GPU says it pays
# (benchmarks/embedder_shapes.py, and tracking_demo_calls.py --pad for the demo's own figures).
EMBEDDER_PAD = 0

# The options a job offers come from the contract's demo table (one set of defaults; `--out` and
# `--checkpoint` are `out_dir` and `checkpoint_dir` here); the rest are `run`'s own.
_JOB = TRACKING.defaults()


@dataclass
class TrackingOptions:
    """Everything `run` accepts; unknown keys are a config error."""

    input: str = _JOB["input"]  # "generated", a MOT folder, a video file, "webcam:N", a .npy file
    gt: str | None = _JOB["gt"]  # gt.txt to score against (a MOT folder's own gt/gt.txt otherwise)
    frames: int | None = _JOB["frames"]  # generated length (300), or a cap on other inputs (none)
    # frames per detector/embedder call (TRACKING_BATCH; webcam 1)
    batch: int | None = _JOB["batch"]
    width: int = 1920
    height: int = 1080
    targets: int = 50
    detector: str = "model"  # "model", "truth" (generated: jittered truth), "public" (det.txt)
    tracker: str = _JOB["tracker"]  # or "bytetrack", "fused"
    # None: ZBENCH_HOME/demos/tracking/models (smoke: .../smoke); `parse` sets it
    checkpoint_dir: str | None = _JOB["checkpoint"]
    detector_weights: str | None = None  # a state dict for build_detector's model
    embedder_weights: str | None = None  # a state dict for ReidNet
    minutes: float = _JOB["minutes"]  # budget for both models (2/3 detector); 0: checkpoints only
    steps: int | None = None  # caps each model's training steps
    resume: bool = True  # use checkpoints in checkpoint_dir when they are there
    out_dir: str | None = _JOB["out"]  # None: ZBENCH_HOME/demos/tracking/out; `parse` sets it
    video: bool = _JOB["video"]  # write an annotated video
    save_detections: bool = False  # write Deep SORT's .npy detection file of this run
    device: str = _JOB["device"]  # or "auto": the GPU when there is one
    bf16: bool = True
    seed: int = _JOB["seed"]
    smoke: bool = _JOB["smoke"]  # tiny frames and models, a few steps: the CPU test path
    max_cosine_distance: float = 0.2
    nn_budget: int = 100
    max_age: int = 30
    n_init: int = 3
    min_confidence: float = 0.3
    track_thresh: float = 0.5
    match_thresh: float = 0.8
    track_buffer: int = 30

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> TrackingOptions:
        # --smoke's frames and batch are the table's (TRACKING.smoke); the scene and steps are
        # run's own.
        o = build(cls, TRACKING.resolve(options), "tracking")
        if o.smoke:
            o.width, o.height, o.targets = 320, 192, min(o.targets, 6)
            o.steps = o.steps or 1
        if o.batch is None:
            o.batch = 1 if o.input.startswith("webcam:") else TRACKING_BATCH
        if o.batch < 1:
            raise ValueError("batch must be >= 1")
        if o.input == "generated" and o.frames is None:
            o.frames = TRACKING_GENERATED_FRAMES
        if o.tracker not in pipeline.TRACKERS:
            raise ValueError(f"unknown tracker {o.tracker!r}: use {', '.join(pipeline.TRACKERS)}")
        if o.detector not in ("model", "truth", "public"):
            raise ValueError(f"unknown detector {o.detector!r}: use model, truth or public")
        if (
            o.input != "generated"
            and not o.input.startswith("webcam:")
            and not Path(o.input).exists()
        ):
            raise FileNotFoundError(f"no such input: {o.input}")
        if o.detector == "truth" and o.input != "generated":
            raise ValueError("detector='truth' needs input='generated'")
        if o.detector == "public" and not Path(o.input).is_dir():
            raise ValueError("detector='public' needs a MOT folder with det/det.txt")
        if o.gt is not None and not Path(o.gt).is_file():
            raise FileNotFoundError(f"no such ground-truth file: {o.gt}")
        if o.width < 64 or o.height < 64 or (o.frames or 1) < 1 or o.targets < 1:
            raise ValueError("width and height must be >= 64, frames and targets >= 1")
        if not o.out_dir or not o.checkpoint_dir:
            from zbench import paths  # the data directory, never the working directory

            home = paths.home() / "demos" / "tracking"
            o.out_dir = o.out_dir or str(home / "out")
            # Smoke models are tiny: kept apart so that a real run never resumes from them.
            o.checkpoint_dir = o.checkpoint_dir or str(home / ("smoke" if o.smoke else "models"))
        return o

    def train_size(self) -> tuple[int, int]:
        return (320, 192) if self.smoke else (960, 544)


def pick_device(name: str) -> torch.device:
    """The torch device for ``--device``: ``auto`` means CUDA when available, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _weights(o: TrackingOptions, given: str | None, name: str) -> tuple[Path, Path | None]:
    """Where the model's checkpoint goes, and the weights to load: given ones, else a checkpoint
    resumed from an earlier run, else none (train)."""
    ckpt = Path(o.checkpoint_dir) / name
    if given:
        return ckpt, Path(given)
    return ckpt, ckpt if o.resume and ckpt.is_file() else None


def _train(
    o: TrackingOptions,
    emit: Emit,
    phase: str,
    share: float,
    trainer: Callable[..., list[float]],
    model: torch.nn.Module,
    batch: int,
) -> list[float]:
    """Train ``model`` with ``trainer`` on rendered scenes within ``share`` of the budget, with
    a progress bar; no budget and no checkpoint is a config error."""
    what = phase.removeprefix("train_")
    if o.minutes <= 0 and not o.steps:
        raise ValueError(f"no {what} checkpoint in {o.checkpoint_dir} and no training budget")
    emit("phase", phase=phase, detail="rendered scenes")
    budget = {"steps": o.steps, "seconds": o.minutes * 60 * share if o.minutes > 0 else None}
    progress = PhaseProgress(emit, phase, o.steps, budget["seconds"])

    def callback(st: train.TrainStatus) -> None:
        progress(st.step, loss=round(st.loss, 5))

    losses = trainer(
        model,
        **budget,
        batch=1 if o.smoke else batch,
        size=o.train_size(),
        bf16=o.bf16,
        seed=o.seed,
        callback=callback,
    )
    progress.done()
    return losses


def load_or_train_detector(o: TrackingOptions, device, emit: Emit) -> tuple[Any, dict]:
    """The detector from given or resumed weights, else trained within the budget; its source."""
    w, h = o.train_size()
    model = det.build_detector(*((h, w, 20) if o.smoke else (540, 960, 200))).to(device)
    ckpt, path = _weights(o, o.detector_weights, DETECTOR_FILE)
    if path is not None:
        det.load_detector_state(model, train.load_state(path, device)["model"])
        emit("phase", phase="setup", detail=f"detector weights {path}")
        return model, {"source": str(path)}
    losses = _train(o, emit, "train_detector", 2 / 3, train.train_detector, model, 8)
    train.save(ckpt, model, steps=len(losses))
    frames = train.held_out(2 if o.smoke else 50, o.train_size(), device, 5 if o.smoke else 40)
    ap = train.detector_ap(model, frames, o.bf16)
    emit("phase", phase="saved", detail=str(ckpt), steps=len(losses), ap50=round(ap, 4))
    return model, {"source": str(ckpt), "steps": len(losses), "ap50": ap}


def load_or_train_embedder(o: TrackingOptions, device, emit: Emit) -> tuple[Any, dict]:
    """The embedder from given or resumed weights, else trained within the budget; its source."""
    ckpt, path = _weights(o, o.embedder_weights, EMBEDDER_FILE)
    if path is not None:
        model = ReidNet().to(device)
        state = {
            k: v
            for k, v in train.load_state(path, device)["model"].items()
            if not k.startswith("classifier.")
        }
        model.load_state_dict(state)
        emit("phase", phase="setup", detail=f"embedder weights {path}")
        return model, {"source": str(path)}
    model = ReidNet(train.NUM_IDENTITIES).to(device)
    losses = _train(o, emit, "train_embedder", 1 / 3, train.train_embedder, model, 6)
    train.save(ckpt, model, steps=len(losses))
    emit("phase", phase="saved", detail=str(ckpt), steps=len(losses))
    return model, {"source": str(ckpt), "steps": len(losses)}


def run(options: Mapping[str, Any], emit: Emit) -> dict[str, Any]:
    """Train or load, track, evaluate; emits events and returns the result's fields."""
    o = TrackingOptions.parse(options)
    torch.manual_seed(o.seed)
    device = pick_device(o.device)
    emit("phase", phase="setup", device=str(device), input=o.input, tracker=o.tracker)
    npy = o.input.endswith(".npy")
    detector, embedder, models = _models(o, device, emit, npy)
    src = sources.source(o, device, emit)
    ds = DeepSortParams(
        o.max_cosine_distance, o.nn_budget, 0.7, o.max_age, o.n_init, o.min_confidence
    )
    bt = ByteTrackParams(o.track_thresh, match_thresh=o.match_thresh, track_buffer=o.track_buffer)
    pipe = pipeline.Pipeline(
        pipeline.make_tracker(o.tracker, ds, bt, src.fps),
        detector,
        embedder,
        o.detector,
        o.seed,
        save_detections={} if o.save_detections else None,
    )
    out = Path(o.out_dir)
    video = o.video and not npy
    # Frames rendered beforehand are held anyway: the video may fall behind by all of them.
    depth = 0 if src.resident else QUEUE_FRAMES
    writer = VideoThread(out / f"{src.name}.mp4", src.fps, depth) if video else None
    tracked = _track(o, src, pipe, writer, emit)
    results = mot_io.write_results(out / f"{src.name}.txt", np.array(pipe.results).reshape(-1, 6))
    result: dict[str, Any] = {
        "demo": "tracking",
        "sequence": src.name,
        "tracker": o.tracker,
        "detector": o.detector if not npy else "file",
        "device": str(device),
        "frames": tracked.frames,
        "batch": o.batch,
        # After the warm-up chunk; stage rates overlap (pipeline.StageTimes says how each is timed).
        "fps": pipe.times.fps(),
        "timed_frames": pipe.times.frames,
        "warmup_frames": pipe.times.warmup_frames,
        "warmup_s": round(pipe.times.warmup, 3),
        # The video's own thread: its rate, the seconds the tracking waited on its full queue
        # (counted in end to end), and those it took to finish after the last frame was tracked.
        "output_fps": writer.fps if writer is not None else None,
        "video_wait_s": round(writer.waited_s, 3) if writer is not None else None,
        "video_tail_s": round(writer.tail_s, 3) if writer is not None else None,
        "wall_s": round(tracked.wall_s, 3),  # the tracking call: warm-up and video writing included
        "render_s": src.render_s,
        "detections_per_frame": round(pipe.times.detections / max(pipe.times.frames, 1), 1),
        "tracks": len(pipe.ids),
        "results": str(results),
        "video": str(tracked.video) if tracked.video else None,
        "models": models,
        "stopped": tracked.stopped,
    }
    if isinstance(detector, det.Detector):  # a setting that changes speed is recorded
        result["detector_cuda_graphs"] = detector.graphed
        if detector.graph_error:
            result["detector_graph_error"] = detector.graph_error
    if o.save_detections and pipe.save_detections is not None:
        result["detections_file"] = str(
            mot_io.write_deepsort_npy(out / f"{src.name}.npy", pipe.save_detections)
        )
    if tracked.gt_rows:
        emit("phase", phase="evaluate")
        try:
            result["metrics"] = _evaluate(o, tracked.gt_rows, pipe.results)
        except TrackEvalMissing as exc:  # the speeds measured stand; the note says how to score
            result["metrics_note"] = f"not scored: {exc}"
    emit("result", **result)
    return result


def _models(
    o: TrackingOptions, device: torch.device, emit: Emit, npy: bool
) -> tuple[det.Detector | None, Embedder | None, dict[str, Any]]:
    """The detector (unless detections come from a file or the truth) and the embedder (unless a
    .npy file carries the features), each trained or loaded; what each was, for the result."""
    info: dict[str, Any] = {}
    detector = embedder = None
    if o.detector == "model" and not npy:
        model, info["detector"] = load_or_train_detector(o, device, emit)
        detector = det.Detector(model, o.bf16)
    if not npy:
        emb, info["embedder"] = load_or_train_embedder(o, device, emit)
        embedder = Embedder(emb, o.bf16, pad=EMBEDDER_PAD)
    return detector, embedder, info


@dataclass
class _Tracked:
    """What the tracking loop leaves: frames tracked, ground-truth rows met, whether it was
    stopped, its wall time and the annotated video."""

    frames: int = 0
    gt_rows: list[np.ndarray] = field(default_factory=list)
    stopped: bool = False
    wall_s: float = 0.0
    video: Path | None = None


def _track(
    o: TrackingOptions,
    src: sources.Source,
    pipe: pipeline.Pipeline,
    writer: VideoThread | None,
    emit: Emit,
) -> _Tracked:
    """Track every frame of ``src``, drawing the preview and queueing the video as it goes; the
    device detects and embeds the next chunk while the host tracks and a third thread writes."""
    emit("phase", phase="track", sequence=src.name)
    total = src.total
    preview = FramePreview(emit)
    progress = PhaseProgress(emit, "track", total, live=lambda: live_rates(pipe.times))
    tracked = _Tracked()
    last: list[tuple[sources.Frame, list]] = []

    def show(frame: sources.Frame, tracks: list) -> None:
        tracked.frames += 1
        if frame.gt is not None:
            tracked.gt_rows.append(frame.gt)
        if writer is not None and frame.image is not None:
            writer.put(frame.image, tracks)
        if preview.due():
            rgb = host_picture(frame.image) if frame.image is not None else None
            preview(frame.index, total, rgb, tracks, pipe.times)
        progress(tracked.frames)
        last[:] = [(frame, tracks)]

    t0 = time.perf_counter()
    try:  # the times add up over blocks; a block rendered between two is not in them
        for n, block in enumerate(src.blocks()):
            pipe.run_batched(block, o.batch or 1, WARMUP_CHUNKS if n == 0 else 0, show)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: a webcam runs until stopped; keep its tracks
        tracked.stopped = True
    except BaseException:
        if writer is not None:
            with contextlib.suppress(Exception):  # the tracking's failure is the one to report
                writer.close()
        raise
    if last:
        progress.done()  # the track phase ends here; the video may still be writing
    if writer is not None:
        if left := writer.frames.qsize():
            emit("phase", phase="video", detail=f"{left} frames left to write")
        tracked.video = writer.close()
    tracked.wall_s = time.perf_counter() - t0
    if not last:
        raise ValueError(f"no frames in {o.input}")
    frame, tracks = last[0]
    img = host_picture(frame.image) if frame.image is not None else None
    preview(frame.index, total, img, tracks, pipe.times, final=True)
    return tracked


def live_rates(times: pipeline.StageTimes) -> dict[str, Any]:
    """What a ``track`` progress event adds: ``fps``, the result's figures so far (each stage's
    and end to end, frames tracked over the wall time since the warm-up); while the warm-up chunks
    are tracked, timed apart as in the result, no figures yet and ``warmup``."""
    if times.timed:
        return {"fps": times.fps()}
    return {"fps": dict.fromkeys(times.fps()), "warmup": True}


def _evaluate(o: TrackingOptions, gt_rows: list[np.ndarray], results: list) -> dict[str, Any]:
    """TrackEval's metrics of the tracks against the ground truth the frames carried."""
    from zbench.demos.tracking import metrics

    # Rendered figures under 10 % visible are ignored; MOTChallenge ground truth is taken as
    # TrackEval takes it (no visibility threshold).
    min_vis = 0.1 if o.input == "generated" else 0.0
    rows = np.array(results).reshape(-1, 6)
    return metrics.evaluate(np.concatenate(gt_rows), rows, min_vis)
