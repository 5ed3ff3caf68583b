"""The annotated video, drawn and encoded in a thread of its own, and frames brought to the host
without waiting on the detector's queued work.

Encoding a 1080p frame (OpenCV's MPEG-4 writer, one core) takes 15-25 ms: written in the tracker's
thread, it set the demo's pace (22.4 frames/s end to end on an H100, 178 without the video).
`VideoThread` takes each frame with its tracks and writes behind the tracker, up to a queue's depth
behind (OpenCV releases the GIL while it draws and encodes); the tracker waits only when the queue
is full, and those seconds are counted (``waited_s``) so a result can say what the video cost the
tracking.

`host_picture` copies a frame on a CUDA stream of the calling thread's own: a plain ``.cpu()`` on
the default stream would wait for every chunk the main thread has queued behind the frame.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zbench.demos.tracking.mot_io import AnnotatedVideo

QUEUE_FRAMES = 256  # frames the video may fall behind (1080p: 1.6 GB of frames held on the GPU)

_streams = threading.local()


def host_picture(image: torch.Tensor, bgr: bool = False) -> np.ndarray:
    """``[3, H, W]`` uint8 -> ``[H, W, 3]`` on the host, RGB (BGR with ``bgr``, as OpenCV writes).

    On a GPU the reorder and the copy run on a side stream of this thread, which waits for no
    other work: the frame must be complete on the device (its chunk tracked, or rendered before).
    """
    x = image.permute(1, 2, 0)
    if image.device.type != "cuda":
        return np.ascontiguousarray((x.flip(-1) if bgr else x).numpy())
    streams = getattr(_streams, "by_device", None)
    if streams is None:
        streams = _streams.by_device = {}
    stream = streams.get(image.device)
    if stream is None:
        stream = streams[image.device] = torch.cuda.Stream(image.device)
    with torch.cuda.stream(stream):
        host = (x.flip(-1) if bgr else x).contiguous().to("cpu", non_blocking=True)
    stream.synchronize()  # the image is still referenced: its memory is not reused meanwhile
    return host.numpy()


class VideoThread:
    """`AnnotatedVideo` fed through a queue and written by its own thread.

    ``put`` queues a frame with its tracks (`deepsort.TrackOut`s, frozen: the tracker's next frame
    does not change them), waiting only while ``depth`` frames are ahead of it (0: never);
    ``close`` writes what is queued and returns the file. ``busy_s`` is the thread's seconds
    drawing and writing, ``waited_s`` the tracker's seconds waiting on a full queue, ``tail_s``
    the seconds ``close`` waited for the frames still queued. A failure in the thread is raised
    by the next ``put`` or by ``close``."""

    def __init__(self, path: Path, fps: float = 25.0, depth: int = QUEUE_FRAMES) -> None:
        self.video = AnnotatedVideo(path, fps)
        self.frames: queue.Queue[tuple[Any, list] | None] = queue.Queue(maxsize=depth)
        self.busy_s = self.waited_s = self.tail_s = 0.0
        self.written = 0
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._loop, name="video", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while (item := self.frames.get()) is not None:
            if self.failure is not None:
                continue  # drain, so that a waiting put or close returns
            t0 = time.perf_counter()
            try:
                image, tracks = item
                bgr = host_picture(image, bgr=True) if isinstance(image, torch.Tensor) else image
                self.video.write_bgr(bgr, tracks)
                self.written += 1
            except BaseException as exc:  # raised in the tracker's thread
                self.failure = exc
            self.busy_s += time.perf_counter() - t0

    def _raise(self) -> None:
        if self.failure is not None:
            raise RuntimeError(f"writing the video failed: {self.failure}") from self.failure

    def put(self, image: torch.Tensor | np.ndarray, tracks: list) -> None:
        """Queue ``image`` (``[3, H, W]`` RGB tensor, or ``[H, W, 3]`` BGR array) with ``tracks``."""
        self._raise()
        t0 = time.perf_counter()
        self.frames.put((image, list(tracks)))
        self.waited_s += time.perf_counter() - t0

    def close(self) -> Path:
        """Write the frames still queued, close the file, and return its path."""
        t0 = time.perf_counter()
        self.frames.put(None)
        self.thread.join()
        self.tail_s = time.perf_counter() - t0
        path = self.video.close()
        self._raise()
        return path

    @property
    def fps(self) -> float | None:
        """Frames drawn and written per second of the thread's work."""
        return round(self.written / self.busy_s, 1) if self.busy_s > 0 else None
