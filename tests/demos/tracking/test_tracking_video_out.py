"""The annotated video written by a thread of its own: order, tracks as they were, the seconds the
tracker waited, failures; frames brought to the host in RGB or BGR."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("cv2")

import cv2
import torch

from zbench.demos.tracking import video_out
from zbench.demos.tracking.deepsort import TrackOut
from zbench.demos.tracking.video_out import VideoThread, host_picture


def _frame(level: int) -> torch.Tensor:
    """A 3 x 48 x 64 frame whose red channel reads ``level`` (green 0, blue 255)."""
    img = torch.zeros(3, 48, 64, dtype=torch.uint8)
    img[0], img[2] = level, 255
    return img


def test_host_picture_is_rgb_or_bgr_channels_last():
    rgb = host_picture(_frame(40))
    bgr = host_picture(_frame(40), bgr=True)
    assert (
        rgb.shape == bgr.shape == (48, 64, 3) and rgb.flags.c_contiguous and bgr.flags.c_contiguous
    )
    assert tuple(rgb[0, 0]) == (40, 0, 255) and tuple(bgr[0, 0]) == (255, 0, 40)


def test_frames_are_written_in_order_with_their_own_tracks(tmp_path, monkeypatch):
    """Each frame is drawn with the tracks it was handed over with, and lands in the file in
    order."""
    drawn: list[tuple[int, tuple]] = []
    annotate = video_out.AnnotatedVideo.annotate

    def spy(self, img, tracks):
        drawn.append((int(img[0, 0, 2]), tuple(t.tlwh for t in tracks)))
        return annotate(self, img, tracks)

    monkeypatch.setattr(video_out.AnnotatedVideo, "annotate", spy)
    video = VideoThread(tmp_path / "v.mp4", fps=10)
    for n in range(6):
        video.put(_frame(10 * n), [TrackOut(3, (5.0 + n, 5.0, 10.0, 20.0))])
    path = video.close()
    assert [red for red, _ in drawn] == [0, 10, 20, 30, 40, 50]  # in order, RGB read as BGR red
    assert [boxes[0][0] for _, boxes in drawn] == [5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    cap = cv2.VideoCapture(str(path))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == 6
    cap.release()
    assert video.written == 6 and video.fps is not None and video.fps > 0


def test_the_tracker_waits_only_on_a_full_queue_and_the_wait_is_counted(tmp_path, monkeypatch):
    """With a writer slower than the tracker, a queue of one frame makes ``put`` wait (the
    seconds are counted); an unbounded one never does, and ``close`` waits for the rest."""
    release = threading.Event()
    write = video_out.AnnotatedVideo.write_bgr

    def slow(self, img, tracks):
        release.wait(5)
        write(self, img, tracks)

    monkeypatch.setattr(video_out.AnnotatedVideo, "write_bgr", slow)
    free = VideoThread(tmp_path / "free.mp4", depth=0)
    t0 = time.perf_counter()
    for n in range(5):
        free.put(_frame(n), [])
    assert time.perf_counter() - t0 < 1.0 and free.waited_s < 1.0
    threading.Timer(0.3, release.set).start()
    free.close()
    assert free.written == 5 and free.tail_s >= 0.2

    release.clear()
    tight = VideoThread(tmp_path / "tight.mp4", depth=1)
    threading.Timer(0.3, release.set).start()
    for n in range(4):  # the first is taken, the second queued, the third waits for the writer
        tight.put(_frame(n), [])
    tight.close()
    assert tight.waited_s >= 0.2 and tight.written == 4


def test_a_failure_in_the_video_thread_is_raised_to_the_tracker(tmp_path):
    """The writer's error reaches the tracker's thread: at ``close``, or at the next ``put``
    once the thread has failed; frames queued after a failure are dropped, not waited on."""
    video = VideoThread(tmp_path / "v.mkv")  # not a type the writer takes
    video.put(_frame(1), [])
    with pytest.raises(RuntimeError, match="writing the video failed: unsupported video type"):
        video.close()
    later = VideoThread(tmp_path / "w.mkv", depth=1)
    later.put(_frame(1), [])
    deadline = time.monotonic() + 5
    while later.failure is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(RuntimeError, match="writing the video failed"):
        later.put(_frame(2), [])
