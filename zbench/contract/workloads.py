"""The workload table: what each benchmark workload is, framework-free (standard library only).

The runner's options (``config``), the results' labels and the runners' models all read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WorkloadInfo:
    """One row of the workload table: everything framework-free about a workload. A new workload is
    one row here plus a model and a data function per framework (``runners/torch/models.py`` and
    ``tasks.py``; ``runners/tf/models.py`` and ``workloads.py``)."""

    name: str
    title: str
    task: str  # "classification" | "detection" | "segmentation"
    unit: str  # what one sample is: "images", "volumes"
    dataset: str  # the real dataset layout --data accepts
    default_batch: int  # the review's 128 where it fits a 48 GB card, else stated here
    batch_note: str = ""
    image_size: int = 224  # the review's input size (a side of the square or cube)
    num_classes: int = 1000  # synthetic data's classes (a real dataset brings its own)
    max_batch: int = 128  # --preset max on one H200-class GPU
    # --preset max without --batch-size: the batches it measures (a few steps each) before the run,
    # keeping the fastest; empty = max_batch only.
    max_train_batches: tuple[int, ...] = ()
    max_infer_batches: tuple[int, ...] = ()
    spatial_dims: int = 2  # 2 for images, 3 for volumes
    in_channels: int = 3
    size_multiple: int = 1  # --image-size must be a multiple of this
    min_size: int = 32  # ... and at least this
    compile_in_max: bool = True  # whether --preset max turns on torch.compile / XLA
    compile_note: str = ""  # why not, when it does not
    graphs_in_max: bool = True  # whether --preset max captures the step in a CUDA graph
    graphs_note: str = ""  # why not, when it does not
    loss: str = "cross-entropy"  # segmentation: "cross-entropy" or "cross-entropy + dice"
    # Training needs two samples per GPU: ResNet-50's batch norm fails on one sample once its last
    # feature map is 1x1 (a small --image-size), and at any size has no batch to normalize over.
    # (Faster R-CNN trains on one image per GPU, as its reference does.)
    batch_norm: bool = False


WORKLOADS: dict[str, WorkloadInfo] = {
    w.name: w
    for w in (
        # --preset max: a larger batch only where it raised throughput (ResNet-50's and the U-Nets'
        # kernels are still launch-bound at the review's batch in bf16).
        WorkloadInfo(
            "resnet50",
            "ResNet-50",
            "classification",
            "images",
            "flowers102 | imagenet",
            128,
            # Training runs at max_batch with no search: under --preset max's kernel tuning, batch
            # 384 ran at 0.99x of 256 on one H200 (benchmarks/peak_candidates.py, cdt384 against
            # cdt), and searching it cost a first run a second tuned compile (about 4 minutes).
            max_batch=256,
            max_infer_batches=(512, 1024),
            batch_norm=True,
        ),
        WorkloadInfo(
            "vgg16",
            "VGG16",
            "classification",
            "images",
            "imagenet | flowers102",
            128,
            max_train_batches=(128, 256),
            max_infer_batches=(256, 512),
        ),
        WorkloadInfo(
            "fasterrcnn",
            "Faster R-CNN R50-FPN",
            "detection",
            "images",
            "voc",
            16,
            "batch 16 per GPU: 128 800px detection images do not fit a 48 GB card",
            image_size=800,
            num_classes=21,
            max_batch=16,
            # torch.compile of torchvision's detection models breaks the graph at every
            # data-dependent step (anchor matching, NMS), compiles for minutes and gains nothing;
            # XLA compiles only the convolutional parts (NMS and sampling have no XLA kernels).
            compile_in_max=False,
            compile_note="off: detection graphs break at data-dependent steps",
            graphs_in_max=False,
            graphs_note="off: lists of images and data-dependent shapes cannot be captured",
        ),
        WorkloadInfo(
            "unet2d",
            "U-Net (2D)",
            "segmentation",
            "images",
            "kits19 (axial slices)",
            32,
            "batch 32 per GPU at 256x256: 128 does not fit a 48 GB card in FP32 training",
            image_size=256,
            num_classes=3,
            max_batch=64,
            max_train_batches=(64, 128),
            max_infer_batches=(128, 256),
            in_channels=1,
            size_multiple=16,
            min_size=16,
        ),
        WorkloadInfo(
            "unet3d",
            "3D U-Net (KiTS19)",
            "segmentation",
            "volumes",
            "kits19",
            2,
            "batch 2 of 128^3 crops, as MLPerf's KiTS19 reference",
            image_size=128,
            num_classes=3,
            max_batch=4,
            max_train_batches=(4, 8),
            max_infer_batches=(8, 16),
            spatial_dims=3,
            in_channels=1,
            size_multiple=32,
            min_size=64,
            loss="cross-entropy + dice",  # MLPerf's DiceCELoss
        ),
    )
}
