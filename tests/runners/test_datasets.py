"""The dataset indexers on tiny datasets in their published layouts, including damaged ones."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pytest

from tests.datasets_fixtures import make_flowers102, make_imagefolder, make_kits19, make_voc
from zbench.runners.datasets import (
    KITS_MEAN,
    KITS_STD,
    VOC_CLASSES,
    DatasetError,
    index_classification,
    index_kits19,
    index_voc,
    load_image,
    load_kits_case,
    random_crop_3d,
)


def test_flowers102_splits_and_labels(tmp_path: Path) -> None:
    root = make_flowers102(tmp_path, n=12)
    train = index_classification(root, "train")
    assert train.layout == "flowers102" and train.num_classes == 102
    assert [f.name for f in train.files] == [f"image_{i:05d}.jpg" for i in (1, 4, 7, 10)]
    # label of image i (1-based) is ((i-1)*7 % 102) + 1 in the .mat; 0-based here
    assert train.labels == [((i - 1) * 7) % 102 for i in (1, 4, 7, 10)]
    assert len(index_classification(root / "flowers-102", "test").files) == 4
    with pytest.raises(DatasetError, match="splits"):
        index_classification(root, "bogus")


def test_flowers102_missing_and_corrupt_files(tmp_path: Path) -> None:
    root = make_flowers102(tmp_path, n=6)
    (root / "flowers-102" / "jpg" / "image_00004.jpg").unlink()
    with pytest.raises(DatasetError, match=re.escape("image_00004.jpg")):
        index_classification(root, "train")
    (root / "flowers-102" / "setid.mat").write_bytes(b"not a mat file")
    with pytest.raises(DatasetError, match=re.escape("setid.mat")):
        index_classification(root, "train")


def test_imagefolder(tmp_path: Path) -> None:
    root = make_imagefolder(tmp_path, per_class=2)
    idx = index_classification(root, "val")
    assert idx.layout == "imagenet" and idx.num_classes == 3
    assert idx.labels == [0, 0, 1, 1, 2, 2]
    assert idx.files[2].parent.name == "n01443537"
    with pytest.raises(DatasetError, match="test"):
        index_classification(root, "test")
    with pytest.raises(DatasetError, match="not found"):
        index_classification(tmp_path / "nowhere")


def test_load_image_resizes_and_names_corrupt_file(tmp_path: Path) -> None:
    root = make_imagefolder(tmp_path, per_class=1)
    file = index_classification(root).files[0]
    arr = load_image(file, 24)
    assert arr.shape == (24, 24, 3) and arr.dtype == np.uint8
    file.write_bytes(file.read_bytes()[:60])  # truncated JPEG
    with pytest.raises(DatasetError, match=re.escape(file.name)):
        load_image(file, 24)
    with pytest.raises(DatasetError, match=re.escape("gone.jpg")):
        load_image(tmp_path / "gone.jpg", 24)


def test_voc_boxes_and_labels(tmp_path: Path) -> None:
    root = make_voc(tmp_path, year="2012", n=4)
    samples = index_voc(root, "trainval")
    assert len(samples) == 4
    s = samples[1]
    assert s.boxes.dtype == np.float32 and s.boxes.shape == (2, 4)
    assert s.labels.dtype == np.int64
    assert s.labels.tolist() == [VOC_CLASSES.index(VOC_CLASSES[1]) + 1, 7]
    assert s.boxes[0].tolist() == [1.0, 2.0, 22.0, 18.0]  # 1-based inclusive -> 0-based xyxy
    # The year folder itself and VOCdevkit both work
    assert len(index_voc(root / "VOCdevkit" / "VOC2012", "train")) == 2
    assert len(index_voc(root / "VOCdevkit", "val")) == 2


def test_voc_07_plus_12_and_errors(tmp_path: Path) -> None:
    make_voc(tmp_path, year="2007", n=2)
    make_voc(tmp_path, year="2012", n=2)
    assert len(index_voc(tmp_path, "trainval")) == 4
    ann = tmp_path / "VOCdevkit" / "VOC2007" / "Annotations" / "2007_000001.xml"
    ann.write_text("<annotation><object>", encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape("2007_000001.xml")):
        index_voc(tmp_path, "trainval")
    ann.unlink()
    with pytest.raises(DatasetError, match=r"missing dataset file: .*2007_000001\.xml"):
        index_voc(tmp_path, "trainval")
    with pytest.raises(DatasetError, match=re.escape("test.txt")):
        index_voc(tmp_path, "test")
    with pytest.raises(DatasetError, match="VOCdevkit"):
        index_voc(tmp_path / "VOCdevkit" / "VOC2007" / "Annotations")


def test_kits19_index_resample_normalize(tmp_path: Path) -> None:
    data = make_kits19(tmp_path, cases=2, shape=(10, 20, 16), spacing=(3.2, 1.2, 0.6))
    cases = index_kits19(data)
    assert [c.case_id for c in cases] == ["case_00000", "case_00001"]
    assert index_kits19(tmp_path)[0].imaging == cases[0].imaging  # the repo root works too
    image, label = load_kits_case(cases[0])
    assert image.dtype == np.float32 and label.dtype == np.uint8
    assert image.shape == label.shape == (20, 20, 8)  # rint(spacing / target * shape)
    lo, hi = (-79 - KITS_MEAN) / KITS_STD, (304 - KITS_MEAN) / KITS_STD
    assert image.min() >= lo - 1e-5 and image.max() <= hi + 1e-5
    assert set(np.unique(label)) <= {0, 1, 2} and (label == 1).any()


def test_kits19_resample_matches_torch_reference(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    data = make_kits19(tmp_path, cases=1, shape=(6, 10, 8), spacing=(2.4, 1.8, 0.9))
    case = index_kits19(data)[0]
    image, label = load_kits_case(case)
    import nibabel

    raw = torch.from_numpy(np.asarray(nibabel.load(case.imaging).dataobj, dtype=np.float32))
    seg = torch.from_numpy(np.asarray(nibabel.load(case.segmentation).dataobj).astype(np.uint8))
    size = list(image.shape)
    ref = torch.nn.functional.interpolate(
        raw[None, None], size=size, mode="trilinear", align_corners=True
    )[0, 0].numpy()
    ref = (np.clip(ref, -79, 304) - 101.0) / 76.9
    ref_label = torch.nn.functional.interpolate(seg[None, None].float(), size=size, mode="nearest")
    np.testing.assert_allclose(image, ref, atol=1e-4)
    np.testing.assert_array_equal(label, ref_label[0, 0].numpy().astype(np.uint8))


def test_kits19_errors(tmp_path: Path) -> None:
    data = make_kits19(tmp_path, cases=2)
    test_case = data / "case_00210"
    test_case.mkdir()
    (test_case / "imaging.nii.gz").write_bytes(b"")
    assert len(index_kits19(data)) == 2  # the unlabelled test set is left out
    case = index_kits19(data)[1]
    bad = data / "case_00001" / "imaging.nii.gz"
    bad.write_bytes(gzip.compress(b"garbage"))
    with pytest.raises(DatasetError, match=re.escape("case_00001/imaging.nii.gz")):
        load_kits_case(case)
    with pytest.raises(DatasetError, match=re.escape("case_00001/imaging.nii.gz")):
        index_kits19(data)  # the headers are checked when the dataset is indexed
    bad.write_bytes((data / "case_00000" / "imaging.nii.gz").read_bytes())  # readable again
    other = make_kits19(tmp_path / "other", cases=1, shape=(5, 6, 7))
    (other / "case_00000" / "segmentation.nii.gz").replace(bad.parent / "segmentation.nii.gz")
    with pytest.raises(DatasetError, match="differs from imaging"):
        index_kits19(data)  # a shape mismatch is found without decoding a voxel
    (data / "case_00000" / "segmentation.nii.gz").unlink()
    with pytest.raises(DatasetError, match=re.escape("case_00000/segmentation.nii.gz")):
        index_kits19(data)
    with pytest.raises(DatasetError, match="case_"):
        index_kits19(tmp_path / "data" / "case_00001")


def test_random_crop_3d_pads_and_crops() -> None:
    rng = np.random.default_rng(0)
    image = np.arange(4 * 10 * 12, dtype=np.float32).reshape(4, 10, 12)
    label = (image > 100).astype(np.uint8)
    ci, cl = random_crop_3d(image, label, 8, rng)
    assert ci.shape == cl.shape == (8, 8, 8)
    assert ci[0, 0, 0] == ci[1, 0, 0]  # depth 4 -> 8 padded with edge values on both sides
    np.testing.assert_array_equal(cl, (ci > 100).astype(np.uint8))  # crop of the pair is aligned
    ci2, _ = random_crop_3d(image, label, (4, 5, 6), rng)
    assert ci2.shape == (4, 5, 6)


def test_the_layout_check_before_queueing_agrees_with_the_indexers(tmp_path: Path) -> None:
    """What `zbench run --data` refuses before a job is queued: the layout, not every file."""
    from zbench.runners.datasets import index_for, layout_problem

    flowers = make_flowers102(tmp_path / "f", n=6)
    folder = make_imagefolder(tmp_path / "i")
    voc = make_voc(tmp_path / "v")
    kits = make_kits19(tmp_path / "k")
    good = {
        "classification": (flowers, folder),
        "detection": (voc,),
        "segmentation": (kits, kits.parent),  # root/data or root
    }
    for task, roots in good.items():
        for root in roots:
            assert layout_problem(task, str(root)) is None, (task, root)
            index_for(task, str(root))  # the runner's indexing takes it too
    # Each task refuses another's layout, in the indexer's own words.
    assert layout_problem("classification", str(voc)) == (
        f"not a known dataset layout: {voc} (expected Flowers-102's imagelabels.mat or an "
        f"ImageFolder split folder {voc / 'train'})"
    )
    assert layout_problem("detection", str(folder)) == (
        f"no VOCdevkit/VOC2007 or VOC2012 folder under {folder}"
    )
    assert layout_problem("segmentation", str(flowers)) == (
        f"no KiTS19 case_XXXXX folders under {flowers}"
    )
    assert layout_problem("classification", str(tmp_path / "nope")) == (
        f"dataset folder not found: {tmp_path / 'nope'}"
    )
    empty = tmp_path / "e"
    (empty / "train").mkdir(parents=True)
    assert layout_problem("classification", str(empty)) == f"no class folders in {empty / 'train'}"
    for root in (voc, empty):
        with pytest.raises(DatasetError):
            index_for("classification", str(root))
