"""Motion transfer's live loop end to end: a video file decoded, animated, joined and written.

    python benchmarks/motion_live.py --out live.json                  # 256 px, 600 frames, GPU
    python benchmarks/motion_live.py --smoke --out /tmp/live.json     # CPU, tiny, seconds

What a user of ``--drive clip.mp4`` sees: the demo's own loop (``motion.live.run_live``: decode
thread, the animator, output thread writing the side-by-side MP4 and the live view's frames at the
demo's rate), frames/s from the first decoded frame to the last written one, after the first call
(compilation and warm-up, timed apart). Beside it, the animator alone (a uint8 frame on the device
in, one out, device synchronised each frame) and the loop without the pipeline (decode, animate,
copy back, join and write in turn), so the pipeline's gain is visible. The model is the demo's at
random initialisation: speed does not depend on the weights. The clip is written first by OpenCV
(a moving, changing picture, so the encoder and decoder do real work).
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

from zbench.demos.motion import live, video  # noqa: E402
from zbench.demos.motion.demo import SMOKE_CONFIG, FrameThrottle  # noqa: E402
from zbench.demos.motion.infer import Animator  # noqa: E402
from zbench.demos.motion.model import MotionConfig, MotionModel  # noqa: E402


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--frames", type=int, default=600)
    p.add_argument("--no-compile", action="store_true", help="eager animator only")
    p.add_argument("--smoke", action="store_true", help="tiny model, 64 px, CPU")
    p.add_argument("--out", type=Path, required=True, help="JSON results path")
    p.add_argument("--work", type=Path, default=None, help="where the clip and videos go")
    a = p.parse_args(argv)
    if a.smoke:
        a.size, a.frames, a.no_compile = 64, min(a.frames, 24), True
    return a


def make_clip(path: Path, n: int, size: int) -> Path:
    cv2 = video._cv2()
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 25.0, (size, size))
    yy, xx = np.mgrid[0:size, 0:size]
    for i in range(n):
        img = ((np.sin((xx + 3 * i) / 9.0) + np.cos((yy - 2 * i) / 7.0)) * 60 + 128).astype(
            np.uint8
        )
        writer.write(np.stack([img, img[::-1], img.T], -1))
    writer.release()
    return path


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    device = torch.device("cuda" if torch.cuda.is_available() and not a.smoke else "cpu")
    work = a.work or a.out.parent
    work.mkdir(parents=True, exist_ok=True)
    clip = make_clip(work / "drive.mp4", a.frames, a.size)
    model = MotionModel(SMOKE_CONFIG if a.smoke else MotionConfig()).to(device).eval()
    src = next(video.iter_frames(clip, a.size, 1))
    res: dict = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "size": a.size,
        "frames": a.frames,
    }
    for compiled in (False,) if a.no_compile else (False, True):
        key = "compiled" if compiled else "eager"
        anim = Animator(model, bf16=True, compile=compiled)
        anim.set_source(torch.from_numpy(src).to(device))
        first = torch.from_numpy(src)[None].to(device)
        t0 = time.perf_counter()
        anim(first)
        sync(device)
        row: dict = {"first_call_s": round(time.perf_counter() - t0, 2)}
        # The animator alone on frames already on the device.
        drv = torch.from_numpy(np.stack(list(video.iter_frames(clip, a.size, 100)))).to(device)
        for d in drv[:10]:
            anim(d[None])
        sync(device)
        t0 = time.perf_counter()
        for d in drv:
            anim(d[None])
        sync(device)
        row["animator_fps"] = round(len(drv) / (time.perf_counter() - t0), 1)
        # The loop in turn: decode, upload, animate, copy back, join, write, preview.
        throttle = FrameThrottle(lambda *_a, **_k: None)
        sink = live.VideoSink(work / f"serial-{key}.mp4")
        t0 = time.perf_counter()
        n = 0
        for i, d in enumerate(video.iter_frames(clip, a.size)):
            out = anim(torch.from_numpy(d)[None].to(device))[0].cpu().numpy()
            sink.write(video.side_by_side(src, d, out))
            throttle("animate", i, {"source": src, "driving": d, "result": out})
            n += 1
        sink.close()
        row["serial_loop_fps"] = round(n / (time.perf_counter() - t0), 1)
        # The demo's pipelined loop.
        throttle = FrameThrottle(lambda *_a, **_k: None)

        def show(i, d, out, last, throttle=throttle):
            throttle("animate", i, {"source": src, "driving": d, "result": out}, force=last)

        loop = live.run_live(
            anim,
            src,
            video.iter_frames(clip, a.size),
            device,
            live.VideoSink(work / f"live-{key}.mp4"),
            show,
        )
        row["live_fps"] = round(loop.fps, 1)
        row["live_frames"] = loop.frames
        res[key] = row
        print(
            f"{key:9s} first call {row['first_call_s']:7.2f} s  animator {row['animator_fps']:7.1f}"
            f"  loop in turn {row['serial_loop_fps']:7.1f}  live pipeline {row['live_fps']:7.1f}"
            f" frames/s ({loop.frames} frames, {a.size} px)"
        )
    a.out.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
