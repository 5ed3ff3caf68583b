"""A GPU panel's figures fit the panel at any width, and the dashboard shows the full panels
wherever they fit. The panels had a fixed height of four lines: at 120 columns their figures
wrapped and pushed the NVLink line out of sight, at 160 a busy link pushed out the warnings, and
below 120x40 two GPUs showed only as one-line rows however much room there was."""

from __future__ import annotations

import dataclasses

import pytest
from textual.content import Content
from textual.widgets import Static

from zbench.telemetry.snapshot import GpmSnapshot, GpuSnapshot, NvLinkSnapshot
from zbench.tui.widgets.gpu_panel import GpuPanel, compact_line, detail_text, panel_height

from .conftest import make_app
from .helpers import settle
from .traces import eight_gpu, two_gpu

IDLE = GpuSnapshot(index=0, name="NVIDIA H200")
BUSY = GpuSnapshot(
    index=0,
    util_gpu=100.0,
    util_mem=100.0,
    mem_used_bytes=141 * 2**30,
    mem_total_bytes=141 * 2**30,
    temperature_c=100.0,
    power_w=1000.0,
    power_limit_w=1000.0,
    sm_clock_mhz=1980.0,
    mem_clock_mhz=3201.0,
    pcie_tx_bytes_s=63e9,
    pcie_rx_bytes_s=63e9,
    nvlink=NvLinkSnapshot(
        active_links=18, tx_bytes_s=450e9, rx_bytes_s=450e9, tx_pct=100.0, rx_pct=100.0
    ),
    gpm=GpmSnapshot(sm_activity=100.0, tensor_activity=100.0),
)
QUIET = dataclasses.replace(
    BUSY,
    util_gpu=0.0,
    power_w=90.0,
    nvlink=NvLinkSnapshot(active_links=18, tx_bytes_s=0.0, rx_bytes_s=0.0, tx_pct=0.0, rx_pct=0.0),
)


@pytest.mark.parametrize("width", range(58, 171, 3))
def test_a_panels_lines_fit_it_and_their_number_depends_on_its_width_only(width: int) -> None:
    room = width - 4  # border and padding
    busy, quiet = detail_text(BUSY, room).split("\n"), detail_text(QUIET, room).split("\n")
    # A busy link must not add a line that an idle one did not have: the layout would jump.
    assert len(busy) == len(quiet) == panel_height(width) - 3
    assert max(Content.from_markup(line).cell_length for line in busy) <= room
    # A GPU without NVLink or GPM readings takes no more lines than one with them.
    assert len(detail_text(IDLE, room).split("\n")) <= len(busy)
    # A field stays whole: its label and its figure on one line.
    assert all(not line.endswith(("SM act[/]", "tensor[/]", "TX", "RX")) for line in busy)


@pytest.mark.parametrize(
    ("size", "columns", "compact"),
    [
        ((120, 36), 2, False),  # was one-line rows below 120x40
        ((100, 30), 1, False),  # too narrow for two panels side by side: one above the other
        ((160, 50), 2, False),
        ((80, 24), 1, True),  # two full panels, the host and the jobs do not fit 24 rows
    ],
)
async def test_two_gpus_show_in_full_wherever_the_panels_fit(
    size: tuple[int, int], columns: int, compact: bool
) -> None:
    app = make_app(two_gpu())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.has_class("-compact") is compact
        panels = list(screen.query(GpuPanel))
        assert len({p.region.x for p in panels}) == columns
        if compact:
            assert {p.region.height for p in panels} == {1}
            return
        for panel in panels:
            assert panel.region.height == panel_height(panel.region.width)
            details = str(panel.query_one("#details", Static).render())
            # Every line in sight: NVLink and PCIe were the lines cut off at 120 columns.
            assert "NVLink x" in details and "PCIe" in details
            assert panel.query_one("#details").region.bottom < panel.region.bottom
        assert screen.query_one("#jobs").region.height >= 4
        assert screen.query_one("#host").region.bottom <= size[1]


async def test_the_layout_follows_the_terminal_as_it_is_resized() -> None:
    app = make_app(eight_gpu())
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        assert not app.screen.has_class("-compact")  # 8 GPUs in two columns of 4 fit 160x50
        await pilot.resize_terminal(160, 36)
        await settle(pilot)
        assert app.screen.has_class("-compact")
        await pilot.resize_terminal(160, 50)
        await settle(pilot)
        assert not app.screen.has_class("-compact")
        assert all(p.region.height > 1 for p in app.screen.query(GpuPanel))


async def test_slowdowns_and_the_sm_hint_show_on_the_panels_border() -> None:
    """They ended the NVLink line, and a busy link's figures pushed them out of the panel."""
    snaps = two_gpu()
    last = snaps[-1]
    slowed = dataclasses.replace(
        BUSY, index=0, name="NVIDIA H200", throttle_reasons=("sw_power_cap", "hw_slowdown")
    )
    hinted = dataclasses.replace(
        BUSY, index=1, name="NVIDIA H200", gpm=GpmSnapshot(sm_activity=9.0)
    )
    app = make_app([*snaps[:-1], dataclasses.replace(last, gpus=(slowed, hinted))])
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        zero, one = (
            app.screen.query_one("#gpu-0", GpuPanel),
            app.screen.query_one("#gpu-1", GpuPanel),
        )
        assert "sw_power_cap, hw_slowdown" in str(zero.border_subtitle)
        assert "util high, SM low" in str(one.border_subtitle)
        assert "sw_power_cap" not in str(zero.query_one("#details", Static).render())


def test_a_compact_row_flags_a_gpu_held_down_by_heat_but_not_one_at_its_power_cap() -> None:
    """The one-line rows (8 GPUs on 80x24) showed no slow-down at all: a GPU at 90 degrees with
    its clocks cut read like the others."""
    hot = dataclasses.replace(BUSY, throttle_reasons=("sw_power_cap", "hw_thermal"))
    capped = dataclasses.replace(BUSY, throttle_reasons=("sw_power_cap",))
    assert "hw_thermal" in compact_line(hot)
    assert "sw_power_cap" not in compact_line(hot) + compact_line(capped)
    # In sight on an 80-column row (its padding takes 2) with the widest figures: before NVLink.
    assert "hw_thermal" in Content.from_markup(compact_line(hot)).plain[:78]
