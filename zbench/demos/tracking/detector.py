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
from zbench.demos.tracking.scene import to_unit


class Bf16Backbone(nn.Module):
    """Runs a backbone under bfloat16 autocast on CUDA and hands float32 features on.

    With ``graphs`` on (inference on CUDA), each input shape's forward is captured once in a CUDA
    graph and replayed: the backbone and FPN are a few hundred small kernels whose launch cost, at
    batch 1, is most of their time; their shapes are fixed per frame size, unlike the heads'
    (proposal counts vary), which stay eager. The features returned are the graph's static
    outputs, overwritten by the next call: the heads consume them before it, on the same stream.
    A capture that fails turns graphs off for good (``graph_error`` says why) and runs eagerly.
    """

    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body
        self.out_channels = body.out_channels
        self.enabled = False
        self.graphs = False
        self.graph_error: str | None = None
        self._graphs: dict[tuple, tuple[torch.cuda.CUDAGraph, torch.Tensor, OrderedDict]] = {}

    def _eager(self, x: torch.Tensor, cache: bool = True) -> OrderedDict:
        if not self.enabled:
            return self.body(x)
        with torch.autocast(x.device.type, dtype=torch.bfloat16, cache_enabled=cache):
            out = self.body(x)
        return OrderedDict((k, v.float()) for k, v in out.items())

    def _capture(self, x: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, torch.Tensor, OrderedDict]:
        static_in = x.clone()
        side = torch.cuda.Stream(device=x.device)
        side.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up outside the capture (cuDNN/cuBLAS handles, workspaces)
                self._eager(static_in, cache=False)
        torch.cuda.current_stream(x.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = self._eager(static_in, cache=False)  # autocast's cache cannot be captured
        return graph, static_in, static_out

    def forward(self, x: torch.Tensor):
        if not (self.graphs and x.is_cuda and not self.training):
            return self._eager(x)
        key = (tuple(x.shape), x.dtype, x.device, self.enabled)
        entry = self._graphs.get(key)
        if entry is None:
            try:
                entry = self._graphs[key] = self._capture(x)
            except RuntimeError as exc:  # an op that cannot be captured: stay eager, say why
                self.graphs, self.graph_error = False, str(exc).splitlines()[0][:200]
                self._graphs.clear()
                return self._eager(x)
        graph, static_in, static_out = entry
        static_in.copy_(x)
        graph.replay()
        return static_out


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
    """Turn bf16 autocast of the detector's backbone on or off (no-op for another backbone)."""
    backbone = getattr(model, "backbone", None)
    if isinstance(backbone, Bf16Backbone):
        backbone.enabled = on


def set_graphs(model: nn.Module, on: bool) -> None:
    """Turn CUDA-graph replay of the detector's backbone on or off, dropping captured graphs."""
    backbone = getattr(model, "backbone", None)
    if isinstance(backbone, Bf16Backbone):
        backbone.graphs = on
        backbone._graphs.clear()


class Detector:
    """uint8 ``[3, H, W]`` frames (on the model's device) in; tlwh boxes and scores out (NumPy).

    ``graphs``: replay the backbone from a CUDA graph per frame size (CUDA only; see
    `Bf16Backbone`). ``graphed`` says whether it is in use, ``graph_error`` why not if it failed.
    """

    def __init__(self, model: nn.Module, bf16: bool = True, graphs: bool = True) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device
        set_bf16(model, bf16 and self.device.type == "cuda")
        set_graphs(model, graphs and self.device.type == "cuda")

    @property
    def graphed(self) -> bool:
        backbone = getattr(self.model, "backbone", None)
        return isinstance(backbone, Bf16Backbone) and backbone.graphs

    @property
    def graph_error(self) -> str | None:
        return getattr(getattr(self.model, "backbone", None), "graph_error", None)

    def __call__(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Boxes ``[N, 4]`` tlbr and scores ``[N]`` of one uint8 frame, as device tensors."""
        return self.batch(to_unit(image.to(self.device, non_blocking=True))[None])[0]

    @torch.inference_mode()
    def batch(self, frames: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Boxes and scores per frame of ``[B, 3, H, W]`` frames in [0, 1], in one model call.

        torchvision resizes each frame alone and pads the batch to one shape (equal frames get
        equal padding), so the backbone sees ``[B, 3, h, w]`` (its CUDA graph is keyed on B); the
        proposal and box heads keep each frame's boxes apart.
        """
        outs = self.model(list(frames.to(self.device)))
        return [(o["boxes"], o["scores"]) for o in outs]


def tlbr_to_tlwh(boxes: np.ndarray) -> np.ndarray:
    """Boxes from (left, top, right, bottom) to (left, top, width, height), as an (N, 4) array."""
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
