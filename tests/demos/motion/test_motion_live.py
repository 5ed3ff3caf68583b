"""Motion's live loop: decode, animate and write overlap; every frame is shown and written in
order; Ctrl-C stops at a frame boundary and keeps what was done; a video file drives the demo; the
loop's clock gives the rate so far while it runs and the result's once it ends."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
cv2 = pytest.importorskip("cv2")

from zbench.demos.motion import live  # noqa: E402


def _clip(path: Path, n: int, size: int = 48) -> Path:
    """A square moving across a grey frame, written by OpenCV."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 25.0, (size, size))
    for i in range(n):
        img = np.full((size, size, 3), 90, np.uint8)
        img[10:20, i % (size - 10) : i % (size - 10) + 10] = (250, 40, 40)
        writer.write(img)
    writer.release()
    return path


def _count(path: Path) -> int:
    cap = cv2.VideoCapture(str(path))
    n = 0
    while cap.read()[0]:
        n += 1
    cap.release()
    return n


def _invert(frames: torch.Tensor) -> torch.Tensor:
    return 255 - frames


def test_every_frame_is_animated_shown_and_written_in_order(tmp_path: Path) -> None:
    src = np.zeros((16, 16, 3), np.uint8)
    drive = [np.full((16, 16, 3), i, np.uint8) for i in range(30)]
    seen: list[tuple[int, int, int, bool]] = []
    res = live.run_live(
        _invert,
        src,
        iter(drive),
        torch.device("cpu"),
        live.VideoSink(tmp_path / "o.mp4"),
        lambda i, d, out, last: seen.append((i, int(d[0, 0, 0]), int(out[0, 0, 0]), last)),
    )
    assert res.frames == 30 and not res.stopped and res.fps > 0
    assert seen == [(i, i, 255 - i, i == 29) for i in range(30)]
    assert _count(tmp_path / "o.mp4") == 30


def test_the_loops_clock_counts_each_frame_before_it_is_shown_and_ends_on_the_result(
    tmp_path: Path,
) -> None:
    timer = live.LoopTimer()
    assert timer.fps() is None  # not started
    seen: list[tuple[int, float | None]] = []
    res = live.run_live(
        _invert,
        np.zeros((16, 16, 3), np.uint8),
        iter([np.zeros((16, 16, 3), np.uint8)] * 5),
        torch.device("cpu"),
        None,
        lambda i, d, out, last: seen.append((timer.frames - i, timer.fps())),
        timer=timer,
    )
    assert [counted for counted, _ in seen] == [1] * 5  # this frame is in the rate it reads
    assert all(fps is not None and fps > 0 for _, fps in seen)
    assert timer.fps() == res.fps and timer.frames == res.frames == 5  # stopped with the loop
    assert timer.seconds == res.seconds


def test_ctrl_c_stops_at_a_frame_boundary_and_keeps_the_frames(tmp_path: Path) -> None:
    calls = [0]

    def animate(frames: torch.Tensor) -> torch.Tensor:
        calls[0] += 1
        if calls[0] == 6:
            raise KeyboardInterrupt
        return frames

    forever = (np.zeros((16, 16, 3), np.uint8) for _ in iter(int, 1))  # a webcam: no end
    res = live.run_live(
        animate,
        np.zeros((16, 16, 3), np.uint8),
        forever,
        torch.device("cpu"),
        live.VideoSink(tmp_path / "o.mp4"),
        lambda *a: None,
    )
    assert res.stopped and res.frames == 5 and _count(tmp_path / "o.mp4") == 5


def test_a_video_file_drives_the_demo_to_its_end(tmp_path: Path) -> None:
    from zbench.demos.motion import run

    clip = _clip(tmp_path / "clip.mp4", 17)
    events: list[tuple[str, dict]] = []
    res = run(
        {
            "smoke": True,
            "device": "cpu",
            "steps": 1,
            "drive": str(clip),
            "frames": None,
            "checkpoint_dir": str(tmp_path / "ck"),
            "out": str(tmp_path / "o.mp4"),
        },
        lambda kind, **f: events.append((kind, f)),
    )
    assert res["frames"] == 12  # the smoke path caps a drive at 12 frames
    assert _count(Path(res["video"])) == 12 and res["first_call_s"] > 0
    anim = [f for k, f in events if k == "progress" and f["phase"] == "animate"]
    assert anim[-1]["step"] == anim[-1]["total"] == 12
    # The frames generated per second so far, on every event, by the loop's clock: the phase's
    # last event (the loop has ended) carries the result's own figure.
    assert len(anim) >= 2 and all(f["stream_fps"] > 0 for f in anim)
    assert anim[-1]["stream_fps"] == res["stream_fps"]
    later = [f for k, f in events if k == "progress" and f["phase"] != "animate"]
    assert later and not any("stream_fps" in f for f in later)  # training, evaluation: none
    shown = [f for k, f in events if k == "frame" and f.get("stage") == "animate"]
    assert shown and set(shown[-1]["panels"]) == {"source", "driving", "result"}
