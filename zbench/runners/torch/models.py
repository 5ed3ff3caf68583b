"""The workloads' models, all randomly initialized (no downloads: ``weights=None``)."""

from __future__ import annotations

from torch import nn


def build_model(workload: str, num_classes: int, image_size: int) -> nn.Module:
    """The workload's torch model, randomly initialised, for ``num_classes`` and ``image_size``."""
    if workload in ("resnet50", "vgg16"):
        import torchvision

        factory = getattr(torchvision.models, workload)
        return factory(weights=None, num_classes=num_classes)
    if workload == "fasterrcnn":
        from torchvision.models.detection import fasterrcnn_resnet50_fpn

        # The model's transform resizes every image so its shorter side is min_size (800 by
        # default, torchvision's training setting). Synthetic images are image_size squares.
        return fasterrcnn_resnet50_fpn(
            weights=None,
            weights_backbone=None,
            num_classes=num_classes,
            min_size=image_size,
            max_size=max(1333, image_size),
        )
    if workload == "unet2d":
        from zbench.runners.torch.unet2d import UNet2D

        return UNet2D(in_channels=1, num_classes=num_classes)
    if workload == "unet3d":
        from zbench.runners.torch.unet3d import UNet3D

        return UNet3D(in_channels=1, num_classes=num_classes)
    raise ValueError(f"unknown workload {workload!r}")
