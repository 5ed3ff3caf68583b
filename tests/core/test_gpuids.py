"""`zbench.gpuids`: the one parser of GPU indices (run, probe, monitor, the launch dialog, a suite's
`gpu_ids`) and its one wording for a value that is not an index and a GPU the machine lacks."""

from __future__ import annotations

import pytest

from zbench.errors import ZbenchError
from zbench.gpuids import GpuRequestError, check_offered, gpu_ids_from, no_gpu, parse_gpu_ids


def test_indices_in_the_order_given() -> None:
    assert parse_gpu_ids(None) is None
    assert parse_gpu_ids(" 1, 0 ") == (1, 0)
    assert parse_gpu_ids("０,７") == (0, 7)  # full-width digits are the numbers they show


@pytest.mark.parametrize(
    ("text", "part"),
    [("0,x", "x"), ("-1", "-1"), ("+1", "+1"), ("1_0", "1_0"), ("0,,1", ""), (" ", ""), ("²", "²")],
)
def test_what_is_not_an_index_is_one_line(text: str, part: str) -> None:
    """`-1` and a blank value passed the run parser's `int()` differently from the monitor's
    `isdigit()` (`²` passed that and then crashed `int()`); `1_0` read as GPU 10."""
    with pytest.raises(GpuRequestError) as caught:
        parse_gpu_ids(text)
    assert str(caught.value) == f"--gpu-ids: {part!r} is not a GPU index (expected e.g. 0,1)"


def test_a_gpu_named_twice_is_refused_not_dropped() -> None:
    """The monitor and the probe dropped the second 0 of `0,0`; `zbench run` refused it."""
    with pytest.raises(GpuRequestError, match=r"^--gpu-ids: GPU 0 is named twice$"):
        parse_gpu_ids("0,1,0")


def test_the_label_is_the_callers() -> None:
    with pytest.raises(GpuRequestError, match=r"^GPU ids: 'a' is not a GPU index"):
        parse_gpu_ids("a", option="GPU ids")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ([0, 1], None),
        (0, "gpu_ids: expected a list of GPU indices, e.g. [0, 1]"),
        ([], "gpu_ids: names no GPU (expected e.g. [0, 1])"),
        ([0, -1], "gpu_ids: -1 is not a GPU index (expected e.g. [0, 1])"),
        ([True], "gpu_ids: True is not a GPU index (expected e.g. [0, 1])"),
        (["0"], "gpu_ids: '0' is not a GPU index (expected e.g. [0, 1])"),
        ([1, 1], "gpu_ids: GPU 1 is named twice"),
    ],
)
def test_a_suites_list_is_checked_alike(value: object, says: str | None) -> None:
    if says is None:
        assert gpu_ids_from(value) == (0, 1)
        return
    with pytest.raises(GpuRequestError) as caught:
        gpu_ids_from(value)
    assert str(caught.value) == says


def test_gpus_the_machine_lacks_are_all_named() -> None:
    check_offered(None, [])
    check_offered((1, 0), [0, 1])
    with pytest.raises(GpuRequestError) as caught:
        check_offered((0, 7, 8), [0, 1])
    assert str(caught.value) == "--gpu-ids: no GPUs 7,8 on this machine (it offers GPUs 0,1)"
    with pytest.raises(GpuRequestError) as caught:
        check_offered((0,), [], why="nvidia-ml-py is not installed")
    assert str(caught.value) == (
        "--gpu-ids: no GPU 0 on this machine (it offers no GPU: nvidia-ml-py is not installed)"
    )


def test_every_problem_is_bad_input() -> None:
    assert issubclass(GpuRequestError, ZbenchError) and issubclass(GpuRequestError, ValueError)
    assert GpuRequestError("x").exit_code == 2
    assert no_gpu("pick device cpu") == "no GPU on this machine: pick device cpu"
    assert no_gpu("pick device cpu", "no NVIDIA driver (Driver Not Loaded)") == (
        "no GPU on this machine (no NVIDIA driver (Driver Not Loaded)): pick device cpu"
    )
