"""Re-identification embedding: 128x64 crops to 128-d L2-normalised features (Deep SORT's shape).

A small residual CNN in the spirit of Deep SORT's cosine-metric network (Wojke & Bewley 2018:
a wide-residual stack, 128-d output, trained as identity classification); crops are cut from the
frame on the device with torchvision's ``roi_align``, all boxes of a frame in one call.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from zbench.demos.tracking.scene import to_unit

CROP_HW = (128, 64)
FEATURE_DIM = 128


def _block(cin: int, cout: int, stride: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
        nn.BatchNorm2d(cout),
    )


class Residual(nn.Module):
    """Residual block of the embedder: two 3x3 convs, a 1x1 projection when the shape changes."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = _block(cin, cout, stride)
        self.skip = (
            nn.Identity()
            if cin == cout and stride == 1
            else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.body(x) + self.skip(x))


class ReidNet(nn.Module):
    """``[N, 3, 128, 64]`` in [0, 1] -> ``[N, 128]`` unit vectors; `classify` for training."""

    def __init__(self, num_classes: int = 0, dim: int = FEATURE_DIM) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True)
        )
        self.layers = nn.Sequential(
            Residual(32, 32, 2), Residual(32, 64, 2), Residual(64, 128, 2), Residual(128, 128, 1)
        )
        self.fc = nn.Sequential(nn.Linear(128, dim), nn.BatchNorm1d(dim))
        self.classifier = nn.Linear(dim, num_classes) if num_classes else None

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        h = self.layers(self.stem(x - 0.5))
        return self.fc(h.mean(dim=(2, 3)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.embed(x).float(), dim=1)

    def classify(self, x: torch.Tensor) -> torch.Tensor:
        assert self.classifier is not None, "built without classes"
        return self.classifier(self.embed(x))


def crop(image: torch.Tensor, tlbr: torch.Tensor) -> torch.Tensor:
    """Crops ``[N, 3, 128, 64]`` in [0, 1] from a uint8 ``[3, H, W]`` frame and tlbr boxes."""
    return crop_batch(to_unit(image[None]), [tlbr])


def crop_batch(frames: torch.Tensor, tlbr: list[torch.Tensor]) -> torch.Tensor:
    """Crops of every frame's boxes, frame by frame, from ``[B, 3, H, W]`` frames in [0, 1].

    One ``roi_align`` for the whole batch: each box row carries its frame's index.
    """
    from torchvision.ops import roi_align

    n = sum(len(b) for b in tlbr)
    if n == 0:
        return frames.new_zeros((0, 3, *CROP_HW), dtype=torch.float32)
    index = torch.cat([torch.full((len(b),), i, dtype=torch.float32) for i, b in enumerate(tlbr)])
    boxes = torch.cat([b.float() for b in tlbr])
    rois = torch.cat([index.to(boxes.device)[:, None], boxes], dim=1)
    return roi_align(frames, rois, CROP_HW, spatial_scale=1.0, sampling_ratio=2, aligned=True)


class Embedder:
    """Features ``[N, 128]`` for a frame's boxes, on the frame's device."""

    def __init__(self, model: ReidNet, bf16: bool = True, pad: int = 0) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.bf16 = bf16 and self.device.type == "cuda"
        # Crops padded with zeros to a multiple of ``pad`` (0: none), so that the network sees a
        # few batch sizes instead of a new one in nearly every chunk; a candidate timed by
        # benchmarks/embedder_shapes.py, off until it is measured to pay.
        self.pad = pad

    def __call__(self, image: torch.Tensor, tlbr: torch.Tensor) -> torch.Tensor:
        """Features of one uint8 ``[3, H, W]`` frame's tlbr boxes."""
        return self.batch(to_unit(image.to(self.device)[None]), [tlbr])

    @torch.inference_mode()
    def batch(self, frames: torch.Tensor, tlbr: list[torch.Tensor]) -> torch.Tensor:
        """Features of all boxes of ``[B, 3, H, W]`` frames in [0, 1], frame after frame, in one
        call of the network; ``tlbr[i]`` are frame i's boxes."""
        x = crop_batch(frames.to(self.device), [b.to(self.device) for b in tlbr])
        n = len(x)
        if n == 0:
            return x.new_zeros((0, FEATURE_DIM))
        if self.pad and n % self.pad:
            x = torch.cat([x, x.new_zeros((self.pad - n % self.pad, *x.shape[1:]))])
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            return self.model(x)[:n]
