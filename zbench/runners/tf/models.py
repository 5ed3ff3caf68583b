"""Keras models of the classification and segmentation workloads.

All layouts are channels-last (NHWC / NDHWC), TensorFlow's fast layout on NVIDIA GPUs. Each model
returns logits (no softmax), and its last layer computes in float32 so that losses under a mixed
precision policy are taken in float32, as autocast does on the PyTorch side.
"""

from __future__ import annotations

import keras
from keras import layers


def resnet50(num_classes: int, image_size: int) -> keras.Model:
    """Keras ResNet-50, randomly initialised, for ``image_size`` squares; logits out."""
    # keras.applications' ResNet-50 has biases in its convolutions, torchvision's does not: 25.64 M
    # parameters against 25.56 M (0.3 %). The compute is the same.
    return keras.applications.ResNet50(
        weights=None,
        input_shape=(image_size, image_size, 3),
        classes=num_classes,
        classifier_activation=None,
    )


def vgg16(num_classes: int, image_size: int) -> keras.Model:
    """Keras VGG16, randomly initialised, for ``image_size`` squares; logits out."""
    # Same parameter count as torchvision's VGG16 at 224x224 (138,357,544). torchvision pools to 7x7
    # before its classifier at any input size; Keras flattens what the convolutions give, so at other
    # sizes the first dense layer's size differs.
    return keras.applications.VGG16(
        weights=None,
        input_shape=(image_size, image_size, 3),
        classes=num_classes,
        classifier_activation=None,
    )


def _double_conv_2d(x: keras.KerasTensor, filters: int, name: str) -> keras.KerasTensor:
    for i in (1, 2):
        x = layers.Conv2D(filters, 3, padding="same", activation="relu", name=f"{name}_conv{i}")(x)
    return x


def unet2d(
    num_classes: int = 3,
    image_size: int = 256,
    in_channels: int = 1,
    widths: tuple[int, ...] = (64, 128, 256, 512, 1024),
) -> keras.Model:
    """Ronneberger et al.'s U-Net, as the PyTorch version (torch/unet2d.py): four levels of two
    3x3 convolutions + ReLU and a 2x2 max pool down, 2x2 transposed convolutions that halve the
    channels up, skips concatenated, dropout 0.5 at the end of the contracting path, a 1x1 output
    convolution, no normalization. Like the PyTorch version and unlike the paper, the convolutions
    are padded, so the output has the input's size (multiples of 16)."""
    inputs = keras.Input((image_size, image_size, in_channels), name="image")
    x = inputs
    skips = []
    for level, width in enumerate(widths[:-1]):
        x = _double_conv_2d(x, width, f"down{level}")
        skips.append(x)
        x = layers.MaxPool2D(2, name=f"pool{level}")(x)
    x = _double_conv_2d(x, widths[-1], "bottom")
    x = layers.SpatialDropout2D(0.5, name="bottom_dropout")(x)
    for level in reversed(range(len(widths) - 1)):
        x = layers.Conv2DTranspose(widths[level], 2, strides=2, name=f"up{level}_tconv")(x)
        x = layers.Concatenate(name=f"up{level}_cat")([skips[level], x])
        x = _double_conv_2d(x, widths[level], f"up{level}")
    outputs = layers.Conv2D(num_classes, 1, dtype="float32", name="logits")(x)
    return keras.Model(inputs, outputs, name="unet2d")


def _conv_block_3d(x: keras.KerasTensor, filters: int, stride: int, name: str) -> keras.KerasTensor:
    x = layers.Conv3D(
        filters, 3, strides=stride, padding="same", use_bias=False, name=f"{name}_conv"
    )(x)
    # Instance norm = group norm with one group per channel (affine, eps 1e-5 like InstanceNorm3d).
    x = layers.GroupNormalization(groups=-1, epsilon=1e-5, name=f"{name}_in")(x)
    return layers.LeakyReLU(negative_slope=0.01, name=f"{name}_lrelu")(x)


def unet3d(
    num_classes: int = 3,
    image_size: int = 128,
    in_channels: int = 1,
    filters: tuple[int, ...] = (32, 64, 128, 256, 320, 320),
) -> keras.Model:
    """The 3D U-Net of MLPerf Training's KiTS19 reference (image_segmentation/pytorch/model/unet3d.py):
    per level two 3x3x3 convolutions (the first strided on the way down) with instance norm and leaky
    ReLU, transposed-convolution upsampling, concatenated skips, a 1x1x1 output convolution."""
    inputs = keras.Input((image_size, image_size, image_size, in_channels), name="volume")
    x = _conv_block_3d(inputs, filters[0], 1, "input1")
    x = _conv_block_3d(x, filters[0], 1, "input2")
    skips = [x]
    for level, width in enumerate(filters[1:], start=1):
        x = _conv_block_3d(x, width, 2, f"down{level}a")
        x = _conv_block_3d(x, width, 1, f"down{level}b")
        skips.append(x)
    skips.pop()  # the bottleneck's output is not a skip
    for level in reversed(range(len(filters) - 1)):
        x = layers.Conv3DTranspose(filters[level], 2, strides=2, name=f"up{level}_tconv")(x)
        x = layers.Concatenate(name=f"up{level}_cat")([x, skips[level]])
        x = _conv_block_3d(x, filters[level], 1, f"up{level}a")
        x = _conv_block_3d(x, filters[level], 1, f"up{level}b")
    outputs = layers.Conv3D(num_classes, 1, dtype="float32", name="logits")(x)
    return keras.Model(inputs, outputs, name="unet3d")


def build_model(workload: str, num_classes: int, image_size: int, xla: bool = False) -> keras.Model:
    """The Keras model of ``workload``, randomly initialized."""
    if workload == "fasterrcnn":
        from zbench.runners.tf.fasterrcnn import FasterRCNN

        return FasterRCNN(num_classes=num_classes, image_size=image_size, xla=xla)
    builders = {"resnet50": resnet50, "vgg16": vgg16, "unet2d": unet2d, "unet3d": unet3d}
    return builders[workload](num_classes=num_classes, image_size=image_size)
