"""The motion demo as a job: the demo table's options (``contract.demos``) (``zbench demo motion ...``) to ``run``'s own."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

CHECKPOINT = "motion.pt"  # train.CHECKPOINT (train.py imports torch)


def default_folder(home: Path, smoke: bool) -> Path:
    """The checkpoint folder without ``--checkpoint``, under the data folder (never the working
    one); smoke models are tiny and kept apart, so that a real run never resumes from one."""
    return home / "demos" / "motion" / ("smoke" if smoke else "")


def video_path(folder: Path) -> Path:
    """The side-by-side video of a run whose options name none: in its checkpoint folder."""
    return folder / f"motion-{time.strftime('%Y%m%d-%H%M%S')}.mp4"


def motion_options(options: Mapping[str, Any], home: Path) -> dict[str, Any]:
    """``run``'s options (docs/demos-motion.md) from the job's, as ``contract.demo_options``
    parsed them (every option of the schema, validated): ``--animate`` trains nothing, the
    checkpoint folder defaults to ``default_folder`` and the video is written there."""
    folder = Path(options["checkpoint"] or default_folder(home, bool(options["smoke"])))
    out: dict[str, Any] = {k: options[k] for k in ("size", "drive", "device", "seed", "frames")}
    out.update(
        checkpoint_dir=str(folder),
        minutes=0.0 if options["mode"] == "animate" else float(options["minutes"]),
        smoke=bool(options["smoke"]),
        # Compiled, batch-1 animation is what reaches 120 frames/s and more on an H200; eager is
        # bound by the host's kernel launches. A CPU (the smoke path) runs eager.
        compile=bool(options["compile"]) and not options["smoke"] and options["device"] != "cpu",
        out=str(video_path(folder)),
    )
    return out


def check(options: Mapping[str, Any]) -> str | None:
    """Bad input found before anything starts: a ``--drive`` that cannot be read here, a
    ``--checkpoint`` folder that cannot be written, and for ``--animate`` a missing or unreadable
    checkpoint."""
    from zbench import paths
    from zbench.contract.inputs import checkpoint_problem, output_problem, video_problem

    drive = video_problem(str(options.get("drive") or "scripted"), "--drive", ("scripted",))
    if drive:
        return drive
    folder = Path(motion_options(options, paths.home())["checkpoint_dir"])
    if options.get("checkpoint") is not None:  # the model and the video are written there
        place = output_problem(folder, "--checkpoint", folder=True)
        if place:
            return place
    if options.get("mode") != "animate":
        return None
    if not (folder / CHECKPOINT).is_file():
        return f"--animate needs a trained model: no {CHECKPOINT} in {folder} (train first)"
    return checkpoint_problem(folder / CHECKPOINT, "--animate")


def run(options: Mapping[str, Any], emit: Callable[..., None]) -> dict[str, Any]:
    """Entry for the demo adapter (imports torch only when called)."""
    from zbench import paths
    from zbench.demos.motion import run as motion_run

    return motion_run(motion_options(options, paths.home()), emit)
