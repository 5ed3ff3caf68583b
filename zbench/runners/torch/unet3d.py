"""The 3D U-Net of MLPerf Training's KiTS19 reference (image_segmentation/pytorch/model/unet3d.py).

Same layout: filters 32, 64, 128, 256, 320 and a 320-channel bottleneck; each block is two 3x3x3
convolutions (no bias) + instance norm (affine) + leaky ReLU (slope 0.01); down-sampling by a
stride-2 first convolution; up-sampling by a 2x2x2 transposed convolution, concatenation with the
skip and two convolutions; a 1x1x1 output convolution to 3 classes (background, kidney, tumour).
Inputs must be a multiple of 32 on each side and at least 64 (instance norm needs more than one
voxel at the 1/32 bottleneck); the reference trains on 128^3 crops.
"""

from __future__ import annotations

import itertools

import torch
from torch import nn

FILTERS = (32, 64, 128, 256, 320)


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv3d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.InstanceNorm3d(cout, affine=True),
        nn.LeakyReLU(negative_slope=0.01, inplace=True),
    )


class _Up(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.upsample_conv = nn.ConvTranspose3d(cin, cout, 2, stride=2, bias=True)
        self.conv1 = _conv(2 * cout, cout)
        self.conv2 = _conv(cout, cout)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        x = torch.cat([self.upsample_conv(x), skip], dim=1)
        return self.conv2(self.conv1(x))


class UNet3D(nn.Module):
    """MLPerf's KiTS19 3D U-Net: strided-conv downsampling, transposed-conv upsampling, skips."""

    def __init__(self, in_channels: int = 1, num_classes: int = 3) -> None:
        super().__init__()
        f = FILTERS
        self.input_block = nn.Sequential(_conv(in_channels, f[0]), _conv(f[0], f[0]))
        self.downsample = nn.ModuleList(
            nn.Sequential(_conv(a, b, stride=2), _conv(b, b)) for a, b in itertools.pairwise(f)
        )
        self.bottleneck = nn.Sequential(_conv(f[-1], f[-1], stride=2), _conv(f[-1], f[-1]))
        ups = [_Up(f[-1], f[-1])]
        ups += [_Up(a, b) for a, b in zip(reversed(f[1:]), reversed(f[:-1]), strict=True)]
        self.upsample = nn.ModuleList(ups)
        self.output = nn.Conv3d(f[0], num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.input_block(x)
        skips = [x]
        for down in self.downsample:
            x = down(x)
            skips.append(x)
        x = self.bottleneck(x)
        for up, skip in zip(self.upsample, reversed(skips), strict=True):
            x = up(x, skip)
        return self.output(x)
