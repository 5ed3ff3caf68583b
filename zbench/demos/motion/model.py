"""First-order motion model: keypoint detector with local affine terms, dense motion, warping generator.

A compact re-implementation of the method of Siarohin et al., "First Order Motion Model for Image
Animation" (NeurIPS 2019), written from the paper: plain convolutions, BatchNorm and ReLU, static
shapes and no Python branching on data, so it runs under bf16 autocast and torch.compile.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from zbench.demos.motion import warp


@dataclass(frozen=True)
class MotionConfig:
    """Sizes of the three networks; the defaults are a smaller FOMM that trains in minutes."""

    num_kp: int = 10
    temperature: float = 0.1
    scale: float = 0.25  # keypoints and dense motion run at this fraction of the frame size
    kp_expansion: int = 32
    kp_max: int = 256
    kp_blocks: int = 5
    dm_expansion: int = 32
    dm_max: int = 256
    dm_blocks: int = 5
    gen_expansion: int = 32
    gen_max: int = 256
    gen_down: int = 2
    gen_res: int = 6

    def to_dict(self) -> dict:
        return asdict(self)


def _conv(cin: int, cout: int, k: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)
    )


class Hourglass(nn.Module):
    """U-Net style encoder-decoder; the output concatenates the input (out_channels says how many)."""

    def __init__(self, expansion: int, cin: int, blocks: int, max_features: int) -> None:
        super().__init__()
        self.down = nn.ModuleList()
        chans = [cin]
        for i in range(blocks):
            c = min(max_features, expansion * 2 ** (i + 1))
            self.down.append(_conv(chans[-1], c))
            chans.append(c)
        self.up = nn.ModuleList()
        prev = chans[-1]
        for i in reversed(range(blocks)):
            c = min(max_features, expansion * 2**i)
            self.up.append(_conv(prev, c))
            prev = c + chans[i]
        self.out_channels = prev

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = [x]
        for block in self.down:
            x = F.avg_pool2d(block(x), 2)
            skips.append(x)
        x = skips.pop()
        for block in self.up:
            x = block(F.interpolate(x, scale_factor=2.0, mode="nearest"))
            x = torch.cat([x, skips.pop()], 1)
        return x


def downscale(image: torch.Tensor, scale: float) -> torch.Tensor:
    """Anti-aliased bilinear downscale (torch's own filter, instead of a hand-made Gaussian)."""
    if scale == 1:
        return image
    return F.interpolate(
        image, scale_factor=scale, mode="bilinear", antialias=True, align_corners=False
    )


class KeypointDetector(nn.Module):
    """Image -> K keypoints (soft-argmax of heatmaps) and a 2x2 Jacobian per keypoint."""

    def __init__(self, cfg: MotionConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.hourglass = Hourglass(cfg.kp_expansion, 3, cfg.kp_blocks, cfg.kp_max)
        c = self.hourglass.out_channels
        self.heat = nn.Conv2d(c, cfg.num_kp, 7, padding=3)
        self.jac = nn.Conv2d(c, 4 * cfg.num_kp, 7, padding=3)
        nn.init.zeros_(self.jac.weight)
        with torch.no_grad():
            self.jac.bias.copy_(torch.tensor([1.0, 0.0, 0.0, 1.0]).repeat(cfg.num_kp))

    def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        feat = self.hourglass(downscale(image, self.cfg.scale))
        b, k = image.shape[0], self.cfg.num_kp
        logits = self.heat(feat).float()
        h, w = logits.shape[2:]
        heat = torch.softmax(logits.view(b, k, -1) / self.cfg.temperature, -1).view(b, k, h, w)
        grid = warp.make_grid(h, w, image.device)
        kp = torch.einsum("bkhw,hwc->bkc", heat, grid)
        jac = self.jac(feat).float().view(b, k, 4, h, w)
        jac = torch.einsum("bkhw,bkchw->bkc", heat, jac).view(b, k, 2, 2)
        return kp, jac


class DenseMotion(nn.Module):
    """Keypoints of source and driving -> dense backward flow and occlusion map (at cfg.scale)."""

    def __init__(self, cfg: MotionConfig) -> None:
        super().__init__()
        self.cfg = cfg
        k1 = cfg.num_kp + 1
        self.hourglass = Hourglass(cfg.dm_expansion, k1 * 4, cfg.dm_blocks, cfg.dm_max)
        c = self.hourglass.out_channels
        self.mask = nn.Conv2d(c, k1, 7, padding=3)
        self.occlusion = nn.Conv2d(c, 1, 7, padding=3)
        # Start near the identity: the background (no motion) channel dominates the masks. The
        # occlusion starts at 0.5, away from both saturated ends (from 0.95 it rose to 1 and stayed).
        with torch.no_grad():
            self.mask.weight.mul_(0.1)
            self.mask.bias.zero_()
            self.mask.bias[0] = 3.0
            self.occlusion.weight.mul_(0.1)
            self.occlusion.bias.zero_()

    def forward(
        self,
        small_src: torch.Tensor,
        kp_src: torch.Tensor,
        jac_src: torch.Tensor,
        kp_drv: torch.Tensor,
        jac_drv: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        b, _, h, w = small_src.shape
        k1 = self.cfg.num_kp + 1
        heat = warp.kp_heatmap(kp_drv, h, w) - warp.kp_heatmap(kp_src, h, w)
        heat = torch.cat([torch.zeros_like(heat[:, :1]), heat], 1)  # background channel
        motions = warp.sparse_motions(h, w, kp_src, jac_src, kp_drv, jac_drv)  # (B, K+1, h, w, 2)
        rep = small_src.unsqueeze(1).expand(b, k1, 3, h, w).reshape(b * k1, 3, h, w)
        deformed = warp.warp(rep, motions.reshape(b * k1, h, w, 2)).view(b, k1 * 3, h, w)
        x = torch.cat([heat.to(deformed.dtype), deformed], 1)
        feat = self.hourglass(x)
        mask = torch.softmax(self.mask(feat).float(), 1)  # (B, K+1, h, w)
        flow = (mask.unsqueeze(-1) * motions.float()).sum(1)  # (B, h, w, 2)
        occlusion = torch.sigmoid(self.occlusion(feat).float())
        return flow, occlusion


class ResBlock(nn.Module):
    """Residual block (BN, ReLU, 3x3 conv, twice) that keeps the channels and the size."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(c),
            nn.ReLU(True),
            nn.Conv2d(c, c, 3, padding=1, bias=False),
            nn.BatchNorm2d(c),
            nn.ReLU(True),
            nn.Conv2d(c, c, 3, padding=1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)


class Generator(nn.Module):
    """Warps the source and its features with the flow, then paints what the warp cannot show.

    The output is `warp(source, flow) + (1 - occlusion) * residual`: visible pixels come straight
    from the source, occluded ones (an opening mouth, a turned cheek) from the decoder. The
    residual's last layer starts at zero, so an untrained model returns the warped source, never a
    blurry average. Encoder features are warped at every scale
    (U-Net skips), so details come from the source instead of a 1/4-scale bottleneck. Unlike the
    published model the occlusion does not scale the features: BatchNorm undoes such a scale, and
    in training it drifted to zero.
    """

    def __init__(self, cfg: MotionConfig) -> None:
        super().__init__()
        e = cfg.gen_expansion
        self.stem = _conv(3, e, 7)
        self.down = nn.ModuleList()
        chans = [e]
        for i in range(cfg.gen_down):
            chans.append(min(cfg.gen_max, e * 2 ** (i + 1)))
            self.down.append(nn.Sequential(_conv(chans[-2], chans[-1]), nn.AvgPool2d(2)))
        c = chans[-1]
        self.bottleneck = nn.Sequential(*[ResBlock(c) for _ in range(cfg.gen_res)])
        self.up = nn.ModuleList()
        for i in reversed(range(cfg.gen_down)):
            self.up.append(_conv(c + chans[i], chans[i]))
            c = chans[i]
        self.head = nn.Conv2d(c + 3, 3, 7, padding=3)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def encoder(self, source: torch.Tensor) -> list[torch.Tensor]:
        """Source features, full scale first (cached per source by the Animator)."""
        feats = [self.stem(source)]
        for block in self.down:
            feats.append(block(feats[-1]))
        return feats

    def decode(
        self,
        source: torch.Tensor,
        feats: list[torch.Tensor],
        flow: torch.Tensor,
        occlusion: torch.Tensor,
    ) -> torch.Tensor:
        warped_src = warp.warp(source.float(), flow)
        warped = [warp.warp(f, flow) for f in feats]
        x = self.bottleneck(warped[-1])
        for i, block in enumerate(self.up):
            skip = warped[-2 - i]
            x = block(torch.cat([F.interpolate(x, size=skip.shape[2:], mode="nearest"), skip], 1))
        x = torch.cat([x, warped_src.to(x.dtype)], 1)
        occ = F.interpolate(occlusion.float(), size=source.shape[2:], mode="bilinear")
        # The residual and the sum in float32: a bf16 output would band and tint smooth skin.
        return warped_src + (1 - occ) * self.head(x).float()


class MotionModel(nn.Module):
    """The three networks together; `animate` is one source frame driven by keypoints."""

    def __init__(self, cfg: MotionConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or MotionConfig()
        self.kp = KeypointDetector(self.cfg)
        self.dense = DenseMotion(self.cfg)
        self.gen = Generator(self.cfg)

    def animate(
        self,
        source: torch.Tensor,
        kp_src: torch.Tensor,
        jac_src: torch.Tensor,
        kp_drv: torch.Tensor,
        jac_drv: torch.Tensor,
    ) -> dict[str, torch.Tensor]:
        flow, occ = self.dense(downscale(source, self.cfg.scale), kp_src, jac_src, kp_drv, jac_drv)
        out = self.gen.decode(source, self.gen.encoder(source), flow, occ)
        return {"prediction": out, "flow": flow, "occlusion": occ}
