"""The animation loop as a pipeline: decode, animate and show/write overlap, so a live drive (a
webcam, a video file) runs at the animator's speed rather than at the sum of the three.

Three stages, each in its own thread, joined by small bounded queues (a slow stage holds the ones
before it back instead of filling memory):

- decode: driving frames (OpenCV reads and resizes in C and releases the GIL), copied into pinned
  host memory so the upload to the GPU is asynchronous;
- animate (the caller's thread): upload, one animator call, and an asynchronous copy of the result
  back, recorded with a CUDA event; the loop does not wait for the device, so the GPU has the
  next frame queued while the host prepares it;
- output: waits on each frame's event, joins source | driving | result, writes it to the video as
  it goes (a live run may last hours) and sends the live view's frames and progress.

One clock (``LoopTimer``) times the loop, from its start to its last frame out: the result's
frames/s, and the same figure so far while the loop runs (the live view's rate), with no wait on
the device beyond the output stage's own, per frame.

On a CPU everything is synchronous inside the animate stage and the threads only overlap decoding
and writing. ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM through the demo runner) stops a live run
at a frame boundary: the frames so far are written and reported.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zbench.demos.motion import video

QUEUE = 8  # frames in flight between two stages
_END = object()


class LoopTimer:
    """Frames out (written and shown) over the wall time since the loop started: to now while it
    runs, to its end once it has ended. The output stage counts; any thread may read."""

    def __init__(self) -> None:
        self.t0: float | None = None
        self.t1: float | None = None
        self.frames = 0

    def start(self) -> None:
        self.t0, self.t1, self.frames = time.perf_counter(), None, 0

    def stop(self) -> None:
        self.t1 = time.perf_counter()

    @property
    def seconds(self) -> float:
        if self.t0 is None:
            return 0.0
        return (self.t1 if self.t1 is not None else time.perf_counter()) - self.t0

    def fps(self) -> float | None:
        """Frames per second so far; None before the first frame is out."""
        seconds = self.seconds
        return self.frames / seconds if self.frames and seconds > 0 else None


@dataclass
class LiveResult:
    """What the loop did: frames shown, their wall time (first decoded to last written)."""

    frames: int
    seconds: float
    stopped: bool  # ended by the user, not by the end of the drive
    video: Path | None

    @property
    def fps(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else 0.0


class VideoSink:
    """Side-by-side frames written as they come (MP4/AVI through OpenCV); a GIF is kept and
    written at the end (Pillow writes GIFs whole)."""

    def __init__(self, path: Path, fps: float = 25.0) -> None:
        self.path, self.fps = Path(path), fps
        self._writer: Any = None
        self._kept: list[np.ndarray] = []

    def write(self, frame: np.ndarray) -> None:
        if self.path.suffix.lower() == ".gif":
            self._kept.append(frame)
            return
        if self._writer is None:
            cv2 = video._cv2()
            if self.path.suffix.lower() not in (".mp4", ".avi"):
                raise ValueError(
                    f"unsupported video type {self.path.suffix!r}: use .mp4, .avi or .gif"
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
            h, w = frame.shape[:2]
            fourcc = cv2.VideoWriter_fourcc(
                *("mp4v" if self.path.suffix.lower() == ".mp4" else "MJPG")
            )
            self._writer = cv2.VideoWriter(str(self.path), fourcc, self.fps, (w, h))
            if not self._writer.isOpened():
                raise RuntimeError(f"OpenCV cannot write {self.path}")
        self._writer.write(frame[:, :, ::-1])  # RGB -> BGR

    def close(self) -> Path | None:
        if self._kept:
            return video.write_video(self.path, self._kept, self.fps)
        if self._writer is None:
            return None
        self._writer.release()
        return self.path


def _decode(
    frames: Iterable[np.ndarray],
    out: queue.Queue,
    stop: threading.Event,
    pin: bool,
    errors: list[BaseException],
) -> None:
    try:
        for f in frames:
            if stop.is_set():
                break
            t = torch.from_numpy(np.ascontiguousarray(f))
            out.put((f, t.pin_memory() if pin else t))
    except BaseException as exc:  # reported by the animate stage
        errors.append(exc)
    finally:
        out.put(_END)


def run_live(
    animate: Callable[[torch.Tensor], torch.Tensor],
    source: np.ndarray,
    driving: Iterable[np.ndarray],
    device: torch.device,
    sink: VideoSink | None,
    show: Callable[[int, np.ndarray, np.ndarray, bool], None],
    limit: int | None = None,
    timer: LoopTimer | None = None,
) -> LiveResult:
    """Animate every driving frame (up to ``limit``) through the three stages; ``show(i, driving,
    result, last)`` runs in the output stage for each frame (the live view, progress), after the
    frame is counted in ``timer`` (the caller's, to read the rate so far; else the loop's own)."""
    cuda = device.type == "cuda"
    stop = threading.Event()
    decoded: queue.Queue = queue.Queue(QUEUE)
    shown: queue.Queue = queue.Queue(QUEUE)
    errors: list[BaseException] = []
    clock = timer if timer is not None else LoopTimer()

    def output() -> None:
        try:
            while (item := shown.get()) is not _END:
                i, drv, host, event, last = item
                if event is not None:
                    event.synchronize()
                out = host[0].numpy()
                if sink is not None:
                    sink.write(video.side_by_side(source, drv, out))
                clock.frames = i + 1
                show(i, drv, out, last)
        except BaseException as exc:
            errors.append(exc)
            stop.set()
            while shown.get() is not _END:  # let the animate stage finish its puts
                pass

    limited: Iterator[np.ndarray] = iter(driving)
    if limit is not None:
        limited = (f for i, f in zip(range(limit), limited, strict=False))
    decoder = threading.Thread(
        target=_decode, args=(limited, decoded, stop, cuda, errors), name="decode", daemon=True
    )
    writer = threading.Thread(target=output, name="output", daemon=True)
    stopped = False
    clock.start()
    decoder.start()
    writer.start()
    try:
        i, pending = 0, decoded.get()
        while pending is not _END and not stop.is_set():
            drv, host_in = pending
            nxt = decoded.get()  # one frame ahead: "last" is known when this one is shown
            res = animate(host_in[None].to(device, non_blocking=True))
            if cuda:
                host = torch.empty(res.shape, dtype=res.dtype, pin_memory=True)
                host.copy_(res, non_blocking=True)
                event = torch.cuda.Event()
                event.record()
            else:
                host, event = res.cpu(), None
            shown.put((i, drv, host, event, nxt is _END))
            i, pending = i + 1, nxt
    except KeyboardInterrupt:
        stopped = True
    finally:
        stop.set()
        shown.put(_END)
        writer.join()
        while decoder.is_alive():  # unblock a decoder waiting on a full queue
            try:
                decoded.get_nowait()
            except queue.Empty:
                decoder.join(0.05)
    clock.stop()
    if errors:
        raise errors[0]
    path = sink.close() if sink is not None else None
    return LiveResult(clock.frames, clock.seconds, stopped, path)
