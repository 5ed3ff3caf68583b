"""Framework-free checks of a demo's input files: one line of what is wrong, or None.

Run before a job is queued (the demos' ``check``, the CLI's ``--play``) and again by the runner, so
a missing video, a video without OpenCV or a file that is not a checkpoint is refused in one line,
exit 2, instead of a traceback minutes later. Standard library only: nothing here reads a
checkpoint's contents (the runner does, with ``torch.load(weights_only=True)``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile
import zipfile

OPENCV_HINT = "pip install 'zbench[demos]'"


def checkpoint_problem(path: str | os.PathLike[str], what: str) -> str | None:
    """Why ``path`` cannot be a checkpoint ``torch.save`` wrote (a zip archive holding a
    ``data.pkl``), else None. ``what`` names the option in the message."""
    if not os.path.exists(path):
        return f"{what} {path}: no such file"
    if not os.path.isfile(path):
        return f"{what} {path}: not a file"
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        names = []
    if not any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
        return f"{what} {path}: not a PyTorch checkpoint (a file torch.save wrote)"
    return None


def opencv_missing() -> bool:
    """Whether OpenCV cannot be imported here (looked up, not imported)."""
    try:
        return importlib.util.find_spec("cv2") is None
    except (ImportError, ValueError):
        return True


def video_problem(text: str, what: str, built_in: tuple[str, ...]) -> str | None:
    """Why a demo's video input (one of ``built_in``, ``webcam:N``, a file or a folder) cannot be
    read here, else None. A video file or a webcam needs OpenCV."""
    if text in built_in:
        return None
    if text.startswith("webcam:"):
        if not text.split(":", 1)[1].isdigit():
            return f"{what} {text}: webcam:N wants a camera number, e.g. webcam:0"
        return f"{what} {text}: a webcam needs OpenCV: {OPENCV_HINT}" if opencv_missing() else None
    if not os.path.exists(text):
        return f"{what} {text}: no such file or folder"
    if os.path.isfile(text) and not text.endswith(".npy") and opencv_missing():
        return f"{what} {text}: reading a video needs OpenCV: {OPENCV_HINT}"
    return None


def output_problem(path: str | os.PathLike[str], what: str, *, folder: bool) -> str | None:
    """Why a demo could not write its output at ``path`` (a file, or with ``folder`` a folder it
    makes), else None: what exists there must be of that kind, and the nearest folder that exists
    must be one this user may write in. Found before the job is queued: the demos write their
    outputs only after training, so a bad place crashed the job and lost what it had measured."""
    full = os.path.abspath(path)
    if os.path.exists(full):
        if folder != os.path.isdir(full):
            return f"{what} {path}: " + ("not a folder" if folder else "a folder, not a file")
        if not folder:
            full = os.path.dirname(full)  # a file is replaced in its folder
        where = full
    else:
        where = os.path.dirname(full)
        while not os.path.exists(where):
            where = os.path.dirname(where)
        if not os.path.isdir(where):
            return f"{what} {path}: {where} is a file, not a folder"
    if not os.access(where, os.W_OK | os.X_OK) or not _can_create_in(where):
        return f"{what} {path}: {where} is not writable"
    return None


def _can_create_in(folder: str) -> bool:
    """Whether something can be made in ``folder``, tried (a folder made and removed at once):
    ``os.access`` says yes to root everywhere, and a snake trained as root for its whole budget
    before its ``--checkpoint /proc/x/s.pt`` failed to save."""
    try:
        probe = tempfile.mkdtemp(prefix=".zbench-", dir=folder)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.rmdir(probe)
    return True
