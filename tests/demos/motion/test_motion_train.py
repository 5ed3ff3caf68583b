"""Motion demo: a tiny CPU training run lowers the loss; the run entry and the benchmark's smoke path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cv2")

from zbench.demos.motion import run, train  # noqa: E402
from zbench.demos.motion.demo import SMOKE_CONFIG  # noqa: E402
from zbench.demos.motion.model import MotionModel  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_tiny_cpu_training_lowers_the_loss():
    torch.manual_seed(0)
    model = MotionModel(SMOKE_CONFIG)
    pairs = train.RenderedPairs(64, 8, "cpu", seed=0)
    _, hist = train.train(model, pairs, steps=40)
    first, last = hist[0]["total"], sum(h["total"] for h in hist[-2:]) / 2
    assert last < 0.8 * first, (first, last)


@pytest.mark.slow
def test_run_emits_events_and_writes_video_and_checkpoint(tmp_path):
    events = []
    result = run(
        {
            "smoke": True,
            "device": "cpu",
            "checkpoint_dir": str(tmp_path / "ck"),
            "out": str(tmp_path / "o.gif"),
        },
        lambda kind, **f: events.append((kind, f)),
    )
    kinds = [k for k, _ in events]
    assert kinds[0] == "phase" and kinds[-1] == "result" and "progress" in kinds
    frame = next(f for k, f in events if k == "frame")
    assert set(frame["panels"]) == {"source", "driving", "prediction"}
    assert len(frame["panels"]["source"]) == frame["width"] * frame["height"] * 3
    assert (tmp_path / "o.gif").stat().st_size > 0 and (tmp_path / "ck" / "motion.pt").exists()
    assert set(result["quality"]) == {"source", "affine", "affine_oracle", "model"}
    assert result["fps"] > 0 and result["first_call_s"] > 0 and result["stream_fps"] > 0
    # Every phase ends done of its total: training, the animated frames, the evaluation.
    ends = {f["phase"]: (f["step"], f["total"]) for k, f in events if k == "progress"}
    assert set(ends) == {"train", "animate", "evaluate"}
    assert all(step == total > 0 for step, total in ends.values())
    # A second run resumes from the checkpoint and trains on.
    again = run(
        {
            "smoke": True,
            "device": "cpu",
            "checkpoint_dir": str(tmp_path / "ck"),
            "out": str(tmp_path / "o.mp4"),
        },
        lambda kind, **f: None,
    )
    assert again["train_steps"] == 2 * result["train_steps"]


@pytest.mark.slow
def test_benchmark_smoke_writes_json_and_pictures(tmp_path):
    out = tmp_path / "m.json"
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "motion.py"),
        "--smoke",
        "--no-compile",
        "--recipe",
        "perc_near",
        "--out",
        str(out),
        "--out-dir",
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["train"]["recipe"] == "perc_near"
    assert {r["name"] for r in data["speed"]} == {"eager b1", "eager b4"}
    assert all(r["fps"] > 0 for r in data["speed"])
    assert (tmp_path / "motion-sample.gif").exists() and (tmp_path / "motion-strip.png").exists()


@pytest.mark.parametrize(
    ("args", "message"), [(["--size", "100"], "multiple of 32"), (["--lr", "0"], "--lr must be")]
)
def test_benchmark_rejects_bad_sizes_and_rates(args, message):
    cmd = [
        sys.executable,
        str(REPO / "benchmarks" / "motion.py"),
        *args,
        "--out",
        "x",
        "--out-dir",
        "y",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr
