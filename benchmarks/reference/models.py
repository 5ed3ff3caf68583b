"""The five workloads as a PyTorch user would set them up: model, one synthetic device batch, loss.

Written without zbench's runner code. ResNet-50, VGG16 and Faster R-CNN are torchvision's own models;
the two U-Nets are defined here from their published descriptions (Ronneberger et al. 2015 with padded
convolutions; MLPerf Training's KiTS19 3D U-Net), to the same layout as the models zbench benchmarks
(tests/benchmarks checks the parameter counts against zbench's).
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

NUM_CLASSES = {"resnet50": 1000, "vgg16": 1000, "fasterrcnn": 21, "unet2d": 3, "unet3d": 3}


# --- U-Net (2D): 64..1024 channels, two padded 3x3 conv + ReLU per level, 2x2 max-pool,
# dropout 0.5 on the bottom features, 2x2 transposed-conv up-sampling, concat, 1x1 head.
def _twice(conv: type[nn.Module], cin: int, cout: int, **kw: Any) -> list[nn.Module]:
    return [
        conv(cin, cout, 3, padding=1, **kw),
        nn.ReLU(True),
        conv(cout, cout, 3, padding=1, **kw),
    ]


class UNet2D(nn.Module):
    def __init__(
        self, in_ch: int = 1, classes: int = 3, widths: tuple[int, ...] = (64, 128, 256, 512, 1024)
    ):
        super().__init__()
        ins = (in_ch, *widths[:-1])
        self.enc = nn.ModuleList(
            nn.Sequential(*_twice(nn.Conv2d, a, b), nn.ReLU(True))
            for a, b in zip(ins, widths, strict=True)
        )
        self.drop = nn.Dropout2d(0.5)
        pairs = list(zip(widths[:0:-1], widths[-2::-1], strict=True))  # (1024, 512) ... (128, 64)
        self.ups = nn.ModuleList(nn.ConvTranspose2d(a, b, 2, stride=2) for a, b in pairs)
        self.dec = nn.ModuleList(
            nn.Sequential(*_twice(nn.Conv2d, 2 * b, b), nn.ReLU(True)) for _, b in pairs
        )
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = []
        for level, block in enumerate(self.enc):
            x = block(F.max_pool2d(x, 2) if level else x)
            feats.append(x)
        x = self.drop(feats.pop())
        for up, block in zip(self.ups, self.dec, strict=True):
            x = block(torch.cat((feats.pop(), up(x)), 1))
        return self.head(x)


# --- 3D U-Net (MLPerf KiTS19): filters 32, 64, 128, 256, 320 + a 320 bottleneck; conv3x3x3 (no bias)
# + instance norm (affine) + leaky ReLU 0.01; stride-2 first conv to go down; 2x2x2 transposed conv up.
def _cbr3(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv3d(cin, cout, 3, stride, 1, bias=False),
        nn.InstanceNorm3d(cout, affine=True),
        nn.LeakyReLU(0.01, inplace=True),
    )


class _Up3(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.up = nn.ConvTranspose3d(cin, cout, 2, stride=2)
        self.convs = nn.Sequential(_cbr3(2 * cout, cout), _cbr3(cout, cout))

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return self.convs(torch.cat((self.up(x), skip), 1))


class UNet3D(nn.Module):
    def __init__(
        self, in_ch: int = 1, classes: int = 3, f: tuple[int, ...] = (32, 64, 128, 256, 320)
    ):
        super().__init__()
        self.stem = nn.Sequential(_cbr3(in_ch, f[0]), _cbr3(f[0], f[0]))
        downs = [*itertools.pairwise(f), (f[-1], f[-1])]  # the last one is the bottleneck
        self.downs = nn.ModuleList(nn.Sequential(_cbr3(a, b, 2), _cbr3(b, b)) for a, b in downs)
        self.ups = nn.ModuleList(
            _Up3(a, b) for a, b in zip((f[-1], *f[:0:-1]), f[::-1], strict=True)
        )
        self.head = nn.Conv3d(f[0], classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = [self.stem(x)]
        for down in self.downs:
            skips.append(down(skips[-1]))
        x = skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        return self.head(x)


# --- the workloads -------------------------------------------------------------------------------


def build(workload: str, image_size: int) -> nn.Module:
    import torchvision

    n = NUM_CLASSES[workload]
    if workload == "resnet50":
        return torchvision.models.resnet50(weights=None, num_classes=n)
    if workload == "vgg16":
        return torchvision.models.vgg16(weights=None, num_classes=n)
    if workload == "fasterrcnn":
        # Synthetic images are squares of image_size; the model's transform keeps them at that size.
        return torchvision.models.detection.fasterrcnn_resnet50_fpn(
            weights=None,
            weights_backbone=None,
            num_classes=n,
            min_size=image_size,
            max_size=max(1333, image_size),
        )
    if workload == "unet2d":
        return UNet2D(1, n)
    if workload == "unet3d":
        return UNet3D(1, n)
    raise ValueError(f"unknown workload {workload!r}")


def batch(workload: str, size: int, n: int, device: torch.device, fmt: torch.memory_format) -> Any:
    """One synthetic batch, made once on the device and reused every step."""
    g = torch.Generator(device=device).manual_seed(0)
    classes = NUM_CLASSES[workload]
    if workload == "fasterrcnn":
        images = [torch.rand(3, size, size, device=device, generator=g) for _ in range(n)]
        targets = []
        for _ in range(n):  # three boxes per image, 10-40% of the side, inside the image
            xy = torch.rand(3, 2, device=device, generator=g) * size * 0.6
            wh = (0.1 + 0.3 * torch.rand(3, 2, device=device, generator=g)) * size
            boxes = torch.cat((xy, (xy + wh).clamp(max=size)), 1)
            labels = torch.randint(1, classes, (3,), device=device, generator=g)
            targets.append({"boxes": boxes, "labels": labels})
        return images, targets
    if workload in ("resnet50", "vgg16"):
        x = torch.randn(n, 3, size, size, device=device, generator=g)
        y = torch.randint(0, classes, (n,), device=device, generator=g)
    else:
        dims = (size,) * (3 if workload == "unet3d" else 2)
        x = torch.randn(n, 1, *dims, device=device, generator=g)
        y = torch.randint(0, classes, (n, *dims), device=device, generator=g)
    # As PyTorch's channels-last tutorial converts an input: `.to(memory_format=...)` gives a
    # one-channel batch channels-last strides, where `.contiguous(memory_format=...)` would leave
    # its NCHW strides (they pass the channels-last check) and the model would read it as NCHW.
    return x.to(memory_format=fmt), y


def dice_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """1 - mean soft Dice over classes and volumes (the Dice half of MLPerf's DiceCE loss)."""
    p = logits.softmax(1)
    t = F.one_hot(y, logits.shape[1]).movedim(-1, 1).to(p.dtype)
    axes = tuple(range(2, p.ndim))
    dice = (2 * (p * t).sum(axes) + 1e-6) / (p.sum(axes) + t.sum(axes) + 1e-6)
    return 1 - dice.mean()


def loss(workload: str, model: nn.Module, data: Any) -> torch.Tensor:
    x, y = data
    if workload == "fasterrcnn":
        return torch.stack(list(model(x, y).values())).sum()
    out = model(x).float()
    value = F.cross_entropy(out, y)
    return value + dice_loss(out, y) if workload == "unet3d" else value


def memory_format(workload: str, channels_last: bool) -> torch.memory_format:
    if not channels_last:
        return torch.contiguous_format
    return torch.channels_last_3d if workload == "unet3d" else torch.channels_last
