"""Faster R-CNN with a ResNet-50 FPN backbone, written in Keras.

TensorFlow Model Garden (tf-models-official) has a Faster R-CNN, but it does not install beside the
TensorFlow zbench targets: its 2.20 release pins tensorflow~=2.20.0 and tensorflow-text, pulls in
tf-keras (Keras 2, while zbench's models are Keras 3) and a long tail (kaggle, pandas, sacrebleu,
opencv...), and its seqeval dependency fails to build. So the detector is written here, following
torchvision's fasterrcnn_resnet50_fpn (the PyTorch side) part for part:

- backbone: keras.applications ResNet-50 (C2..C5), FPN with 256 channels, P6 by max-pooling P5;
- RPN: 3x3 conv + objectness and box-delta 1x1 convs, anchors 32..512 (one size per level) x ratios
  0.5/1/2; matched at IoU 0.7/0.3, 256 sampled per image (half positive), BCE + smooth-L1 losses;
- proposals: per-level top-k, decoding, NMS at 0.7 (one NMS over all levels, torchvision does one
  per level), 2000 kept in training, 1000 in inference;
- box head: multi-scale RoI Align 7x7, two 1024-wide dense layers, 21-way classifier and per-class
  box regression; 512 RoIs sampled per image (25 % positive at IoU 0.5), GT boxes added as
  proposals; cross-entropy + smooth-L1 losses;
- inference: softmax, per-class decoding, score threshold 0.05, per-class NMS 0.5, 100 detections.

Shapes are static (padded ground truth, fixed proposal and sample counts) so that a step is one
graph; images are square ``image_size`` (the PyTorch side lets torchvision resize to 800 px).
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf
from keras import layers

from zbench.runners.tf import rcnn_ops as ops

STRIDES = (4, 8, 16, 32, 64)
ANCHOR_SIZES = (32, 64, 128, 256, 512)
RATIOS = (0.5, 1.0, 2.0)
RPN_WEIGHTS = (1.0, 1.0, 1.0, 1.0)
BOX_WEIGHTS = (10.0, 10.0, 5.0, 5.0)
BACKBONE_OUTPUTS = ("conv2_block3_out", "conv3_block4_out", "conv4_block6_out", "conv5_block3_out")


class FasterRCNN(keras.Model):
    """Faster R-CNN with a ResNet-50 FPN backbone in Keras: RPN and box heads, static shapes."""

    def __init__(
        self,
        num_classes: int = 21,
        image_size: int = 800,
        pre_nms: tuple[int, int] = (2000, 1000),  # (train, infer), per level
        post_nms: tuple[int, int] = (2000, 1000),
        rpn_batch: int = 256,
        xla: bool = False,
        roi_batch: int = 512,
        **kwargs: Any,
    ) -> None:
        super().__init__(name="fasterrcnn", **kwargs)
        self.num_classes = num_classes
        self.xla = xla
        self.image_size = image_size
        self.pre_nms, self.post_nms = pre_nms, post_nms
        self.rpn_batch, self.roi_batch = rpn_batch, roi_batch
        resnet = keras.applications.ResNet50(
            weights=None, include_top=False, input_shape=(image_size, image_size, 3)
        )
        self.backbone = keras.Model(
            resnet.input, [resnet.get_layer(n).output for n in BACKBONE_OUTPUTS], name="backbone"
        )
        self.lateral = [layers.Conv2D(256, 1, name=f"fpn_lateral{i}") for i in range(4)]
        self.smooth = [layers.Conv2D(256, 3, padding="same", name=f"fpn_out{i}") for i in range(4)]
        self.rpn_conv = layers.Conv2D(256, 3, padding="same", activation="relu", name="rpn_conv")
        self.rpn_cls = layers.Conv2D(len(RATIOS), 1, name="rpn_objectness")
        self.rpn_box = layers.Conv2D(4 * len(RATIOS), 1, name="rpn_deltas")
        self.fc6 = layers.Dense(1024, activation="relu", name="box_fc6")
        self.fc7 = layers.Dense(1024, activation="relu", name="box_fc7")
        self.cls_score = layers.Dense(num_classes, dtype="float32", name="box_cls")
        self.bbox_pred = layers.Dense(4 * num_classes, dtype="float32", name="box_deltas")
        feature_sizes = [
            s for s in self.backbone.compute_output_shape((1, image_size, image_size, 3))
        ]
        sizes = [int(s[1]) for s in feature_sizes]
        sizes.append((sizes[-1] - 1) // 2 + 1)  # P6: max-pool, kernel 1, stride 2
        self.level_anchors = [
            ops.anchors_for_level(f, st, a, RATIOS)
            for f, st, a in zip(sizes, STRIDES, ANCHOR_SIZES, strict=True)
        ]
        self.anchors = tf.constant(np.concatenate(self.level_anchors), dtype=tf.float32)
        self.build((None, image_size, image_size, 3))
        # With XLA, the convolutional and dense parts (nearly all the FLOPs) are compiled; matching,
        # sampling and NMS stay ordinary TensorFlow ops (XLA has no NMS kernels).
        self._dense = tf.function(self.dense, jit_compile=True) if xla else self.dense
        self._box_head = tf.function(self.box_head, jit_compile=True) if xla else self.box_head

    def build(self, input_shape: Any) -> None:
        c = self.backbone.output_shape
        for i in range(4):
            self.lateral[i].build(c[i])
            self.smooth[i].build((None, None, None, 256))
        self.rpn_conv.build((None, None, None, 256))
        self.rpn_cls.build((None, None, None, 256))
        self.rpn_box.build((None, None, None, 256))
        self.fc6.build((None, 7 * 7 * 256))
        self.fc7.build((None, 1024))
        self.cls_score.build((None, 1024))
        self.bbox_pred.build((None, 1024))
        self.built = True

    # --- stages ----------------------------------------------------------------------------------

    def features(self, images: tf.Tensor, training: bool) -> list[tf.Tensor]:
        cs = self.backbone(images, training=training)
        laterals = [self.lateral[i](c) for i, c in enumerate(cs)]
        merged = [laterals[-1]]
        for lat in reversed(laterals[:-1]):
            # Nearest 2x upsampling cropped to the lateral's size (odd sizes): repeat, not
            # tf.image.resize, whose gradient XLA cannot compile.
            up = tf.repeat(tf.repeat(merged[0], 2, axis=1), 2, axis=2)
            up = up[:, : lat.shape[1], : lat.shape[2]]
            merged.insert(0, lat + tf.cast(up, lat.dtype))
        ps = [self.smooth[i](m) for i, m in enumerate(merged)]
        ps.append(ps[-1][:, ::2, ::2, :])  # P6 = max_pool(P5, kernel 1, stride 2)
        return ps

    def rpn(self, ps: list[tf.Tensor]) -> tuple[tf.Tensor, tf.Tensor]:
        logits, deltas = [], []
        for p in ps:
            t = self.rpn_conv(p)
            b = tf.shape(t)[0]
            logits.append(tf.reshape(tf.cast(self.rpn_cls(t), tf.float32), (b, -1)))
            deltas.append(tf.reshape(tf.cast(self.rpn_box(t), tf.float32), (b, -1, 4)))
        return tf.concat(logits, axis=1), tf.concat(deltas, axis=1)

    def proposals(self, logits: tf.Tensor, deltas: tf.Tensor, training: bool) -> tf.Tensor:
        mode = 0 if training else 1
        pre, post = self.pre_nms[mode], self.post_nms[mode]
        logits, deltas = tf.stop_gradient(logits), tf.stop_gradient(deltas)
        boxes, scores, start = [], [], 0
        for level in self.level_anchors:
            n = len(level)
            top = tf.math.top_k(logits[:, start : start + n], k=min(pre, n))
            d = tf.gather(deltas[:, start : start + n], top.indices, batch_dims=1)
            a = tf.gather(self.anchors[start : start + n], top.indices)
            boxes.append(ops.clip_boxes(ops.decode(d, a, RPN_WEIGHTS), self.image_size))
            scores.append(top.values)
            start += n
        boxes_all, scores_all = tf.concat(boxes, axis=1), tf.concat(scores, axis=1)
        keep = min(post, int(boxes_all.shape[1]))
        idx, _ = tf.image.non_max_suppression_padded(
            boxes_all, scores_all, keep, iou_threshold=0.7, pad_to_max_output_size=True
        )
        return tf.gather(boxes_all, idx, batch_dims=1)  # padding repeats box 0: harmless

    def box_head(self, ps: list[tf.Tensor], rois: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        pooled = ops.roi_align(ps[:4], list(STRIDES[:4]), rois, xla=self.xla)
        x = tf.reshape(pooled, (-1, 7 * 7 * 256))
        x = self.fc7(self.fc6(x))
        return self.cls_score(x), self.bbox_pred(x)

    # --- training and inference ------------------------------------------------------------------

    def dense(self, images: tf.Tensor, training: bool) -> tuple[list[tf.Tensor], Any, Any]:
        ps = self.features(images, training)
        return (ps, *self.rpn(ps))

    def call(self, images: tf.Tensor, targets: Any = None, training: bool = False) -> Any:
        ps, logits, deltas = self._dense(images, training)
        proposals = self.proposals(logits, deltas, training)
        if targets is not None and training:
            return self._training_losses(ps, logits, deltas, proposals, targets)
        return self._detect(ps, proposals)

    def _training_losses(
        self,
        ps: list[tf.Tensor],
        logits: tf.Tensor,
        deltas: tf.Tensor,
        proposals: tf.Tensor,
        targets: Any,
    ) -> dict[str, tf.Tensor]:
        gt_boxes, gt_labels = targets
        gt_boxes = tf.cast(gt_boxes, tf.float32)
        gt_valid = gt_labels > 0
        b = tf.shape(gt_boxes)[0]
        # RPN: anchors against ground truth.
        anchors = tf.tile(self.anchors[None], [b, 1, 1])
        iou = ops.pairwise_iou(anchors, gt_boxes)
        matched, best = ops.match(iou, gt_valid)
        # Each ground truth's best anchors are positive too (torchvision's allow_low_quality_matches).
        per_gt_best = tf.reduce_max(tf.where(gt_valid[:, None, :], iou, -1.0), axis=1)
        low_quality = tf.reduce_any(
            (iou >= per_gt_best[:, None, :]) & gt_valid[:, None, :] & (per_gt_best[:, None, :] > 0),
            axis=-1,
        )
        positive = (best >= 0.7) | low_quality
        negative = (best < 0.3) & ~positive
        sampled = ops.sample_mask(positive, negative, self.rpn_batch, 0.5)
        n_sampled = tf.maximum(tf.reduce_sum(tf.cast(sampled, tf.float32)), 1.0)
        bce = tf.nn.sigmoid_cross_entropy_with_logits(tf.cast(positive, tf.float32), logits)
        rpn_obj = tf.reduce_sum(tf.where(sampled, bce, 0.0)) / n_sampled
        rpn_targets = ops.encode(tf.gather(gt_boxes, matched, batch_dims=1), anchors, RPN_WEIGHTS)
        l1 = tf.reduce_sum(ops.smooth_l1(deltas - rpn_targets, 1.0 / 9), axis=-1)
        rpn_box = tf.reduce_sum(tf.where(sampled & positive, l1, 0.0)) / n_sampled
        # Box head: proposals (+ ground truth) against ground truth, sampled.
        candidates = tf.concat([proposals, gt_boxes], axis=1)
        cand_valid = tf.concat([tf.ones_like(proposals[..., 0], tf.bool), gt_valid], axis=1)
        matched, best = ops.match(ops.pairwise_iou(candidates, gt_boxes), gt_valid)
        fg = (best >= 0.5) & cand_valid
        bg = (best < 0.5) & cand_valid
        idx, valid = ops.sample_indices(fg, bg, self.roi_batch, 0.25)
        rois = tf.gather(candidates, idx, batch_dims=1)
        roi_gt = tf.gather(matched, idx, batch_dims=1)
        roi_fg = tf.gather(fg, idx, batch_dims=1) & valid
        labels = tf.where(roi_fg, tf.gather(gt_labels, roi_gt, batch_dims=1), 0)
        box_targets = ops.encode(tf.gather(gt_boxes, roi_gt, batch_dims=1), rois, BOX_WEIGHTS)
        cls_logits, box_deltas = self._box_head(ps, tf.stop_gradient(rois))
        labels = tf.reshape(labels, (-1,))
        weight = tf.cast(tf.reshape(valid, (-1,)), tf.float32)
        n_rois = tf.maximum(tf.reduce_sum(weight), 1.0)
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, cls_logits)
        box_deltas = tf.reshape(box_deltas, (-1, self.num_classes, 4))
        own = tf.gather(box_deltas, labels, batch_dims=1)
        l1 = tf.reduce_sum(ops.smooth_l1(own - tf.reshape(box_targets, (-1, 4)), 1.0 / 9), axis=-1)
        fg_weight = tf.cast(tf.reshape(roi_fg, (-1,)), tf.float32)
        return {
            "rpn_objectness": rpn_obj,
            "rpn_box": rpn_box,
            "classifier": tf.reduce_sum(ce * weight) / n_rois,
            "box_reg": tf.reduce_sum(l1 * fg_weight) / n_rois,
        }

    def _detect(self, ps: list[tf.Tensor], proposals: tf.Tensor) -> dict[str, tf.Tensor]:
        cls_logits, box_deltas = self._box_head(ps, proposals)
        b, r = tf.shape(proposals)[0], int(proposals.shape[1])
        scores = tf.reshape(tf.nn.softmax(cls_logits), (b, r, self.num_classes))[..., 1:]
        deltas = tf.reshape(box_deltas, (b, r, self.num_classes, 4))[:, :, 1:]
        boxes = ops.decode(
            deltas, tf.repeat(proposals[:, :, None], self.num_classes - 1, 2), BOX_WEIGHTS
        )
        boxes = ops.clip_boxes(boxes, self.image_size)
        out = tf.image.combined_non_max_suppression(
            boxes, scores, 100, 100, iou_threshold=0.5, score_threshold=0.05, clip_boxes=False
        )
        return {
            "boxes": out.nmsed_boxes,
            "scores": out.nmsed_scores,
            "classes": out.nmsed_classes,
            "count": out.valid_detections,
        }
