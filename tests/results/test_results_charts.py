"""Charts: one PNG per figure of the review, published figures beside the user's."""

from __future__ import annotations

from pathlib import Path

from zbench.results.api import query_results
from zbench.results.charts import write_charts

EXPECTED = {
    "throughput_train.png",
    "throughput_infer.png",
    "scaling.png",
    "gpu_util.png",
    "gpu_memory.png",
    "cpu_util.png",
    "precision_speedup.png",
    # The Quadro's one run gets its own charts: runs of two devices never share one.
    "throughput_infer_quadro_rtx_8000___rev_b.png",
    "cpu_util_quadro_rtx_8000___rev_b.png",
}


def test_all_figures_written(filled: Path, tmp_path: Path) -> None:
    charts = write_charts(query_results(filled), tmp_path / "charts")
    assert {c.path.name for c in charts} == EXPECTED
    for chart in charts:
        data = chart.path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, chart.path
        assert chart.description
    by_name = {c.path.name: c.description for c in charts}
    # H200's published "FP32" is TF32: no hatched bar beside strict-FP32 runs.
    assert "published figures hatched" not in by_name["throughput_train.png"]
    assert "PyTorch, batch 128/GPU: 1.93x on 2 GPUs, 96% efficiency" in by_name["scaling.png"]
    assert "TensorFlow, batch 128/GPU: 1.06x on 2 GPUs, 53% efficiency" in by_name["scaling.png"]


def test_only_figures_with_data(filled: Path, tmp_path: Path) -> None:
    rows = [r for r in query_results(filled) if r.mode == "infer"]
    charts = write_charts(rows, tmp_path / "charts")
    names = {c.path.name for c in charts}
    assert {"throughput_infer.png", "gpu_util.png", "cpu_util.png"} < names
    assert not any(
        n.startswith(("scaling", "precision", "gpu_memory", "throughput_train")) for n in names
    )


def test_a_cpu_runs_chart_names_the_cpu_once(filled: Path, tmp_path: Path) -> None:
    """The captions read "..., CPU, FP32, CPU"."""
    import dataclasses

    rows = [dataclasses.replace(r, gpus=0, gpu_name="CPU") for r in query_results(filled)]
    by_name = {c.path.name: c.description for c in write_charts(rows, tmp_path / "charts")}
    assert by_name["throughput_train.png"].startswith(
        "training throughput (samples/s) per model and framework, CPU, FP32"
    )
    assert "CPU, FP32, CPU" not in " ".join(by_name.values())


def test_an_inference_only_selection_is_not_captioned_training_vs_inference(
    filled: Path, tmp_path: Path
) -> None:
    rows = [r for r in query_results(filled) if r.mode == "infer"]
    charts = {c.path.name: c.description for c in write_charts(rows, tmp_path / "charts")}
    assert charts["gpu_util.png"] == "GPU utilization per model, inference (measured window)"
    every = {c.path.name: c.description for c in write_charts(query_results(filled), tmp_path)}
    assert "training vs inference" in every["gpu_util.png"]


def test_the_precision_chart_names_the_precisions_it_draws(filled: Path, tmp_path: Path) -> None:
    """FP16 and BF16 bars beside FP32 were captioned "TF32/FP16/BF16 throughput over FP32", and
    the hatched published bar went unsaid."""
    charts = {c.path.name: c.description for c in write_charts(query_results(filled), tmp_path)}
    assert charts["precision_speedup.png"] == (
        "FP16/BF16 throughput over FP32 per model, framework and mode; "
        "hatched: FP16 published, over TF32"
    )


def test_undrawn_runs_are_those_no_chart_draws_older_repeats_aside(
    filled: Path, tmp_path: Path
) -> None:
    import dataclasses

    from zbench.results.charts import undrawn

    rows = query_results(filled)
    vgg = next(r for r in rows if r.workload == "vgg16")
    older = dataclasses.replace(vgg, run_id=99, created=vgg.created - 60)  # a repeat of its setup
    bf16 = next(r for r in rows if r.precision == "bf16")
    alone = [older, vgg, bf16]  # the BF16 run without the FP32 run of its setup
    charts = write_charts(alone, tmp_path / "alone")
    assert [r.run_id for r in undrawn(alone, charts)] == [bf16.run_id]
    assert undrawn([*rows, older], write_charts([*rows, older], tmp_path / "all")) == []
