"""Real datasets in their published layouts, indexed without a deep-learning framework.

Both the PyTorch and the TensorFlow runners read data through this module, so the two frameworks see
the same files, labels and preprocessing. Only numpy is needed at import time; Pillow (images),
nibabel (NIfTI) and scipy (Flowers-102's MATLAB files) are imported when a dataset needs them.

Every missing or unreadable file raises :class:`DatasetError` with a one-line message naming it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

VOC_CLASSES: tuple[str, ...] = (
    "aeroplane",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "bus",
    "car",
    "cat",
    "chair",
    "cow",
    "diningtable",
    "dog",
    "horse",
    "motorbike",
    "person",
    "pottedplant",
    "sheep",
    "sofa",
    "train",
    "tvmonitor",
)
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".webp")
FLOWERS_SPLITS = {"train": "trnid", "val": "valid", "test": "tstid"}

# MLPerf Training's KiTS19 reference (image_segmentation/pytorch/preprocess_dataset.py).
KITS_SPACING = (1.6, 1.2, 1.2)
KITS_CLIP = (-79.0, 304.0)
KITS_MEAN, KITS_STD = 101.0, 76.9
KITS_FIRST_TEST_CASE = 210  # cases 210.. are KiTS19's unlabelled test set; MLPerf uses 0..209


class DatasetError(Exception):
    """A dataset file is missing or unreadable; the message names it."""


def index_for(task: str, data: str, split: str = "train") -> tuple[Any, str]:
    """(the index, its layout) of the dataset a workload of ``task`` reads from ``data``: a
    ``ClassificationIndex``, a list of ``VocSample`` or of ``KitsCase``. DatasetError when the
    layout is not the task's, a file is missing, or the split holds no sample."""
    if task == "classification":
        index: Any = index_classification(data, split)
        layout, empty = index.layout, not index.files
    elif task == "detection":
        index, layout = index_voc(data, split), "voc"
        empty = not index
    else:
        index, layout = index_kits19(data), "kits19"
        empty = not index
    if empty:
        raise DatasetError(f"no samples in {data} (split {split})")
    return index, layout


def layout_problem(task: str, data: str, split: str = "train") -> str | None:
    """Why ``data`` is not a dataset in the layout ``task`` reads, in one line, or None. Run
    before a job is queued, so it looks at the layout only (the folders and index files that name
    it, no image listed or decoded: ImageNet's 1.28 million files are the runner's to index)."""
    root = Path(data)
    try:
        if not root.is_dir():
            raise DatasetError(f"dataset folder not found: {root}")
        if task == "classification":
            flowers = any((c / "imagelabels.mat").exists() for c in (root, root / "flowers-102"))
            split_dir = root / split
            if not flowers and not split_dir.is_dir():
                raise DatasetError(
                    f"not a known dataset layout: {root} (expected Flowers-102's imagelabels.mat "
                    f"or an ImageFolder split folder {split_dir})"
                )
            if not flowers and not any(d.is_dir() for d in split_dir.iterdir()):
                raise DatasetError(f"no class folders in {split_dir}")
        elif task == "detection":
            for year in _voc_year_dirs(root):
                list_file = year / "ImageSets" / "Main" / f"{split}.txt"
                if not list_file.is_file():
                    raise DatasetError(f"missing dataset file: {list_file}")
        elif not any(root.glob("case_[0-9]*")) and not any((root / "data").glob("case_[0-9]*")):
            raise DatasetError(f"no KiTS19 case_XXXXX folders under {root}")
    except DatasetError as exc:
        return str(exc)
    except OSError as exc:  # an unreadable folder
        return f"cannot read {root}: {exc.strerror or exc}"
    return None


@dataclass(frozen=True)
class ClassificationIndex:
    """A classification dataset's image files and labels (Flowers-102 or ImageNet layout)."""

    files: list[Path]
    labels: list[int]
    num_classes: int
    layout: str  # "flowers102" or "imagenet"


@dataclass(frozen=True)
class VocSample:
    """One Pascal VOC image with its boxes (in pixels) and class labels."""

    image: Path
    boxes: np.ndarray  # (N, 4) float32, x1 y1 x2 y2 in pixels
    labels: np.ndarray  # (N,) int64 in 1..20 (0 is the background)


@dataclass(frozen=True)
class KitsCase:
    """One KiTS19 case: its imaging and segmentation NIfTI files."""

    case_id: str
    imaging: Path
    segmentation: Path


# --- classification --------------------------------------------------------------------------------


def index_classification(path: str | Path, split: str = "train") -> ClassificationIndex:
    """Flowers-102 as torchvision lays it out (``[root/]flowers-102/jpg``, ``imagelabels.mat``,
    ``setid.mat``; split train|val|test) or an ImageNet-style ImageFolder (``root/<split>/<wnid>/*``)."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"dataset folder not found: {root}")
    for cand in (root, root / "flowers-102"):
        if (cand / "imagelabels.mat").exists() or (cand / "setid.mat").exists():
            return _index_flowers(cand, split)
    return _index_imagefolder(root, split)


def _loadmat(file: Path) -> dict[str, Any]:
    try:
        from scipy.io import loadmat
    except ImportError:
        raise DatasetError(f"reading {file} needs scipy (pip install scipy)") from None
    if not file.is_file():
        raise DatasetError(f"missing dataset file: {file}")
    try:
        return loadmat(str(file))
    except Exception as exc:  # scipy raises several types for a damaged file
        raise DatasetError(f"cannot read {file}: {exc}") from None


def _index_flowers(base: Path, split: str) -> ClassificationIndex:
    if split not in FLOWERS_SPLITS:
        raise DatasetError(f"Flowers-102 has splits {', '.join(FLOWERS_SPLITS)}, not {split!r}")
    labels_file, setid_file = base / "imagelabels.mat", base / "setid.mat"
    labels_mat, setid = _loadmat(labels_file), _loadmat(setid_file)
    if "labels" not in labels_mat:
        raise DatasetError(f"cannot read {labels_file}: no 'labels' array")
    key = FLOWERS_SPLITS[split]
    if key not in setid:
        raise DatasetError(f"cannot read {setid_file}: no {key!r} array")
    all_labels = np.asarray(labels_mat["labels"]).ravel().astype(np.int64)
    ids = np.asarray(setid[key]).ravel().astype(np.int64)
    files, labels = [], []
    for image_id in ids:
        if not 1 <= image_id <= len(all_labels):
            raise DatasetError(f"{setid_file}: image id {image_id} has no label in {labels_file}")
        file = base / "jpg" / f"image_{image_id:05d}.jpg"
        if not file.is_file():
            raise DatasetError(f"missing dataset file: {file}")
        files.append(file)
        labels.append(int(all_labels[image_id - 1]) - 1)  # 1..102 -> 0..101
    return ClassificationIndex(files, labels, 102, "flowers102")


def _index_imagefolder(root: Path, split: str) -> ClassificationIndex:
    split_dir = root / split
    if not split_dir.is_dir():
        raise DatasetError(
            f"not a known dataset layout: {root} (expected Flowers-102's imagelabels.mat or an "
            f"ImageFolder split folder {split_dir})"
        )
    classes = sorted(d.name for d in split_dir.iterdir() if d.is_dir())
    if not classes:
        raise DatasetError(f"no class folders in {split_dir}")
    files, labels = [], []
    for label, name in enumerate(classes):
        for file in sorted((split_dir / name).iterdir()):
            if file.suffix.lower() in IMAGE_EXTENSIONS:
                files.append(file)
                labels.append(label)
    if not files:
        raise DatasetError(f"no images in {split_dir}")
    return ClassificationIndex(files, labels, len(classes), "imagenet")


def load_image(path: str | Path, size: int | None) -> np.ndarray:
    """An RGB image as HWC uint8, shorter side resized to ``size`` then centre-cropped square
    (``size=None``: the image as stored, as detection models take it)."""
    from PIL import Image

    file = Path(path)
    try:
        with Image.open(file) as img:
            img.load()
            rgb = img.convert("RGB")
    except FileNotFoundError:
        raise DatasetError(f"missing dataset file: {file}") from None
    except Exception as exc:  # PIL raises OSError, SyntaxError, ValueError for damaged images
        raise DatasetError(f"cannot decode image {file}: {exc}") from None
    if size is None:
        return np.asarray(rgb, dtype=np.uint8)
    w, h = rgb.size
    scale = size / min(w, h)
    rw, rh = max(size, round(w * scale)), max(size, round(h * scale))
    rgb = rgb.resize((rw, rh), Image.Resampling.BILINEAR)
    left, top = (rw - size) // 2, (rh - size) // 2
    return np.asarray(rgb.crop((left, top, left + size, top + size)), dtype=np.uint8)


# --- Pascal VOC ------------------------------------------------------------------------------------


def _voc_year_dirs(root: Path) -> list[Path]:
    for base in (root, root / "VOCdevkit"):
        if re.fullmatch(r"VOC\d{4}", base.name) and base.is_dir():
            return [base]
        years = sorted(d for d in base.glob("VOC[0-9][0-9][0-9][0-9]") if d.is_dir())
        if years:
            return years
    raise DatasetError(f"no VOCdevkit/VOC2007 or VOC2012 folder under {root}")


def index_voc(path: str | Path, split: str = "train") -> list[VocSample]:
    """Pascal VOC (``VOCdevkit/VOC2007`` and/or ``VOC2012``: ``ImageSets/Main/<split>.txt``,
    ``Annotations/*.xml``, ``JPEGImages/*.jpg``). Several years are concatenated, as in 07+12."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"dataset folder not found: {root}")
    samples: list[VocSample] = []
    for year in _voc_year_dirs(root):
        list_file = year / "ImageSets" / "Main" / f"{split}.txt"
        if not list_file.is_file():
            raise DatasetError(f"missing dataset file: {list_file}")
        for line in list_file.read_text(encoding="utf-8", errors="replace").splitlines():
            name = line.strip().split(" ")[0]
            if not name:
                continue
            image = year / "JPEGImages" / f"{name}.jpg"
            if not image.is_file():
                raise DatasetError(f"missing dataset file: {image}")
            boxes, labels = _parse_voc_xml(year / "Annotations" / f"{name}.xml")
            samples.append(VocSample(image, boxes, labels))
    return samples


def _parse_voc_xml(file: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        tree = ET.parse(file)
    except FileNotFoundError:
        raise DatasetError(f"missing dataset file: {file}") from None
    except ET.ParseError as exc:
        raise DatasetError(f"cannot parse annotation {file}: {exc}") from None
    boxes, labels = [], []
    for obj in tree.getroot().iter("object"):
        name = (obj.findtext("name") or "").strip()
        if name not in VOC_CLASSES:
            raise DatasetError(f"{file}: unknown VOC class {name!r}")
        bb = obj.find("bndbox")
        try:
            assert bb is not None
            # VOC boxes are 1-based inclusive pixel indices; 0-based xyxy as torchvision expects.
            x1, y1, x2, y2 = (float(bb.findtext(k) or "") for k in ("xmin", "ymin", "xmax", "ymax"))
        except (AssertionError, ValueError):
            raise DatasetError(f"{file}: object {name!r} has no valid bndbox") from None
        boxes.append((x1 - 1, y1 - 1, x2, y2))
        labels.append(VOC_CLASSES.index(name) + 1)
    return (
        np.asarray(boxes, dtype=np.float32).reshape(-1, 4),
        np.asarray(labels, dtype=np.int64),
    )


# --- KiTS19 ----------------------------------------------------------------------------------------


def index_kits19(path: str | Path) -> list[KitsCase]:
    """KiTS19 (``[root/data/]case_XXXXX/imaging.nii.gz`` + ``segmentation.nii.gz``). The published
    test cases (210 and later) have no segmentation and are left out, as MLPerf does."""
    root = Path(path)
    if not root.is_dir():
        raise DatasetError(f"dataset folder not found: {root}")
    base = root if any(root.glob("case_*")) else root / "data"
    case_dirs = sorted(d for d in base.glob("case_[0-9]*") if d.is_dir())
    if not case_dirs:
        raise DatasetError(f"no KiTS19 case_XXXXX folders under {root}")
    cases = []
    for d in case_dirs:
        imaging, seg = d / "imaging.nii.gz", d / "segmentation.nii.gz"
        if not imaging.is_file():
            raise DatasetError(f"missing dataset file: {imaging}")
        if not seg.is_file():
            number = d.name.removeprefix("case_")
            if number.isdigit() and int(number) >= KITS_FIRST_TEST_CASE:
                continue
            raise DatasetError(f"missing dataset file: {seg}")
        cases.append(KitsCase(d.name, imaging, seg))
    if not cases:
        raise DatasetError(f"no labelled KiTS19 cases under {root}")
    for case in cases:
        check_kits_case(case)
    return cases


def _nifti_shape(file: Path) -> tuple[int, ...]:
    import nibabel

    try:
        return tuple(nibabel.load(str(file)).shape)  # type: ignore[attr-defined]
    except Exception as exc:  # nibabel/gzip raise many types for a damaged header
        raise DatasetError(f"cannot read NIfTI {file}: {type(exc).__name__}: {exc}") from None


def check_kits_case(case: KitsCase) -> None:
    """What can be checked of a case from its headers alone (no voxel is decoded): both files are
    readable 3D volumes of the same shape. Run when the dataset is indexed, so a bad case is
    reported at once, not when a loader reaches it."""
    image, label = _nifti_shape(case.imaging), _nifti_shape(case.segmentation)
    if len(image) != 3:
        raise DatasetError(f"{case.imaging}: expected a 3D volume, got shape {image}")
    if image != label:
        raise DatasetError(f"{case.segmentation}: shape {label} differs from imaging {image}")


def _load_nifti(file: Path) -> tuple[np.ndarray, tuple[float, ...]]:
    import nibabel

    if not file.is_file():
        raise DatasetError(f"missing dataset file: {file}")
    try:
        img = nibabel.load(str(file))
        spacing = tuple(float(s) for s in img.header["pixdim"][1:4])  # type: ignore[index]
        data = np.asarray(img.dataobj)  # type: ignore[attr-defined]
    except Exception as exc:  # nibabel/gzip/zlib raise many types for a damaged file
        raise DatasetError(f"cannot read NIfTI {file}: {type(exc).__name__}: {exc}") from None
    if data.ndim != 3:
        raise DatasetError(f"{file}: expected a 3D volume, got shape {data.shape}")
    return data, spacing


def _linear_axis(a: np.ndarray, axis: int, n: int) -> np.ndarray:
    """Linear resize of one axis with corners aligned (torch's trilinear, align_corners=True)."""
    size = a.shape[axis]
    if size == n:
        return a
    pos = np.linspace(0.0, size - 1, n) if n > 1 else np.zeros(1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, size - 1)
    shape = [1] * a.ndim
    shape[axis] = n
    w = (pos - lo).astype(np.float32).reshape(shape)
    return np.take(a, lo, axis=axis) * (1 - w) + np.take(a, hi, axis=axis) * w


def _nearest_axis(a: np.ndarray, axis: int, n: int) -> np.ndarray:
    """Nearest resize of one axis, index floor(i * in / out) (torch's mode="nearest")."""
    size = a.shape[axis]
    idx = np.minimum(np.floor(np.arange(n) * (size / n)).astype(np.int64), size - 1)
    return np.take(a, idx, axis=axis)


def load_kits_case(
    case: KitsCase, spacing: Sequence[float] = KITS_SPACING
) -> tuple[np.ndarray, np.ndarray]:
    """(image float32, label uint8), both (D, H, W), preprocessed like MLPerf's KiTS19 reference:
    resampled to ``spacing`` mm (trilinear image, nearest label), clipped to -79..304 HU and
    normalized with mean 101.0 and std 76.9."""
    image, image_spacing = _load_nifti(case.imaging)
    label, _ = _load_nifti(case.segmentation)
    if image.shape != label.shape:
        raise DatasetError(
            f"{case.segmentation}: shape {label.shape} differs from imaging {image.shape}"
        )
    image = image.astype(np.float32)
    label = label.astype(np.uint8)
    if tuple(image_spacing) != tuple(spacing):
        shape = np.rint(np.array(image_spacing) / np.array(spacing) * np.array(image.shape))
        new_shape = [max(1, int(s)) for s in shape]
        for axis, n in enumerate(new_shape):
            image = _linear_axis(image, axis, n)
            label = _nearest_axis(label, axis, n)
    image = np.clip(image, *KITS_CLIP)
    image = ((image - KITS_MEAN) / KITS_STD).astype(np.float32)
    return image, label


def random_crop_3d(
    image: np.ndarray,
    label: np.ndarray,
    size: int | Sequence[int],
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """A random ``size`` crop of a (D, H, W) pair; an axis shorter than the crop is first padded on
    both sides by repeating its edge (MLPerf's pad_to_min_shape)."""
    dims = (size, size, size) if isinstance(size, int) else tuple(size)
    pad = [max(0, d - s) for d, s in zip(dims, image.shape, strict=True)]
    if any(pad):
        widths = [(p // 2, p - p // 2) for p in pad]
        image = np.pad(image, widths, mode="edge")
        label = np.pad(label, widths, mode="edge")
    starts = [int(rng.integers(0, s - d + 1)) for d, s in zip(dims, image.shape, strict=True)]
    sl = tuple(slice(st, st + d) for st, d in zip(starts, dims, strict=True))
    return np.ascontiguousarray(image[sl]), np.ascontiguousarray(label[sl])
