"""Tracking I/O and measures: MOT files and folders, Deep SORT .npy files, metrics, AP, scenes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("scipy")
torch = pytest.importorskip("torch")
cv2 = pytest.importorskip("cv2")

from zbench.demos.tracking import detector, metrics, mot_io  # noqa: E402
from zbench.demos.tracking.preview import draw_boxes  # noqa: E402
from zbench.demos.tracking.scene import Scene, SceneConfig, write_sequence  # noqa: E402


def _made_folder(tmp_path, frames: int = 2):
    seq = tmp_path / "MOT-made"
    (seq / "img1").mkdir(parents=True)
    (seq / "det").mkdir()
    (seq / "gt").mkdir()
    for i in range(1, frames + 1):
        img = np.zeros((24, 32, 3), np.uint8)
        img[:, :, 2] = 200  # red in BGR
        cv2.imwrite(str(seq / "img1" / f"{i:06d}.jpg"), img)
    (seq / "seqinfo.ini").write_text(
        "[Sequence]\nname=MOT-made\nimDir=img1\nframeRate=30\nseqLength=2\nimWidth=32\nimHeight=24\nimExt=.jpg\n"
    )
    (seq / "det" / "det.txt").write_text(
        "1,-1,1,2,10,12,0.9,-1,-1,-1\n2,-1,2,2,10,12,0.8,-1,-1,-1\n"
    )
    (seq / "gt" / "gt.txt").write_text("1,1,1,2,10,12,1,1,1.0\n2,1,2,2,10,12,1,1,0.5\n")
    return seq


def test_mot_folder_reads_frames_seqinfo_det_and_gt(tmp_path):
    seq = mot_io.MotFolder(_made_folder(tmp_path))
    assert seq.info == mot_io.SeqInfo("MOT-made", 30.0, 2, 32, 24)
    frames = list(seq.frames())
    assert len(frames) == 2 and frames[0].shape == (24, 32, 3)
    assert frames[0][..., 0].mean() > 150 and frames[0][..., 2].mean() < 50  # RGB order
    assert seq.det is not None and seq.det[:, 6].tolist() == [0.9, 0.8]
    assert seq.gt is not None and seq.gt.shape == (2, 9) and seq.gt[1, 8] == 0.5


def test_bad_mot_inputs_raise_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such folder"):
        mot_io.MotFolder(tmp_path / "nope")
    (tmp_path / "x").mkdir()
    with pytest.raises(FileNotFoundError, match=r"seqinfo\.ini"):
        mot_io.MotFolder(tmp_path / "x")
    (tmp_path / "x" / "seqinfo.ini").write_text("[Sequence]\nname=x\n")
    with pytest.raises(ValueError, match="bad or missing field"):
        mot_io.read_seqinfo(tmp_path / "x")
    bad = tmp_path / "bad.txt"
    bad.write_text("1,2,three\n")
    with pytest.raises(ValueError, match="not a comma-separated MOT file"):
        mot_io.read_mot_txt(bad)


def test_results_and_gt_round_trip(tmp_path):
    rows = np.array([[1, 3, 1.5, 2.25, 10, 20], [2, 3, 2.5, 2.25, 10, 20]])
    path = mot_io.write_results(tmp_path / "res.txt", rows)
    assert path.read_text().splitlines()[0] == "1,3,1.50,2.25,10.00,20.00,1,-1,-1,-1"
    back = mot_io.read_mot_txt(path)
    assert np.allclose(back[:, :6], rows)
    gt = np.array([[1, 7, 0, 0, 5, 5, 1, 1, 0.25]])
    assert np.allclose(mot_io.read_mot_txt(mot_io.write_gt(tmp_path / "gt.txt", gt)), gt)
    assert set(mot_io.rows_by_frame(rows)) == {1, 2}


def test_deepsort_detection_file_reader_on_a_small_made_file(tmp_path):
    feat = np.arange(6, dtype=np.float32).reshape(2, 3)
    arr = np.array(
        [
            [1, -1, 10, 20, 30, 40, 0.9, -1, -1, -1, *feat[0]],
            [3, -1, 1, 2, 3, 4, 0.4, -1, -1, -1, *feat[1]],
        ],
        np.float32,
    )
    np.save(tmp_path / "seq.npy", arr)
    got = mot_io.read_deepsort_npy(tmp_path / "seq.npy")
    assert sorted(got) == [1, 3]
    tlwh, conf, f = got[3]
    assert (
        tlwh.tolist() == [[1, 2, 3, 4]]
        and conf.tolist() == [pytest.approx(0.4)]
        and f.tolist() == [[3, 4, 5]]
    )
    again = mot_io.read_deepsort_npy(mot_io.write_deepsort_npy(tmp_path / "again.npy", got))
    assert np.allclose(again[1][0], got[1][0]) and np.allclose(again[1][2], got[1][2])
    with pytest.raises(ValueError, match="expected 128"):
        mot_io.read_deepsort_npy(tmp_path / "seq.npy", feature_dim=128)
    np.save(tmp_path / "short.npy", np.zeros((2, 10)))
    with pytest.raises(ValueError, match="10 MOT columns"):
        mot_io.read_deepsort_npy(tmp_path / "short.npy")


def test_annotated_video_is_written(tmp_path):
    from zbench.demos.tracking.deepsort import TrackOut

    vid = mot_io.AnnotatedVideo(tmp_path / "a.mp4", fps=10)
    for t in range(3):
        vid.write(np.zeros((48, 64, 3), np.uint8), [TrackOut(4, (5.0 + t, 5.0, 10.0, 20.0))])
    path = vid.close()
    cap = cv2.VideoCapture(str(path))
    assert cap.isOpened() and int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == 3
    cap.release()


def _has_trackeval() -> bool:
    try:
        import trackeval  # noqa: F401
    except ImportError:
        return False
    return True


needs_trackeval = pytest.mark.skipif(not _has_trackeval(), reason="trackeval not installed")


def _gt(frames: int = 5):
    return np.array(
        [[t, i, 10 + 50 * i, 10, 20, 40, 1, 1, 1.0] for t in range(1, frames + 1) for i in (1, 2)]
    )


@needs_trackeval
def test_metrics_are_perfect_for_perfect_tracks():
    gt = _gt()
    m = metrics.evaluate(gt, gt[:, :6])
    assert m["MOTA"] == 1.0 and m["IDF1"] == 1.0 and m["HOTA"] > 0.99 and m["IDSW"] == 0


@needs_trackeval
def test_metrics_count_an_identity_switch_and_misses():
    gt = _gt()
    res = gt[:, :6].copy()
    res[(res[:, 0] >= 3) & (res[:, 1] == 1), 1] = 9  # target 1 changes id at frame 3
    res = res[~((res[:, 0] == 5) & (res[:, 1] == 2))]  # target 2 missed in frame 5
    m = metrics.evaluate(gt, res)
    assert m["IDSW"] == 1 and m["FN"] == 1 and m["FP"] == 0 and m["IDF1"] < 1.0
    assert m["MOTA"] == pytest.approx(1 - 2 / 10)


@needs_trackeval
def test_boxes_on_ignored_ground_truth_are_not_false_positives():
    gt = _gt()
    gt[gt[:, 1] == 2, 8] = 0.05  # target 2 is almost hidden: ignored
    m = metrics.evaluate(gt, gt[:, :6])
    assert m["FP"] == 0 and m["FN"] == 0 and m["MOTA"] == 1.0
    assert metrics.evaluate(gt, gt[:, :6], min_vis=0.0)["FN"] == 0


@needs_trackeval
def test_mot17_classes_distractors_are_ignored_and_vehicles_dropped():
    gt = _gt()
    gt[gt[:, 1] == 2, 7] = 7  # a static person: boxes on it are neither right nor wrong
    m = metrics.evaluate(gt, gt[:, :6])
    assert m["FP"] == 0 and m["FN"] == 0
    gt[gt[:, 1] == 2, 7] = 3  # a car: not a target, so a box on it is a false positive
    m = metrics.evaluate(gt, gt[:, :6])
    assert m["FP"] == 5 and m["FN"] == 0


def test_average_precision_hand_cases():
    g = (np.array([[0, 0, 10, 10], [50, 50, 10, 10]], float), np.array([False, False]))
    perfect = (g[0].copy(), np.array([0.9, 0.8]))
    assert detector.average_precision([perfect], [g]) == pytest.approx(1.0)
    half = (g[0][:1].copy(), np.array([0.9]))
    assert detector.average_precision([half], [g]) == pytest.approx(0.5)
    ignored = (g[0], np.array([False, True]))  # a hit on an ignored box counts neither way
    assert detector.average_precision([perfect], [ignored]) == pytest.approx(1.0)
    wrong = (np.array([[100, 100, 10, 10]], float), np.array([0.99]))
    assert detector.average_precision([wrong], [g]) == pytest.approx(0.0)


def test_scene_is_deterministic_and_reports_occlusion():
    cfg = SceneConfig(width=320, height=192, targets=8, frames=3, seed=4)
    a = [(img.clone(), t) for img, t in Scene(cfg)]
    b = list(Scene(cfg))
    c = next(iter(Scene(SceneConfig(width=320, height=192, targets=8, frames=3, seed=5))))
    assert all(
        torch.equal(x[0], y[0]) and np.array_equal(x[1].tlwh, y[1].tlwh)
        for x, y in zip(a, b, strict=True)
    )
    assert not torch.equal(a[0][0], c[0])
    vis = np.concatenate([t.visibility for _, t in a])
    assert vis.min() >= 0 and vis.max() <= 1 and (vis > 0.99).any()
    # A figure drawn right in front of another hides most of it.
    s = Scene(SceneConfig(width=320, height=192, targets=2, seed=0))
    s.x[:] = 160
    s.foot[:] = [150, 170]
    s.scale[:] = 1.0
    truth = s.truth()
    back, front = np.argmin(s.foot), np.argmax(s.foot)
    assert truth.visibility[front] > 0.99 and truth.visibility[back] < 0.6


def test_written_sequence_is_a_mot_folder(tmp_path):
    folder = write_sequence(
        tmp_path / "gen", SceneConfig(width=160, height=96, targets=3, frames=4, seed=1)
    )
    seq = mot_io.MotFolder(folder)
    assert len(seq) == 4 and seq.info.width == 160 and seq.gt is not None
    assert set(seq.gt[:, 0].astype(int)) <= {1, 2, 3, 4} and seq.gt.shape[1] == 9


def test_preview_boxes_are_drawn_in_the_id_colour():
    img = draw_boxes(np.zeros((10, 10, 3), np.uint8), np.array([[2, 2, 4, 4]]), [7])
    assert tuple(img[2, 4]) == mot_io.id_colour(7) and tuple(img[4, 4]) == (0, 0, 0)


def test_prefetch_hands_batches_in_order_and_passes_errors_on():
    from zbench.demos.tracking.train import Prefetch

    class Counting:
        n = 0

        def draw(self):
            self.n += 1
            if self.n == 4:
                raise RuntimeError("renderer failed")
            return self.n

    pre = Prefetch(Counting())  # type: ignore[arg-type]
    assert [pre.draw(), pre.draw(), pre.draw()] == [1, 2, 3]
    with pytest.raises(RuntimeError, match="renderer failed"):
        pre.draw()
    pre.close()
    assert not pre.thread.is_alive()


@pytest.mark.slow
def test_plain_torchvision_detector_weights_load_into_ours(tmp_path):
    from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn

    from zbench.demos.tracking import train

    plain = fasterrcnn_mobilenet_v3_large_fpn(weights=None, weights_backbone=None, num_classes=2)
    path = tmp_path / "user.pt"
    torch.save(plain.state_dict(), path)
    ours = detector.build_detector()
    detector.load_detector_state(ours, train.load_state(path, "cpu")["model"])
    a = plain.backbone.fpn.inner_blocks[0][0].weight
    assert torch.equal(ours.backbone.body.fpn.inner_blocks[0][0].weight, a)
