"""Per-task data and steps: what a batch is, where it comes from, and what one step computes.

Three data paths, named in results: ``synthetic-device`` (one batch generated on the device and
reused, as the published synthetic benchmarks do), ``synthetic-host`` (random samples made by
DataLoader workers and copied to the device each step: exercises the input path) and
``real:<layout>`` (files decoded by DataLoader workers, indexed by :mod:`zbench.runners.datasets`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler

from zbench.contract.workloads import WORKLOADS
from zbench.runners import datasets as ds

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
SEG_CLASSES = 3  # KiTS19: background, kidney, tumour
HOST_SAMPLES = 4096  # distinct synthetic host samples; the sampler draws with replacement


@dataclass(frozen=True)
class Shape:
    """What a task's batches look like: workload, batch and image size, classes, layout, device."""

    workload: str
    batch_size: int
    image_size: int
    num_classes: int
    memory_format: torch.memory_format
    device: torch.device


# --- datasets (CPU side, in DataLoader workers) ----------------------------------------------------


class _HostImages(Dataset[tuple[torch.Tensor, int]]):
    def __init__(self, size: int, num_classes: int, seed: int) -> None:
        self.size, self.num_classes, self.seed = size, num_classes, seed

    def __len__(self) -> int:
        return HOST_SAMPLES

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        g = torch.Generator().manual_seed(self.seed * HOST_SAMPLES + i)
        img = torch.randint(0, 256, (3, self.size, self.size), dtype=torch.uint8, generator=g)
        return img, i % self.num_classes


class _FileImages(Dataset[tuple[torch.Tensor, int]]):
    def __init__(self, index: ds.ClassificationIndex, size: int) -> None:
        self.index, self.size = index, size

    def __len__(self) -> int:
        return len(self.index.files)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        arr = ds.load_image(self.index.files[i], self.size)
        return torch.from_numpy(arr).permute(2, 0, 1).contiguous(), self.index.labels[i]


class _Detection(Dataset[tuple[torch.Tensor, dict[str, torch.Tensor]]]):
    def __init__(self, samples: list[ds.VocSample] | None, size: int, seed: int) -> None:
        self.samples, self.size, self.seed = samples, size, seed

    def __len__(self) -> int:
        return len(self.samples) if self.samples is not None else HOST_SAMPLES

    def __getitem__(self, i: int) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        if self.samples is None:
            g = torch.Generator().manual_seed(self.seed * HOST_SAMPLES + i)
            img = torch.randint(0, 256, (3, self.size, self.size), dtype=torch.uint8, generator=g)
            return img, _random_boxes(self.size, torch.device("cpu"), g)
        s = self.samples[i]
        img = torch.from_numpy(ds.load_image(s.image, None)).permute(2, 0, 1).contiguous()
        return img, {"boxes": torch.from_numpy(s.boxes), "labels": torch.from_numpy(s.labels)}


class _Volumes(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Crops of KiTS19 cases (``dims=2``: axial slices for the 2D U-Net), or random volumes."""

    CROPS_PER_CASE = 8  # consecutive items share a case, so a worker preprocesses each case once

    def __init__(self, cases: list[ds.KitsCase] | None, size: int, dims: int, seed: int) -> None:
        self.cases, self.size, self.dims, self.seed = cases, size, dims, seed
        self._cached: tuple[str, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.cases) * self.CROPS_PER_CASE if self.cases else HOST_SAMPLES

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        crop = (self.size,) * 3 if self.dims == 3 else (1, self.size, self.size)
        rng = np.random.default_rng(self.seed * 1_000_003 + i)
        if not self.cases:
            img = rng.standard_normal(crop, dtype=np.float32)
            lab = rng.integers(0, SEG_CLASSES, crop, dtype=np.uint8)
        else:
            case = self.cases[(i // self.CROPS_PER_CASE) % len(self.cases)]
            if self._cached is None or self._cached[0] != case.case_id:
                self._cached = (case.case_id, *ds.load_kits_case(case))
            img, lab = ds.random_crop_3d(self._cached[1], self._cached[2], crop, rng)
        if self.dims == 2:
            img, lab = img[0], lab[0]
        return torch.from_numpy(img)[None], torch.from_numpy(lab.astype(np.int64))


def _random_boxes(
    size: int, device: torch.device, g: torch.Generator | None = None
) -> dict[str, torch.Tensor]:
    n = 3
    xy = torch.rand(n, 2, generator=g) * size * 0.6
    wh = (0.1 + torch.rand(n, 2, generator=g) * 0.3) * size
    boxes = torch.cat([xy, (xy + wh).clamp(max=size)], dim=1)
    labels = torch.randint(1, 21, (n,), generator=g)
    return {"boxes": boxes.to(device), "labels": labels.to(device)}


def _collate_list(batch: list[Any]) -> tuple[list[Any], list[Any]]:
    images, targets = zip(*batch, strict=True)
    return list(images), list(targets)


# --- the task: batches and steps -------------------------------------------------------------------


class Task:
    """Batches for one workload, and the loss/forward of one step on a batch."""

    def __init__(self, shape: Shape, data: str | None, data_source: str, split: str, seed: int):
        self.shape = shape
        self.info = WORKLOADS[shape.workload]
        self.kind = {"classification": "cls", "detection": "det"}.get(self.info.task, "seg")
        self.layout: str | None = None
        self._index: Any = None
        if data is not None:
            self._index_real(data, split)
        self.data_label = f"real:{self.layout}" if self.layout else data_source
        self.seed = seed
        dev = shape.device
        self._mean = torch.tensor(IMAGENET_MEAN, device=dev).view(1, 3, 1, 1) * 255
        self._std = torch.tensor(IMAGENET_STD, device=dev).view(1, 3, 1, 1) * 255

    def _index_real(self, data: str, split: str) -> None:
        self._index, self.layout = ds.index_for(self.info.task, data, split)

    @property
    def num_classes(self) -> int:
        if self.kind == "cls" and self.layout:
            return int(self._index.num_classes)
        return self.shape.num_classes

    # Batches ------------------------------------------------------------------------------------

    def batches(self, synthetic_device: bool, workers: int) -> Iterator[Any]:
        """An endless iterator of device batches."""
        if synthetic_device and self.layout is None:
            batch = self.device_batch()
            while True:
                yield batch
        loader = self._loader(workers)
        while True:
            for raw in loader:
                yield self._to_device(raw)

    def device_batch(self) -> Any:
        """One synthetic batch made on the device, the same every call (seeded)."""
        s, g = self.shape, torch.Generator().manual_seed(self.seed)
        b, n, dev = s.batch_size, s.image_size, s.device
        if self.kind == "cls":
            x = in_format(torch.randn(b, 3, n, n, generator=g).to(dev), s.memory_format)
            return x, torch.randint(0, self.num_classes, (b,), generator=g).to(dev)
        if self.kind == "det":
            images = [torch.rand(3, n, n, generator=g).to(dev) for _ in range(b)]
            return images, [_random_boxes(n, dev, g) for _ in range(b)]
        dims = (n,) * self.info.spatial_dims
        x = in_format(torch.randn(b, 1, *dims, generator=g).to(dev), s.memory_format)
        return x, torch.randint(0, SEG_CLASSES, (b, *dims), generator=g).to(dev)

    def _loader(self, workers: int) -> DataLoader[Any]:
        s = self.shape
        dataset: Dataset[Any]
        collate: Callable[[list[Any]], Any] | None = None
        if self.kind == "cls":
            if self.layout:
                dataset = _FileImages(self._index, s.image_size)
            else:
                dataset = _HostImages(s.image_size, self.num_classes, self.seed)
        elif self.kind == "det":
            dataset = _Detection(self._index, s.image_size, self.seed)
            collate = _collate_list
        else:
            dataset = _Volumes(self._index, s.image_size, self.info.spatial_dims, self.seed)
        g = torch.Generator().manual_seed(self.seed)
        sampler = (
            SequentialSampler(dataset)
            if isinstance(dataset, _Volumes) and self.layout
            else RandomSampler(dataset, replacement=True, num_samples=HOST_SAMPLES, generator=g)
        )
        return DataLoader(
            dataset,
            batch_size=s.batch_size,
            sampler=sampler,
            num_workers=workers,
            collate_fn=collate,
            pin_memory=s.device.type == "cuda",
            drop_last=len(dataset) >= s.batch_size,
            persistent_workers=workers > 0,
        )

    def _to_device(self, raw: Any) -> Any:
        s, dev = self.shape, self.shape.device
        if self.kind == "det":
            images, targets = raw
            images = [im.to(dev, non_blocking=True).float().div_(255) for im in images]
            targets = [{k: v.to(dev, non_blocking=True) for k, v in t.items()} for t in targets]
            return images, targets
        x, y = raw
        x = x.to(dev, non_blocking=True)
        if self.kind == "cls":
            x = (x.float() - self._mean) / self._std
        return in_format(x, s.memory_format), y.to(dev, non_blocking=True)

    def samples(self, batch: Any) -> int:
        return len(batch[0])

    # Steps --------------------------------------------------------------------------------------

    def loss(self, model: nn.Module, batch: Any) -> torch.Tensor:
        x, y = batch
        if self.kind == "det":
            losses = model(x, y)  # RPN objectness + box, RoI-head classifier + box regression
            return sum(losses.values())
        out = model(x).float()
        if "dice" not in self.info.loss:
            return nn.functional.cross_entropy(out, y)
        # Cross-entropy + soft Dice (MLPerf's DiceCELoss) from one log-softmax of the output.
        log_probs = out.log_softmax(dim=1)
        return nn.functional.nll_loss(log_probs, y) + _soft_dice_loss(log_probs.exp(), y)

    def forward(self, model: nn.Module, batch: Any) -> Any:
        return model(batch[0])


def in_format(x: torch.Tensor, fmt: torch.memory_format) -> torch.Tensor:
    """``x`` in ``fmt`` with strides that say so, as ``x.to(memory_format=fmt)`` makes it.

    Not ``x.contiguous(memory_format=fmt)``: a one-channel batch (the U-Nets' N x 1 x H x W)
    already passes the channels-last contiguity test with its NCHW strides (a size-1 dimension's
    stride is not checked), so ``contiguous`` returns it unchanged and PyTorch goes on reading it
    as NCHW. The first convolution then mixes layouts, and cuDNN adds layout copies to every step
    and picks other kernels: 3.4% of U-Net (2D) bf16 training on an H200 (benchmarks/unet_gap.py).
    """
    return x.to(memory_format=fmt)


def _soft_dice_loss(probs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """1 - mean over images and classes of the soft Dice score of class probabilities (N, C, ...).

    Dense one-hot products, not scatter_add: on the H200 the scatter form (every voxel an atomic
    add into N x C counters) cost the 3D U-Net's tf32 training 5% against a plain loop; the one-hot
    volume of 3 classes at 128^3 is a few tens of MB."""
    c = probs.shape[1]
    onehot = nn.functional.one_hot(target, c).movedim(-1, 1).to(probs.dtype)
    axes = tuple(range(2, probs.ndim))
    inter = (probs * onehot).sum(axes)
    union = probs.sum(axes) + onehot.sum(axes)
    return 1.0 - ((2 * inter + 1e-6) / (union + 1e-6)).mean()
