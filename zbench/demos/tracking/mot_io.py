"""MOTChallenge files in and out (gt, det, results, seqinfo.ini), Deep SORT .npy detections, video.

Layouts (MOT16/MOT17): ``<seq>/img1/000001.jpg``, ``det/det.txt`` and ``gt/gt.txt`` (comma separated:
frame, id, x, y, w, h, conf or consider-flag, class, visibility), ``seqinfo.ini``. Deep SORT's
published detection files (nwojke/deep_sort ``generate_detections.py``) are one ``.npy`` per
sequence whose rows are the 10 MOT detection columns followed by the appearance feature.
"""

from __future__ import annotations

import configparser
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from zbench.demos.video import capture_frames
from zbench.demos.video import cv2_module as _cv2

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")


@dataclass(frozen=True)
class SeqInfo:
    """The ``[Sequence]`` section of seqinfo.ini."""

    name: str
    frame_rate: float
    length: int
    width: int
    height: int
    im_dir: str = "img1"
    im_ext: str = ".jpg"


def read_seqinfo(folder: Path) -> SeqInfo:
    """A sequence's seqinfo.ini as a SeqInfo; FileNotFoundError or ValueError if missing or bad."""
    path = Path(folder) / "seqinfo.ini"
    if not path.is_file():
        raise FileNotFoundError(f"no seqinfo.ini in {folder}")
    cp = configparser.ConfigParser()
    cp.read(path)
    if "Sequence" not in cp:
        raise ValueError(f"{path}: no [Sequence] section")
    s = cp["Sequence"]
    try:
        return SeqInfo(
            name=s.get("name", Path(folder).name),
            frame_rate=float(s.get("frameRate", "25")),
            length=int(s["seqLength"]),
            width=int(s["imWidth"]),
            height=int(s["imHeight"]),
            im_dir=s.get("imDir", "img1"),
            im_ext=s.get("imExt", ".jpg"),
        )
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{path}: bad or missing field ({exc})") from exc


def write_seqinfo(folder: Path, info: SeqInfo) -> Path:
    """Write ``info`` as the folder's seqinfo.ini, MOTChallenge's form; return its path."""
    path = Path(folder) / "seqinfo.ini"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[Sequence]\n"
        f"name={info.name}\nimDir={info.im_dir}\nframeRate={info.frame_rate:g}\n"
        f"seqLength={info.length}\nimWidth={info.width}\nimHeight={info.height}\n"
        f"imExt={info.im_ext}\n"
    )
    return path


def read_mot_txt(path: Path, min_columns: int = 6) -> np.ndarray:
    """A MOT text file as a float array ``[rows, columns]`` (empty files give zero rows)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    text = path.read_text().strip()
    if not text:
        return np.zeros((0, max(min_columns, 9)))
    try:
        rows = [
            [float(v) for v in line.replace(" ", "").split(",") if v] for line in text.splitlines()
        ]
    except ValueError as exc:
        raise ValueError(f"{path}: not a comma-separated MOT file ({exc})") from exc
    width = max(len(r) for r in rows)
    if min(len(r) for r in rows) < min_columns:
        raise ValueError(f"{path}: rows need at least {min_columns} columns")
    arr = np.full((len(rows), width), -1.0)
    for i, r in enumerate(rows):
        arr[i, : len(r)] = r
    return arr


def read_gt(path: Path) -> np.ndarray:
    """Ground truth rows ``[M, 9]`` from a file of 6 to 10 columns: a missing consider flag,
    class or visibility (absent, or -1 as results files write them) counts the box (1)."""
    rows = read_mot_txt(path)
    out = np.full((len(rows), 9), -1.0)
    out[:, : min(9, rows.shape[1])] = rows[:, :9]
    out[:, 6:9][out[:, 6:9] == -1] = 1.0
    return out


def write_results(path: Path, rows: np.ndarray | list) -> Path:
    """Tracker output in the MOTChallenge result format: frame,id,x,y,w,h,conf,-1,-1,-1."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.asarray(rows, dtype=np.float64).reshape(-1, 6)
    with path.open("w") as f:
        for fr, tid, x, y, w, h in arr:
            f.write(f"{int(fr)},{int(tid)},{x:.2f},{y:.2f},{w:.2f},{h:.2f},1,-1,-1,-1\n")
    return path


def write_gt(path: Path, rows: np.ndarray) -> Path:
    """Ground truth rows ``[frame, id, x, y, w, h, consider, class, visibility]``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for fr, tid, x, y, w, h, flag, cls, vis in np.asarray(rows).reshape(-1, 9):
            f.write(
                f"{int(fr)},{int(tid)},{x:.2f},{y:.2f},{w:.2f},{h:.2f},{int(flag)},{int(cls)},{vis:.3f}\n"
            )
    return path


def truth_rows(frame: int, truth) -> list[list[float]]:
    """A scene's FrameTruth as gt.txt rows (class 1 = pedestrian, always considered)."""
    return [
        [frame, int(i), *map(float, box), 1, 1, float(v)]
        for i, box, v in zip(truth.ids, truth.tlwh, truth.visibility, strict=True)
    ]


def write_mot_folder(
    folder: Path, images: list[np.ndarray], gt: np.ndarray, fps: float, name: str | None = None
) -> Path:
    """img1/ JPEGs (RGB in), gt/gt.txt and seqinfo.ini."""
    cv2 = _cv2()
    folder = Path(folder)
    (folder / "img1").mkdir(parents=True, exist_ok=True)
    for i, img in enumerate(images, start=1):
        cv2.imwrite(str(folder / "img1" / f"{i:06d}.jpg"), cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
    write_gt(folder / "gt" / "gt.txt", gt)
    h, w = images[0].shape[:2] if images else (0, 0)
    write_seqinfo(folder, SeqInfo(name or folder.name, fps, len(images), w, h))
    return folder


def rows_by_frame(rows: np.ndarray) -> dict[int, np.ndarray]:
    """Group rows by their first column (the frame number)."""
    rows = np.asarray(rows)
    if not len(rows):
        return {}
    frames = rows[:, 0].astype(np.int64)
    order = np.argsort(frames, kind="stable")
    uniq, starts = np.unique(frames[order], return_index=True)
    parts = np.split(rows[order], starts[1:])
    return {int(f): p for f, p in zip(uniq, parts, strict=True)}


class MotFolder:
    """A MOTChallenge sequence folder: frames (RGB), det.txt and gt.txt when present."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise FileNotFoundError(f"no such folder: {folder}")
        self.info = read_seqinfo(self.folder)
        img_dir = self.folder / self.info.im_dir
        if not img_dir.is_dir():
            raise FileNotFoundError(f"no image folder {img_dir}")
        self.images = sorted(p for p in img_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        gt = self.folder / "gt" / "gt.txt"
        det = self.folder / "det" / "det.txt"
        self.gt = read_mot_txt(gt) if gt.is_file() else None
        self.det = read_mot_txt(det) if det.is_file() else None

    def __len__(self) -> int:
        return len(self.images)

    def frames(self, limit: int | None = None) -> Iterator[np.ndarray]:
        cv2 = _cv2()
        for i, p in enumerate(self.images):
            if limit is not None and i >= limit:
                return
            img = cv2.imread(str(p), cv2.IMREAD_COLOR)
            if img is None:
                raise ValueError(f"cannot read image {p}")
            yield cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def read_deepsort_npy(path: Path, feature_dim: int | None = None) -> dict[int, tuple]:
    """Deep SORT's detection file: frame -> (tlwh ``[N, 4]``, confidence ``[N]``, features ``[N, D]``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such detection file: {path}")
    arr = np.load(path, allow_pickle=False)
    if arr.ndim != 2 or arr.shape[1] <= 10:
        raise ValueError(
            f"{path}: expected rows of 10 MOT columns + a feature, got shape {arr.shape}"
        )
    if feature_dim is not None and arr.shape[1] - 10 != feature_dim:
        raise ValueError(f"{path}: features have {arr.shape[1] - 10} dims, expected {feature_dim}")
    return {
        f: (rows[:, 2:6].astype(np.float64), rows[:, 6].astype(np.float64), rows[:, 10:])
        for f, rows in rows_by_frame(arr).items()
    }


def write_deepsort_npy(path: Path, frames: dict[int, tuple]) -> Path:
    """Inverse of `read_deepsort_npy` (id, class and 3D columns are -1 as in the published files)."""
    rows = []
    for f, (tlwh, conf, feat) in sorted(frames.items()):
        for box, c, v in zip(tlwh, conf, feat, strict=True):
            rows.append(np.concatenate([[f, -1, *box, c, -1, -1, -1], v]))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.asarray(rows, dtype=np.float32))
    return path


def iter_video(source: str | int, limit: int | None = None) -> Iterator[np.ndarray]:
    """RGB frames from a video file or a webcam index, through OpenCV."""
    return capture_frames(source, limit)


def id_colour(track_id: int) -> tuple[int, int, int]:
    """A stable, distinct RGB colour per track id (golden-ratio hues)."""
    import colorsys

    r, g, b = colorsys.hsv_to_rgb((track_id * 0.618033988749895) % 1.0, 0.85, 1.0)
    return int(r * 255), int(g * 255), int(b * 255)


class AnnotatedVideo:
    """Writes frames with boxes, track ids and trails (the last `trail` centres) to an MP4/AVI."""

    def __init__(self, path: Path, fps: float = 25.0, trail: int = 30) -> None:
        self.path, self.fps, self.trail = Path(path), fps, trail
        self.writer: Any = None
        self.history: dict[int, list[tuple[int, int]]] = {}

    def annotate(self, img: np.ndarray, tracks: list) -> np.ndarray:
        """Boxes, ids and trails drawn into ``img`` (BGR, ``[H, W, 3]``), which is returned."""
        cv2 = _cv2()
        thick = max(1, img.shape[0] // 400)
        for t in tracks:
            x, y, w, h = (round(v) for v in t.tlwh)
            r, g, b = id_colour(t.track_id)
            hist = self.history.setdefault(t.track_id, [])
            hist.append((x + w // 2, y + h))
            del hist[: -self.trail]
            cv2.rectangle(img, (x, y), (x + w, y + h), (b, g, r), thick)
            cv2.putText(
                img,
                str(t.track_id),
                (x, max(y - 4, 10)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.5 * thick,
                (b, g, r),
                thick,
            )
            if len(hist) > 1:
                cv2.polylines(img, [np.array(hist, np.int32)], False, (b, g, r), thick)
        return img

    def write(self, rgb: np.ndarray, tracks: list) -> None:
        """Write an RGB frame with its tracks drawn."""
        cv2 = _cv2()
        self.write_bgr(cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR), tracks)

    def write_bgr(self, img: np.ndarray, tracks: list) -> None:
        """Write a BGR frame with its tracks drawn into it (``img`` is changed)."""
        cv2 = _cv2()
        img = self.annotate(img, tracks)
        if self.writer is None:
            if self.path.suffix.lower() not in (".mp4", ".avi"):
                raise ValueError(f"unsupported video type {self.path.suffix!r}: use .mp4 or .avi")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fourcc = cv2.VideoWriter_fourcc(
                *("mp4v" if self.path.suffix.lower() == ".mp4" else "MJPG")
            )
            self.writer = cv2.VideoWriter(str(self.path), fourcc, self.fps, img.shape[1::-1])
            if not self.writer.isOpened():
                raise RuntimeError(f"OpenCV cannot write {self.path}")
        self.writer.write(img)

    def close(self) -> Path:
        if self.writer is not None:
            self.writer.release()
        return self.path
