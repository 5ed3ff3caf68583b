"""`--preset max` (TensorFlow) on the CPU: bf16 mixed precision and XLA (jit_compile), every choice
in the start event and the result's settings, the PyTorch-only switches reported as off."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runners.tf.helpers import FAST, TINY, check_stream, needs_tf, run_tf

pytestmark = [needs_tf, pytest.mark.slow]


def test_tf_max_is_mixed_bf16_and_xla_on_the_cpu(tmp_path: Path) -> None:
    argv = ["resnet50", *FAST, *TINY["resnet50"], "--preset", "max", "--repeat", "1"]
    rc, events = run_tf(argv, tmp_path / "e")
    assert rc == 0, events[-1:]
    result = check_stream(events)
    start = events[0]
    assert start["config"]["xla"] and start["config"]["precision"] == "bf16"
    assert start["preset_choices"]["xla"] == "jit_compile"
    assert "mixed_bfloat16" in start["precision_detail"]
    settings = result["settings"]
    assert settings["compile"] == "xla" and settings["compile_mode"] == "jit_compile=True"
    assert settings["graphs"] == "off" and settings["batch_search"] is None
    assert result["xla"] is True and result["batch_size"] == 2
