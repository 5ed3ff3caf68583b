"""Fitting column tables to a width: short headers, then the free text cut, then whole columns."""

from __future__ import annotations

import pytest

from zbench import textfit
from zbench.textfit import Column, fit, lines

COLS = (
    Column("Identifier", "ID", right=True),
    Column("Workload"),
    Column("Samples per second", "img/s", priority=1, right=True),
    Column("Started at", "Start", priority=2),
    Column("Reason", priority=1, flex=True, min_width=10),
)
ROWS = [
    ["12", "resnet50", "4,398.2", "12:03:44", "crashed: RuntimeError: CUDA out of memory (38 GiB)"],
    ["3", "vgg16", "890.1", "11:58:01", ""],
]


def test_no_width_keeps_everything_whole() -> None:
    layout, out = lines(COLS, ROWS, None)
    assert layout.dropped == () and out[0].startswith("Identifier")
    assert out[1].endswith("(38 GiB)")


def test_narrow_takes_short_headers_then_cuts_the_free_text() -> None:
    layout, out = lines(COLS, ROWS, 70)
    assert out[0].split()[:3] == ["ID", "Workload", "img/s"]
    assert all(len(line) <= 70 for line in out)
    assert out[1].endswith("…") and layout.dropped == ()


def test_very_narrow_drops_least_important_columns_whole() -> None:
    layout, out = lines(COLS, ROWS, 40)
    assert all(len(line) <= 40 for line in out)
    assert layout.dropped[0] == "Started at"
    assert "4,398.2" in out[1] or "Samples per second" in layout.dropped
    assert "12" in out[1] and "resnet50" in out[1]  # priority 0 always stays whole


def test_right_alignment_and_ascii_ellipsis() -> None:
    _, out = lines(COLS, ROWS, 60, ellipsis="...")
    assert out[2].startswith(" 3")
    assert out[1].endswith("...")


def test_fit_reports_widths_that_add_up() -> None:
    layout = fit(COLS, ROWS, 80)
    assert layout.total() <= 80


@pytest.mark.parametrize(
    ("n", "text"), [(0, "0 GPUs"), (1, "1 GPU"), (2, "2 GPUs"), (1024, "1024 GPUs")]
)
def test_a_count_takes_its_noun_in_the_right_number(n: int, text: str) -> None:
    """Messages read "1 GPU" and "2 GPUs", never "GPU(s)"."""
    assert textfit.counted(n, "GPU") == text


def test_a_gpu_list_names_one_gpu_or_several() -> None:
    assert textfit.gpu_list([7]) == "GPU 7"
    assert textfit.gpu_list([0, 1]) == "GPUs 0,1"
    assert textfit.gpu_list([]) == "no GPU"
