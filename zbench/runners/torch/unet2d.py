"""The classic U-Net (Ronneberger, Fischer, Brox, MICCAI 2015), written here rather than taken from a
library so that its layout is known exactly.

Follows the paper: a contracting path of four levels of two 3x3 convolutions + ReLU and a 2x2 max
pool, channels 64, 128, 256, 512 and 1024 at the bottom; an expanding path of 2x2 up-convolutions
that halve the channels, concatenation with the skip connection, two 3x3 convolutions + ReLU; a
final 1x1 convolution to the classes; dropout at the end of the contracting path; no normalization.

Differs from the paper on purpose: the 3x3 convolutions are padded (padding=1), so the output has the
input's size (the paper's unpadded convolutions turn 572x572 into 388x388 and crop the skip
connections). Inputs must be a multiple of 16 on each side.
"""

from __future__ import annotations

import torch
from torch import nn

CHANNELS = (64, 128, 256, 512, 1024)


def _double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1),
        nn.ReLU(inplace=True),
    )


class UNet2D(nn.Module):
    """The 2015 U-Net for 2D segmentation (padded convolutions, dropout at the bottom)."""

    def __init__(self, in_channels: int = 1, num_classes: int = 3) -> None:
        super().__init__()
        c = CHANNELS
        self.down = nn.ModuleList([_double_conv(in_channels, c[0])])
        self.down.extend(_double_conv(c[i], c[i + 1]) for i in range(len(c) - 1))
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout2d(
            0.5
        )  # the paper's "drop-out layers at the end of the contracting path"
        self.up = nn.ModuleList(
            nn.ConvTranspose2d(c[i + 1], c[i], 2, stride=2) for i in reversed(range(len(c) - 1))
        )
        self.up_conv = nn.ModuleList(
            _double_conv(2 * c[i], c[i]) for i in reversed(range(len(c) - 1))
        )
        self.head = nn.Conv2d(c[0], num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for i, block in enumerate(self.down):
            if i:
                x = self.pool(x)
            x = block(x)
            skips.append(x)
        x = self.dropout(skips.pop())
        for up, conv in zip(self.up, self.up_conv, strict=True):
            x = conv(torch.cat([skips.pop(), up(x)], dim=1))
        return self.head(x)
