"""The motion demo's entry: train (or load), animate a source with a driving clip, measure, report.

`run(options, emit)` is what a demo runner calls; emit(type, **fields) sends `phase`, `progress`,
`frame` and `result` events (schema in docs/demos-motion.md).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zbench.contract.demos import MOTION, MOTION_SCRIPT_FRAMES
from zbench.demos.motion import evaluate, job, live, renderer, train, video
from zbench.demos.motion.infer import Animator
from zbench.demos.motion.model import MotionConfig, MotionModel
from zbench.demos.motion.preview import downscale
from zbench.demos.options import build
from zbench.demos.progress import PhaseProgress

Emit = Callable[..., None]
PREVIEW_PX = 48
SMOKE_CONFIG = MotionConfig(
    num_kp=5,
    kp_expansion=8,
    kp_max=32,
    kp_blocks=3,
    dm_expansion=8,
    dm_max=32,
    dm_blocks=3,
    gen_expansion=8,
    gen_max=32,
    gen_res=2,
)


# The options a job offers come from the contract's demo table (one set of defaults); the rest
# are `run`'s own (a direct call, docs/demos-motion.md).
_JOB = MOTION.defaults()


@dataclass
class MotionOptions:
    """Everything `run` accepts; unknown keys are a config error."""

    checkpoint_dir: str | None = _JOB["checkpoint"]  # None: job.default_folder; `parse` sets it
    minutes: float = _JOB["minutes"]  # training budget; 0 skips training (needs a checkpoint)
    steps: int | None = None  # caps training steps too
    resume: bool = True  # continue from checkpoint_dir when one is there
    data: str | None = None  # folder of the user's videos (else rendered heads)
    size: int = _JOB["size"]
    batch: int = 16
    drive: str = _JOB["drive"]  # "scripted", a video file or image folder, or "webcam:N"
    source: str | None = None  # an image file; default: a rendered head
    frames: int | None = _JOB[
        "frames"
    ]  # scripted: 150; a video: all of it; a webcam: until stopped
    out: str | None = None  # side-by-side video, .mp4 or .gif (None: job.video_path; `parse`)
    device: str = _JOB["device"]  # or "auto": the GPU when there is one
    bf16: bool = True
    compile: bool = _JOB["compile"]
    seed: int = _JOB["seed"]
    smoke: bool = _JOB["smoke"]  # tiny model, 64x64, a few steps: the CPU test path

    @classmethod
    def parse(cls, options: Mapping[str, Any]) -> MotionOptions:
        # --smoke's size and frames are the table's (MOTION.smoke); batch and steps are run's own.
        opts = build(cls, MOTION.resolve(options), "motion")
        if opts.smoke:
            opts.batch, opts.steps = 4, opts.steps or 6
        if opts.size % 32 or opts.size < 64:
            raise ValueError(f"size must be a multiple of 32 and at least 64, got {opts.size}")
        if opts.checkpoint_dir is None:
            from zbench import paths  # the data directory, as a job's

            opts.checkpoint_dir = str(job.default_folder(paths.home(), opts.smoke))
        opts.out = opts.out or str(job.video_path(Path(opts.checkpoint_dir)))
        return opts


def pick_device(name: str) -> torch.device:
    """The torch device for ``--device``: ``auto`` means CUDA when available, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class FrameThrottle:
    """Sends `frame` events at most `rate` per second, panels downscaled to PREVIEW_PX wide."""

    def __init__(self, emit: Emit, rate: float = 4.0) -> None:
        self.emit, self.period, self.last = emit, 1.0 / rate, 0.0

    def __call__(self, stage: str, step: int, panels: dict[str, np.ndarray], force: bool = False):
        now = time.monotonic()
        if not force and now - self.last < self.period:
            return
        self.last = now
        small = {k: downscale(v, PREVIEW_PX) for k, v in panels.items()}
        h, w = next(iter(small.values())).shape[:2]
        payload = {k: v.reshape(-1).tolist() for k, v in small.items()}
        self.emit("frame", demo="motion", stage=stage, step=step, width=w, height=h, panels=payload)


def _u8(img: torch.Tensor) -> np.ndarray:
    """(3, H, W) float [0, 1] -> (H, W, 3) uint8 numpy."""
    return (img.detach().float().clamp(0, 1) * 255 + 0.5).byte().permute(1, 2, 0).cpu().numpy()


def _model(opts: MotionOptions, device: torch.device, emit: Emit):
    ckpt = Path(opts.checkpoint_dir)
    if opts.resume and (ckpt / train.CHECKPOINT).exists():
        model, state = train.load(ckpt, device)
        training = opts.minutes > 0 or bool(opts.steps)
        if model.cfg == SMOKE_CONFIG and training and not opts.smoke:
            # A --smoke run's tiny model (earlier versions kept them beside the real ones):
            # a real training run starts afresh rather than go on training it at full size.
            emit(
                "phase",
                phase="setup",
                detail=f"not resuming {ckpt / train.CHECKPOINT}: a --smoke run's tiny model",
            )
        else:
            emit(
                "phase",
                phase="setup",
                detail=f"loaded {ckpt / train.CHECKPOINT} (step {state['step']})",
            )
            return model, state
    if opts.minutes <= 0 and not opts.steps:
        raise ValueError(f"no checkpoint in {ckpt} and no training budget (minutes=0)")
    cfg = SMOKE_CONFIG if opts.smoke else MotionConfig()
    return MotionModel(cfg).to(device), {"step": 0}


def _train(model, state, opts: MotionOptions, device, emit: Emit, frames: FrameThrottle):
    if opts.minutes <= 0 and not opts.steps:
        return int(state["step"])
    emit("phase", phase="train", detail="rendered heads" if not opts.data else opts.data)
    pairs: train.RenderedPairs | train.VideoPairs
    if opts.data:
        pairs = train.VideoPairs(Path(opts.data), opts.size, opts.batch, device, opts.seed)
    else:
        pairs = train.RenderedPairs(
            opts.size,
            opts.batch,
            device,
            opts.seed + int(state["step"]),
            near=train.recipe_near(train.DEFAULT_RECIPE),
        )
    opt = train.make_optimizer(model)
    if "optimizer" in state:
        opt.load_state_dict(state["optimizer"])
    base = int(state["step"])
    seconds = opts.minutes * 60 if opts.minutes > 0 else None
    # Steps of this run (the checkpoint's earlier steps are not this phase's work).
    progress = PhaseProgress(emit, "train", opts.steps, seconds)

    def on_step(st: train.TrainStatus) -> None:
        progress(
            st.step,
            loss=round(st.losses["total"], 5),
            first_step=base,
            losses={k: round(v, 5) for k, v in st.losses.items()},
        )
        if st.sample:
            panels = {k: _u8(v) for k, v in st.sample.items()}
            frames("train", base + st.step, panels)

    opt, history = train.train(
        model,
        pairs,
        steps=opts.steps,
        seconds=seconds,
        bf16=opts.bf16,
        optimizer=opt,
        callback=on_step,
        seed=opts.seed + base,
        losses=train.recipe_losses(train.DEFAULT_RECIPE, opts.size, device),
    )
    progress.done()
    step = base + (int(history[-1]["step"]) if history else 0)
    path = train.save(model, Path(opts.checkpoint_dir), opt, step)
    emit("phase", phase="saved", detail=str(path), step=step)
    return step


def _source_image(opts: MotionOptions, ident, device) -> np.ndarray:
    if opts.source:
        return video.read_video(opts.source, opts.size, limit=1)[0]
    first = {k: v[:1] for k, v in ident.items()}
    return _u8(renderer.render(first, renderer.neutral_pose(1), opts.size, device).images[0])


def _driving(opts: MotionOptions, device) -> tuple[np.ndarray, Iterator[np.ndarray], int | None]:
    """Source (H, W, 3) uint8, the driving frames (H, W, 3) uint8 as they come, and how many
    (None: a webcam, until stopped). A video is read as it plays, never whole."""
    g = torch.Generator().manual_seed(opts.seed + 424242)
    ident = renderer.sample_identity(g, 2)
    src = _source_image(opts, ident, device)
    if opts.drive == "scripted":
        n = opts.frames or MOTION_SCRIPT_FRAMES
        drv_ident = {k: v[1:].expand(n) for k, v in ident.items()}
        imgs = renderer.render(drv_ident, renderer.scripted_poses(n), opts.size, device).images
        return src, (_u8(i) for i in imgs), n
    if opts.drive.startswith("webcam:"):
        cam = int(opts.drive.split(":", 1)[1])
        return src, video.iter_frames(cam, opts.size, opts.frames), opts.frames
    path = Path(opts.drive)
    if not path.exists():
        raise FileNotFoundError(f"no such drive: {opts.drive}")
    if path.is_dir():
        n: int | None = sum(1 for p in path.iterdir() if p.suffix.lower() in video.IMAGE_SUFFIXES)
    else:
        from zbench.demos.video import video_length

        n = video_length(path)
    if n is not None and opts.frames is not None:
        n = min(n, opts.frames)
    return src, video.iter_frames(path, opts.size, opts.frames), n


def live_rates(timer: live.LoopTimer) -> dict[str, Any]:
    """What an ``animate`` progress event adds: ``stream_fps``, frames generated (animated and
    written) per second so far by the loop's own clock, the result's figure of the same name once
    the loop has ended (None before its first frame is out)."""
    fps = timer.fps()
    return {"stream_fps": round(fps, 1) if fps is not None else None}


def run(options: Mapping[str, Any], emit: Emit) -> dict[str, Any]:
    """Train or load, animate, evaluate; emits events and returns the result's fields."""
    opts = MotionOptions.parse(options)
    torch.manual_seed(opts.seed)
    device = pick_device(opts.device)
    emit("phase", phase="setup", device=str(device), size=opts.size)
    frames = FrameThrottle(emit)
    model, state = _model(opts, device, emit)
    trained = _train(model, state, opts, device, emit, frames)
    model.eval()

    emit("phase", phase="animate", drive=opts.drive)
    src, drv, total = _driving(opts, device)
    compiled = opts.compile and device.type == "cuda"  # inductor on a CPU: minutes, little gain
    anim = Animator(model, bf16=opts.bf16, compile=compiled)
    anim.set_source(torch.from_numpy(src).to(device))
    first = next(drv, None)
    if first is None:
        raise ValueError(f"no driving frames in {opts.drive}")
    # The first call compiles (torch.compile on a GPU: about 25 s) and warms up: timed apart, so
    # the loop's frames/s is what the user sees from then on. It also sets the reference frame.
    t0 = time.perf_counter()
    anim(torch.from_numpy(first)[None].to(device)).cpu()
    first_call_s = time.perf_counter() - t0
    timer = live.LoopTimer()
    progress = PhaseProgress(emit, "animate", total, live=lambda: live_rates(timer))

    def show(i: int, d: np.ndarray, out: np.ndarray, last: bool) -> None:
        frames("animate", i, {"source": src, "driving": d, "result": out}, force=last)
        progress(i + 1)

    loop = live.run_live(
        anim,
        src,
        itertools.chain([first], drv),
        device,
        live.VideoSink(Path(opts.out)),
        show,
        timer=timer,
    )
    progress.done()  # the loop has ended: its rate is the result's stream_fps
    if not loop.frames:
        raise ValueError(f"no driving frames in {opts.drive}")
    emit("phase", phase="evaluate")
    progress = PhaseProgress(emit, "evaluate", 2)  # quality, then speed
    progress(0, force=True)
    clips, lms, masks = evaluate.held_out_clips(
        4 if opts.smoke else 16, 8 if opts.smoke else 16, opts.size, device
    )
    quality = evaluate.quality(model, clips, lms, masks, opts.bf16)
    progress(1, force=True)
    fps = evaluate.measure_fps(
        model,
        opts.size,
        frames=20 if opts.smoke else 300,
        warmup=3 if opts.smoke else 20,
        bf16=opts.bf16,
        compile=compiled,
    )
    progress.done()
    result = {
        "demo": "motion",
        "fps": round(fps["fps"], 1),
        "stream_fps": round(loop.fps, 1),  # decoded frame in to written frame out (`timer`)
        "frames": loop.frames,
        "stopped": loop.stopped,
        "first_call_s": round(first_call_s, 3),  # a smoke run on a CPU: milliseconds
        "size": opts.size,
        "device": str(device),
        "quality": quality,
        "video": str(loop.video) if loop.video else None,
        "checkpoint": opts.checkpoint_dir,
        "train_steps": trained,
        "recipe": train.DEFAULT_RECIPE,
        "compiled": compiled,
    }
    emit("result", **result)
    return result
