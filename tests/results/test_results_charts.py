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
}


def test_all_figures_written(filled: Path, tmp_path: Path) -> None:
    charts = write_charts(query_results(filled), tmp_path / "charts")
    assert {c.path.name for c in charts} == EXPECTED
    for chart in charts:
        data = chart.path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, chart.path
        assert chart.description
    by_name = {c.path.name: c.description for c in charts}
    assert "published figures hatched" in by_name["throughput_train.png"]
    assert "PyTorch: 1.93x on 2 GPUs, 96% efficiency" in by_name["scaling.png"]
    assert "TensorFlow: 1.06x on 2 GPUs, 53% efficiency" in by_name["scaling.png"]


def test_only_figures_with_data(filled: Path, tmp_path: Path) -> None:
    rows = [r for r in query_results(filled) if r.mode == "infer"]
    charts = write_charts(rows, tmp_path / "charts")
    assert {c.path.name for c in charts} == {"throughput_infer.png", "gpu_util.png", "cpu_util.png"}
