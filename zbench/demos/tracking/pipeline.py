"""The tracking pipeline: detector -> embedder -> tracker on the `Frame`s a source yields
(sources.py), with per-stage timing. `Pipeline.step` runs the stages in turn on one frame; `Pipeline.run_batched` detects and embeds frames in chunks while a second thread tracks
them (`StageTimes` says what each figure means in either case).
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from zbench.demos.tracking.bytetrack import ByteTracker, ByteTrackParams
from zbench.demos.tracking.deepsort import DeepSortParams, DeepSortTracker, TrackOut
from zbench.demos.tracking.fused import FusedParams, FusedTracker
from zbench.demos.tracking.scene import FrameTruth, to_unit
from zbench.demos.tracking.sources import Frame


def noisy_truth(
    truth: FrameTruth, rng: np.random.Generator, width: int, height: int, min_vis: float = 0.3
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Detections a good detector would give: most visible figures, jittered, a few false alarms.

    Returns tlwh ``[N, 4]``, scores ``[N]`` and the figure id of each (-1: false alarm).
    """
    vis = truth.visibility
    found = (vis >= min_vis) & (rng.random(len(vis)) < 0.6 + 0.4 * vis)
    box = truth.tlwh[found].copy()
    box[:, :2] += rng.normal(0, 0.03, (len(box), 2)) * box[:, 2:]
    box[:, 2:] *= np.exp(rng.normal(0, 0.03, (len(box), 2)))
    score = np.clip(0.55 + 0.4 * vis[found] + rng.normal(0, 0.1, len(box)), 0.05, 1.0)
    n_fp = rng.poisson(0.05 * max(len(vis), 1))
    h = rng.uniform(0.05, 0.2, n_fp) * height
    fp = np.stack(
        [rng.uniform(0, width, n_fp), rng.uniform(0.3, 0.9, n_fp) * height, h * 0.4, h], axis=1
    )
    ids = np.concatenate([truth.ids[found], np.full(n_fp, -1)])
    return np.concatenate([box, fp]), np.concatenate([score, rng.uniform(0.1, 0.6, n_fp)]), ids


def _tlwh(tlbr: np.ndarray) -> np.ndarray:
    return np.concatenate([tlbr[:, :2], tlbr[:, 2:] - tlbr[:, :2]], axis=1)


# Python's thread switch interval while the tracker thread runs beside the launching one. Each torch
# call releases the GIL; when the tracker thread takes it, the launching thread waits until the
# tracker releases it, up to the interval (5 ms by default). On a CPU, 3,000 small torch calls took
# 8 ms alone, 5.3 s beside a busy Python thread at 5 ms and 0.13 s at 0.1 ms. On one H200 (1080p,
# 50 targets, benchmarks/tracking.py) the short interval paid at one frame per chunk (83.3, 82.0,
# 100.4 frames/s for Deep SORT, ByteTrack, fused against 71.7, 75.6, 77.7 at 5 ms) and not at 8
# (116.8, 184.5, 193.0 against 196.6, 220.5, 170.8): a chunk's launches are few and the tracker
# thread, switched out every 0.1 ms, fell behind. So it is used for one-frame chunks only.
SWITCH_INTERVAL_S = 1e-4
PYTHON_SWITCH_INTERVAL_S = 5e-3  # Python's default


def switch_interval_for(batch: int) -> float:
    """The thread switch interval `Pipeline.run_batched` uses for ``batch`` frames a chunk."""
    return SWITCH_INTERVAL_S if batch == 1 else PYTHON_SWITCH_INTERVAL_S


TRACKERS = ("deepsort", "bytetrack", "fused")


def make_tracker(name: str, deepsort: DeepSortParams, byte: ByteTrackParams, fps: float = 25.0):
    """A tracker by name (``TRACKERS``); ``fused`` keeps ByteTrack's thresholds and buffer."""
    if name == "deepsort":
        return DeepSortTracker(deepsort)
    if name == "bytetrack":
        return ByteTracker(byte, frame_rate=fps)
    if name == "fused":
        params = FusedParams(
            high_thresh=byte.track_thresh,
            match_thresh=byte.match_thresh,
            track_buffer=byte.track_buffer,
        )
        return FusedTracker(params, frame_rate=fps)
    raise ValueError(f"unknown tracker {name!r}: use {', '.join(TRACKERS)}")


@dataclass
class StageTimes:
    """Seconds spent per stage over the frames timed, and what the timing left out.

    `Pipeline.step` (stages in turn): wall clock with the device synchronised at each stage's end,
    so the stages add up to ``total``. `Pipeline.run_batched` (chunks of frames, a tracker thread):
    ``detector`` and ``embedder`` are each chunk's span on the device, from the stage's turn on
    the stream to its last kernel, the embedder's including the one host copy (CUDA events; wall
    clock on the CPU, where the calls are synchronous); ``tracker`` is the tracker's wall clock in
    its thread (the per-frame callback after it, where the demo queues its video and preview, is
    in none of them). These overlap, so they add up to more than ``total``, the wall time after the
    warm-up; each stage's rate is what it would sustain alone. ``warmup`` is the wall time of the
    first chunks (CUDA-graph capture, first calls), over ``warmup_frames`` frames, timed apart. While
    `Pipeline.run_batched`'s timed window is open, ``since`` is when it began (perf_counter), and
    end to end so far is the frames tracked over the wall time since: a frame is tracked only once
    its chunk's device work is done, so the live figure needs no sync and ends on the final one.
    """

    detector: float = 0.0
    embedder: float = 0.0
    tracker: float = 0.0
    total: float = 0.0
    frames: int = 0
    detections: int = 0
    warmup: float = 0.0
    warmup_frames: int = 0
    since: float | None = None  # the open timed window's start (perf_counter), else None

    @property
    def timed(self) -> bool:
        """Whether these figures are the timed window's (open or closed), not the warm-up's."""
        return self.since is not None or self.total > 0

    def fps(self) -> dict[str, float | None]:
        """Frames per second of each stage and end to end; end to end so far while the timed
        window is open."""

        def rate(s: float) -> float | None:
            return round(self.frames / s, 1) if s > 0 else None

        total = self.total
        if total <= 0 and self.since is not None:
            total = time.perf_counter() - self.since
        return {
            "detector": rate(self.detector),
            "embedder": rate(self.embedder),
            "tracker": rate(self.tracker),
            "end_to_end": rate(total),
        }


class _Marks:
    """Points in a stream of device work, and the seconds between them once the work is done:
    CUDA events on a GPU (timed on the device, no host sync), wall clock on the CPU."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.points: list = []

    def mark(self) -> None:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self.points.append(event)
        else:
            self.points.append(time.perf_counter())

    def wait(self) -> None:
        """Until the work before the last mark is done (releases the GIL while it waits)."""
        if self.cuda:
            self.points[-1].synchronize()

    def spans(self) -> list[float]:
        """Seconds between consecutive marks; call after `wait`."""
        a, b = self.points[:-1], self.points[1:]
        if self.cuda:
            return [x.elapsed_time(y) / 1000 for x, y in zip(a, b, strict=True)]
        return [y - x for x, y in zip(a, b, strict=True)]


@dataclass
class _Chunk:
    """A chunk's frames and what the device gave for them, ready to track once `marks` say so."""

    frames: list[Frame]
    counts: list[int] | None = None  # detections per frame, packed in `host` (None: `given`)
    host: torch.Tensor | None = None  # [sum(counts), 4 + 1 + 128]: tlbr, score, feature
    given: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None  # per-frame `detect`
    marks: _Marks | None = None


@dataclass
class Pipeline:
    """detector (or given detections) -> embedder (unless given features) -> tracker."""

    tracker: DeepSortTracker | ByteTracker | FusedTracker
    detector: object | None = None  # detector.Detector
    embedder: object | None = None  # embedder.Embedder
    mode: str = "model"  # "model", "truth" or "public"
    seed: int = 0
    times: StageTimes = field(default_factory=StageTimes)
    results: list[list[float]] = field(default_factory=list)
    save_detections: dict[int, tuple] | None = None

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed + 7)
        self.ids: set[int] = set()

    def _sync(self, image: torch.Tensor | None) -> None:
        if image is not None and image.device.type == "cuda":
            torch.cuda.synchronize(image.device)

    def detect(self, frame: Frame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Detections and features of one frame on the host: tlwh, scores, features."""
        t0 = time.perf_counter()
        img = frame.image
        feats: np.ndarray | torch.Tensor | None = None
        tlwh: np.ndarray | None = None
        scores: np.ndarray | None = None
        if frame.detections is not None:
            tlwh, scores, feats = frame.detections
            tlbr = torch.as_tensor(tlwh, dtype=torch.float32)
            tlbr[:, 2:] += tlbr[:, :2]
        elif self.mode == "truth":
            if frame.truth is None:
                raise ValueError("detector='truth' needs a generated sequence")
            h, w = img.shape[1:] if img is not None else (1080, 1920)
            tlwh, scores, _ = noisy_truth(frame.truth, self.rng, int(w), int(h))
            tlbr = torch.as_tensor(tlwh, dtype=torch.float32)
            tlbr[:, 2:] += tlbr[:, :2]
        else:
            if self.detector is None or img is None:
                raise ValueError("no detector and no detections for this input")
            tlbr, score_t = self.detector(img)  # type: ignore[operator]
        self._sync(img)
        t1 = time.perf_counter()
        if feats is None:
            if self.embedder is None or img is None:
                raise ValueError("no embedder and no features for this input")
            feats = self.embedder(img, tlbr.to(img.device))  # type: ignore[operator]
        if tlwh is None or scores is None:  # detector output: one host copy of each
            tlwh = _tlwh(tlbr.float().cpu().numpy())
            scores = score_t.float().cpu().numpy()
        feats_np = feats.float().cpu().numpy() if isinstance(feats, torch.Tensor) else feats
        t2 = time.perf_counter()
        self.times.detector += t1 - t0
        self.times.embedder += t2 - t1
        return self._keep(frame.index, tlwh, scores, feats_np)

    def _keep(
        self, index: int, tlwh: np.ndarray, scores: np.ndarray, feats: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A frame's detections on the host: counted, saved when asked."""
        self.times.detections += len(tlwh)
        if self.save_detections is not None:
            self.save_detections[index] = (np.asarray(tlwh), np.asarray(scores), feats)
        return np.asarray(tlwh), np.asarray(scores), np.asarray(feats)

    def track(
        self, index: int, tlwh: np.ndarray, scores: np.ndarray, feats: np.ndarray
    ) -> list[TrackOut]:
        t0 = time.perf_counter()
        tracks = self.tracker.update(tlwh, scores, feats)
        self.times.tracker += time.perf_counter() - t0
        self.times.frames += 1
        for tr in tracks:
            self.results.append([index, tr.track_id, *tr.tlwh])
            self.ids.add(tr.track_id)
        return tracks

    def step(self, frame: Frame) -> tuple[list[TrackOut], np.ndarray, np.ndarray]:
        """Track one frame, stages in turn; returns the tracks, the detections' tlwh and scores."""
        t0 = time.perf_counter()
        tlwh, scores, feats = self.detect(frame)
        tracks = self.track(frame.index, tlwh, scores, feats)
        self.times.total += time.perf_counter() - t0
        return tracks, tlwh, scores

    def run_batched(
        self,
        frames: Iterable[Frame],
        batch: int = 1,
        warmup: int = 0,
        on_tracks: Callable[[Frame, list[TrackOut]], None] | None = None,
        switch_interval: float | None = None,
    ) -> float:
        """Detect and embed ``batch`` frames at a time while a second thread tracks the last chunk.

        Per chunk: one detector call on the ``[B, 3, H, W]`` frames (a short last chunk is padded
        with its last frame, so the backbone's CUDA graph for B serves it), one ``roi_align`` and
        one embedder call over all their boxes, one device-to-host copy of boxes, scores and
        features. The copy is not waited for here: the next chunk's work is queued behind it while
        the tracker thread waits for it (CUDA calls release the GIL), then tracks the frames
        strictly in order and hands each to ``on_tracks`` (the demo draws and writes video there).
        Frames with given detections, ``mode="truth"`` or frames of unequal sizes go through
        `detect` one at a time. The first ``warmup`` chunks are timed apart (``times`` starts
        afresh after them, with their seconds in ``times.warmup``); a run of no more chunks than
        that is timed whole. Python's thread switch interval is ``switch_interval`` during the
        call (None: `switch_interval_for` the batch). Returns the wall time of the call.
        """
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        work: queue.Queue[_Chunk | None] = queue.Queue(maxsize=2)
        failure: list[BaseException] = []

        def tracker_loop() -> None:
            while (chunk := work.get()) is not None:
                try:
                    if not failure:
                        self._track_chunk(chunk, on_tracks)
                except BaseException as exc:  # reported in the caller's thread
                    failure.append(exc)
                finally:
                    work.task_done()

        thread = threading.Thread(target=tracker_loop, name="tracker", daemon=True)
        source: Iterator[Frame] = iter(frames)
        chunk: list[Frame] = []
        interval = sys.getswitchinterval()
        sys.setswitchinterval(
            switch_interval_for(batch) if switch_interval is None else switch_interval
        )
        start = timed_from = time.perf_counter()
        if warmup < 1:
            self.times.since = start
        thread.start()
        try:
            for n in itertools.count(1):
                chunk = []
                for frame in itertools.islice(source, batch):
                    chunk.append(frame)
                if not chunk or failure:
                    break
                work.put(self._detect_chunk(chunk, batch))
                chunk = []
                if n == warmup:
                    ahead = next(source, None)  # is there a frame left to time?
                    if ahead is None:
                        break
                    source = itertools.chain([ahead], source)
                    work.join()  # tracked, so their device work is done too
                    timed_from = time.perf_counter()
                    self.times = StageTimes(
                        warmup=timed_from - start,
                        warmup_frames=self.times.frames,
                        since=timed_from,
                    )
        except KeyboardInterrupt:  # Ctrl-C while reading a chunk: its frames read are tracked
            if chunk and not failure:
                work.put(self._detect_chunk(chunk, batch))
            raise
        finally:  # also on Ctrl-C: the frames already detected are tracked and timed
            work.put(None)
            thread.join()
            end = time.perf_counter()
            self.times.total += end - timed_from
            self.times.since = None
            sys.setswitchinterval(interval)
        if failure:
            raise failure[0]
        return end - start

    def _batchable(self, chunk: list[Frame]) -> bool:
        shape = chunk[0].image.shape if chunk[0].image is not None else None
        return (
            self.mode == "model"
            and self.detector is not None
            and self.embedder is not None
            and shape is not None
            and all(
                f.detections is None and f.image is not None and f.image.shape == shape
                for f in chunk
            )
        )

    def _detect_chunk(self, chunk: list[Frame], batch: int) -> _Chunk:
        if not self._batchable(chunk):
            return _Chunk(chunk, given=[self.detect(f) for f in chunk])
        images = [f.image for f in chunk]
        marks = _Marks(images[0].device)  # type: ignore[union-attr]
        marks.mark()
        x = to_unit(torch.stack(images + images[-1:] * (batch - len(chunk))))  # type: ignore[arg-type]
        found = self.detector.batch(x)[: len(chunk)]  # type: ignore[attr-defined]
        marks.mark()
        boxes = [b for b, _ in found]
        feats = self.embedder.batch(x[: len(chunk)], boxes)  # type: ignore[attr-defined]
        packed = torch.cat(
            [torch.cat(boxes).float(), torch.cat([s for _, s in found]).float()[:, None], feats],
            dim=1,
        )
        host = packed.to("cpu", non_blocking=True)  # into pinned memory on a GPU; waited for later
        marks.mark()
        return _Chunk(chunk, [len(b) for b in boxes], host, marks=marks)

    def _track_chunk(
        self, chunk: _Chunk, on_tracks: Callable[[Frame, list[TrackOut]], None] | None
    ) -> None:
        given = chunk.given
        if given is None:
            assert chunk.marks is not None and chunk.host is not None and chunk.counts is not None
            chunk.marks.wait()
            detector_s, embedder_s = chunk.marks.spans()
            self.times.detector += detector_s
            self.times.embedder += embedder_s
            parts = np.split(chunk.host.numpy(), np.cumsum(chunk.counts)[:-1])
            given = [
                self._keep(f.index, _tlwh(p[:, :4]), p[:, 4], p[:, 5:])
                for f, p in zip(chunk.frames, parts, strict=True)
            ]
        for frame, dets in zip(chunk.frames, given, strict=True):
            tracks = self.track(frame.index, *dets)
            if on_tracks is not None:
                on_tracks(frame, tracks)
