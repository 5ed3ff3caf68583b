"""Tiny datasets written in exactly their published layouts (real JPEG, .mat and NIfTI files).

Each ``make_*`` returns the path a user would pass to ``--data``. Shared by the PyTorch and the
TensorFlow runner tests.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from zbench.runners.datasets import VOC_CLASSES


def _jpeg(path: Path, size: tuple[int, int], seed: int) -> None:
    from PIL import Image

    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path, format="JPEG", quality=85)


def make_flowers102(root: Path, n: int = 12, size: tuple[int, int] = (40, 32)) -> Path:
    """``root/flowers-102/{jpg/image_00001.jpg.., imagelabels.mat, setid.mat}`` as torchvision
    downloads it. Labels 1..102 cycle; the images split evenly into train/val/test."""
    from scipy.io import savemat

    base = root / "flowers-102"
    for i in range(1, n + 1):
        _jpeg(base / "jpg" / f"image_{i:05d}.jpg", size, seed=i)
    labels = np.array([[(i * 7) % 102 + 1 for i in range(n)]], dtype=np.uint8)
    savemat(base / "imagelabels.mat", {"labels": labels})
    ids = np.arange(1, n + 1, dtype=np.uint16)
    savemat(
        base / "setid.mat",
        {"trnid": ids[0::3][None], "valid": ids[1::3][None], "tstid": ids[2::3][None]},
    )
    return root


def make_imagefolder(
    root: Path,
    classes: tuple[str, ...] = ("n01440764", "n01443537", "n01484850"),
    per_class: int = 3,
    splits: tuple[str, ...] = ("train", "val"),
    size: tuple[int, int] = (48, 36),
) -> Path:
    """ImageNet's ``root/<split>/<wnid>/<wnid>_<n>.JPEG`` (ImageFolder) layout."""
    for split in splits:
        for c, wnid in enumerate(classes):
            for i in range(per_class):
                _jpeg(root / split / wnid / f"{wnid}_{i}.JPEG", size, seed=100 * c + i)
    return root


def make_voc(root: Path, year: str = "2007", n: int = 4, size: tuple[int, int] = (64, 48)) -> Path:
    """``root/VOCdevkit/VOC<year>/{ImageSets/Main/<split>.txt, Annotations/*.xml, JPEGImages/*.jpg}``
    with one or two objects per image; returns ``root``."""
    base = root / "VOCdevkit" / f"VOC{year}"
    (base / "ImageSets" / "Main").mkdir(parents=True, exist_ok=True)
    (base / "Annotations").mkdir(parents=True, exist_ok=True)
    names = [f"{year}_{i:06d}" for i in range(n)]
    for i, name in enumerate(names):
        _jpeg(base / "JPEGImages" / f"{name}.jpg", size, seed=i)
        objects = []
        for k in range(1 + i % 2):
            cls = VOC_CLASSES[(i + 5 * k) % len(VOC_CLASSES)]
            x1, y1 = 2 + 3 * k, 3 + 2 * k
            objects.append(
                f"<object><name>{cls}</name><difficult>0</difficult><bndbox><xmin>{x1}</xmin>"
                f"<ymin>{y1}</ymin><xmax>{x1 + 20}</xmax><ymax>{y1 + 15}</ymax></bndbox></object>"
            )
        xml = (
            f"<annotation><folder>VOC{year}</folder><filename>{name}.jpg</filename><size>"
            f"<width>{size[0]}</width><height>{size[1]}</height><depth>3</depth></size>"
            f"{''.join(objects)}</annotation>"
        )
        (base / "Annotations" / f"{name}.xml").write_text(xml, encoding="utf-8")
    half = max(1, n // 2)
    main = base / "ImageSets" / "Main"
    (main / "train.txt").write_text("\n".join(names[:half]) + "\n", encoding="utf-8")
    (main / "val.txt").write_text("\n".join(names[half:]) + "\n", encoding="utf-8")
    (main / "trainval.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    return root


def make_kits19(
    root: Path,
    cases: int = 2,
    shape: tuple[int, int, int] = (12, 24, 24),
    spacing: tuple[float, float, float] = (3.2, 1.2, 1.2),
) -> Path:
    """KiTS19's ``root/data/case_XXXXX/{imaging,segmentation}.nii.gz`` (slices first, as published);
    returns ``root/data``."""
    import nibabel

    data = root / "data"
    rng = np.random.default_rng(0)
    affine = np.diag([*spacing, 1.0])
    for c in range(cases):
        case = data / f"case_{c:05d}"
        case.mkdir(parents=True, exist_ok=True)
        hu = rng.uniform(-200, 400, size=shape).astype(np.float32)
        seg = np.zeros(shape, dtype=np.uint8)
        d, h, w = shape
        seg[d // 4 : 3 * d // 4, h // 4 : 3 * h // 4, w // 4 : 3 * w // 4] = 1
        seg[d // 2, h // 2, w // 2] = 2
        nibabel.save(nibabel.Nifti1Image(hu, affine), case / "imaging.nii.gz")
        nibabel.save(nibabel.Nifti1Image(seg, affine), case / "segmentation.nii.gz")
    return data
