"""Tracking's inputs and outputs: results under --out (never the working directory), models under
the data directory, the whole input by default, and scores against any ground truth (--gt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("cv2")
pytest.importorskip("scipy")
pytest.importorskip("trackeval")

from zbench.demos.tracking import mot_io
from zbench.demos.tracking.demo import TrackingOptions
from zbench.demos.tracking.scene import SceneConfig, write_sequence

REPO = Path(__file__).resolve().parents[3]


def _demo(args: list[str], cwd: Path, home: Path) -> list[dict]:
    """``python -m zbench.demos tracking ARGS`` run in ``cwd``; its events."""
    events = home / "events.jsonl"
    env = {**os.environ, "ZBENCH_HOME": str(home), "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "zbench.demos", "tracking", *args, "--events", str(events)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in events.read_text().splitlines()]


def _long_npy(path: Path, frames: int) -> tuple[Path, Path]:
    """One figure walking right for ``frames`` frames: detections with a feature, and its gt."""
    rng = np.random.default_rng(0)
    look = rng.normal(size=16)
    dets, gt = {}, []
    for t in range(1, frames + 1):
        box = np.array([[10.0 + t, 50.0, 20.0, 50.0]])
        dets[t] = (box, np.array([0.9]), look[None] + 0.01 * rng.normal(size=(1, 16)))
        gt.append([t, 1, *box[0], 1, 1, 1.0])
    npy = mot_io.write_deepsort_npy(path / "long.npy", dets)
    return npy, mot_io.write_gt(path / "gt.txt", np.array(gt))


def test_defaults_are_under_the_data_directory_and_the_whole_input(tmp_path, monkeypatch):
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "home"))
    o = TrackingOptions.parse({})
    assert o.frames == 300
    assert Path(o.out_dir) == tmp_path / "home" / "demos" / "tracking" / "out"
    assert Path(o.checkpoint_dir) == tmp_path / "home" / "demos" / "tracking" / "models"
    smoke = TrackingOptions.parse({"smoke": True})
    assert Path(smoke.checkpoint_dir).name == "smoke"  # a real run never resumes tiny models
    npy, _ = _long_npy(tmp_path, 3)
    assert TrackingOptions.parse({"input": str(npy)}).frames is None


def test_detection_file_run_tracks_all_frames_writes_only_under_out(tmp_path):
    """A Deep SORT .npy of 320 frames (more than the old cap of 300) with its own features."""
    npy, gt = _long_npy(tmp_path, 320)
    cwd, out, home = tmp_path / "cwd", tmp_path / "out", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    events = _demo(
        [
            "--input",
            str(npy),
            "--gt",
            str(gt),
            "--out",
            str(out),
            "--device",
            "cpu",
            "--tracker",
            "fused",
        ],
        cwd,
        home,
    )
    res = next(e for e in events if e["type"] == "result")
    assert res["frames"] == 320 and res["tracker"] == "fused"
    assert list(cwd.iterdir()) == []
    assert Path(res["results"]).parent == out and (out / "long.txt").is_file()
    assert res["metrics"]["HOTA"] > 0.8 and res["metrics"]["IDF1"] == 1.0


def test_gt_scores_a_mot_folder_and_overrides_its_own(tmp_path):
    """A tiny MOT folder tracked with its public detections: scored with its own gt/gt.txt, then
    with a 6-column gt given by --gt (every box counts)."""
    from zbench.demos.tracking.demo import run

    folder = write_sequence(tmp_path / "seq", SceneConfig(160, 96, 3, 6, seed=1))
    gt = mot_io.read_mot_txt(folder / "gt" / "gt.txt")
    det = np.concatenate([gt[:, :6], np.full((len(gt), 1), 0.9), np.full((len(gt), 3), -1)], 1)
    (folder / "det").mkdir()
    np.savetxt(folder / "det" / "det.txt", det, fmt="%.2f", delimiter=",")
    opts = {
        "input": str(folder),
        "detector": "public",
        "device": "cpu",
        "smoke": True,
        "video": False,
        "out_dir": str(tmp_path / "out"),
        "checkpoint_dir": str(tmp_path / "ck"),
    }
    res = run(opts, lambda *a, **k: None)
    assert 0 < res["metrics"]["HOTA"] <= 1
    only_first = gt[gt[:, 1] == gt[0, 1]][:, :6]  # one figure: the others become false positives
    np.savetxt(tmp_path / "gt6.txt", only_first, fmt="%.2f", delimiter=",")
    res6 = run({**opts, "gt": str(tmp_path / "gt6.txt")}, lambda *a, **k: None)
    assert res6["metrics"]["FP"] > res["metrics"]["FP"]


def test_bad_paths_are_one_line_and_exit_2(tmp_path):
    from zbench.demos.adapter import main

    assert main(["tracking", "--gt", str(tmp_path / "none.txt"), "--device", "cpu"]) == 2
    assert main(["tracking", "--input", str(tmp_path / "none.npy"), "--device", "cpu"]) == 2


def test_stopping_a_run_keeps_the_frames_tracked_so_far(tmp_path, monkeypatch):
    """Ctrl-C (or SIGTERM through the runner) during tracking: results and scores of the frames
    done are written, and the result says it was stopped."""
    from zbench.demos.tracking import demo, sources

    npy, gt = _long_npy(tmp_path, 40)
    real = sources.deepsort_npy

    def interrupted(*args, **kwargs):
        for frame in real(*args, **kwargs):
            if frame.index == 26:
                raise KeyboardInterrupt
            yield frame

    monkeypatch.setattr(sources, "deepsort_npy", interrupted)
    opts = {"input": str(npy), "gt": str(gt), "out_dir": str(tmp_path / "out"), "device": "cpu"}
    res = demo.run(opts, lambda *a, **k: None)
    assert res["stopped"] and res["frames"] == 25 and res["fps"]["end_to_end"] > 0
    rows = mot_io.read_mot_txt(Path(res["results"]))
    assert rows[:, 0].max() == 25 and "HOTA" in res["metrics"]


def test_no_checkpoint_and_no_training_budget_is_a_config_error(tmp_path):
    from zbench.demos.tracking.demo import run

    opts = {"checkpoint_dir": str(tmp_path / "ck"), "minutes": 0, "device": "cpu"}
    with pytest.raises(ValueError, match=r"^no detector checkpoint in .* and no training budget$"):
        run({**opts, "out_dir": str(tmp_path / "out")}, lambda *a, **k: None)
    with pytest.raises(ValueError, match=r"^no embedder checkpoint in .* and no training budget$"):
        run({**opts, "detector": "truth", "out_dir": str(tmp_path / "o2")}, lambda *a, **k: None)
