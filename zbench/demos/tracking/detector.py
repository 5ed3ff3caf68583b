"""Pedestrian detector: torchvision's Faster R-CNN (MobileNetV3-Large FPN), randomly initialised.

Why this model: it is torchvision's fastest two-stage detector, its backbone has trainable
BatchNorm when built without pretrained weights (so it trains from scratch in minutes on the
rendered scenes), and users' own checkpoints load with torch's standard ``load_state_dict``.
Frames are detected at half of 1080p (``min_size`` 540): the rendered figures stay 40 px tall
or more there. Under bf16 only the backbone and FPN run in bfloat16; the region proposal and
box heads run in float32, because torchvision decodes boxes in the heads' dtype and bfloat16's
8-bit mantissa would move 1080p coordinates by several pixels.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch
from torch import nn

from zbench.demos.tracking.boxes import iou_matrix


class Bf16Backbone(nn.Module):
    """Runs a backbone under bfloat16 autocast on CUDA and hands float32 features on."""

    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body
        self.out_channels = body.out_channels
        self.enabled = False

    def forward(self, x: torch.Tensor):
        if not self.enabled:
            return self.body(x)
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            out = self.body(x)
        return OrderedDict((k, v.float()) for k, v in out.items())


def build_detector(
    min_size: int = 540, max_size: int = 960, max_detections: int = 200
) -> nn.Module:
    """Faster R-CNN MobileNetV3-Large FPN, two classes (background, pedestrian), no weights."""
    from torchvision.models.detection import fasterrcnn_mobilenet_v3_large_fpn

    model = fasterrcnn_mobilenet_v3_large_fpn(
        weights=None,
        weights_backbone=None,
        num_classes=2,
        min_size=min_size,
        max_size=max_size,
        rpn_pre_nms_top_n_test=600,
        rpn_post_nms_top_n_test=300,
        box_detections_per_img=max_detections,
        box_score_thresh=0.05,
    )
    model.backbone = Bf16Backbone(model.backbone)
    return model


def set_bf16(model: nn.Module, on: bool) -> None:
    backbone = getattr(model, "backbone", None)
    if isinstance(backbone, Bf16Backbone):
        backbone.enabled = on


class Detector:
    """uint8 ``[3, H, W]`` frames (on the model's device) in; tlwh boxes and scores out (NumPy)."""

    def __init__(self, model: nn.Module, bf16: bool = True) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device
        set_bf16(model, bf16 and self.device.type == "cuda")

    @torch.inference_mode()
    def __call__(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Boxes ``[N, 4]`` tlbr and scores ``[N]`` as device tensors (no host sync)."""
        x = image.to(self.device, non_blocking=True).float().div_(255)
        out = self.model([x])[0]
        return out["boxes"], out["scores"]


def tlbr_to_tlwh(boxes: np.ndarray) -> np.ndarray:
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4).copy()
    boxes[:, 2:] -= boxes[:, :2]
    return boxes


def average_precision(
    dets: list[tuple[np.ndarray, np.ndarray]],
    gts: list[tuple[np.ndarray, np.ndarray]],
    iou_thresh: float = 0.5,
) -> float:
    """AP at one IoU (all-point interpolation, as in PASCAL VOC 2010+ and COCO's AP50).

    ``dets``: per image (tlwh ``[N, 4]``, scores ``[N]``); ``gts``: per image (tlwh ``[M, 4]``,
    ignore flags ``[M]``). Detections matched to ignored boxes (e.g. mostly hidden figures) count
    neither way, as COCO's ``iscrowd``/area-range ignores do.
    """
    scores, tp, keep = [], [], []
    n_pos = 0
    for (dbox, dscore), (gbox, gign) in zip(dets, gts, strict=True):
        n_pos += int((~gign).sum())
        order = np.argsort(-dscore, kind="stable")
        dbox, dscore = dbox[order], dscore[order]
        iou = (
            iou_matrix(dbox, gbox) if len(gbox) and len(dbox) else np.zeros((len(dbox), len(gbox)))
        )
        taken = np.zeros(len(gbox), bool)
        for i in range(len(dbox)):
            cand = np.where(taken, -1.0, iou[i])
            # Prefer an unmatched valid box; fall back to an ignored one.
            valid = np.where(gign, -1.0, cand)
            j = int(np.argmax(valid)) if len(gbox) else -1
            if j >= 0 and valid[j] >= iou_thresh:
                taken[j] = True
                scores.append(dscore[i])
                tp.append(True)
                keep.append(True)
                continue
            ign = np.where(gign, cand, -1.0)
            j = int(np.argmax(ign)) if len(gbox) else -1
            matched_ignored = j >= 0 and ign[j] >= iou_thresh
            scores.append(dscore[i])
            tp.append(False)
            keep.append(not matched_ignored)
    if n_pos == 0:
        return float("nan")
    s, t = np.array(scores)[np.array(keep, bool)], np.array(tp)[np.array(keep, bool)]
    order = np.argsort(-s, kind="stable")
    t = t[order]
    ctp, cfp = np.cumsum(t), np.cumsum(~t)
    recall = ctp / n_pos
    precision = ctp / np.maximum(ctp + cfp, 1e-12)
    mrec = np.concatenate([[0.0], recall, [1.0]])
    mpre = np.concatenate([[1.0], precision, [0.0]])
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    idx = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[idx + 1] - mrec[idx]) * mpre[idx + 1]))


def load_detector_state(model: nn.Module, state: dict) -> None:
    """Our checkpoints, or a plain torchvision Faster R-CNN state dict (no Bf16Backbone level)."""
    if any(k.startswith("backbone.fpn.") for k in state):
        state = {
            ("backbone.body." + k[9:] if k.startswith("backbone.") else k): v
            for k, v in state.items()
        }
    model.load_state_dict(state)
