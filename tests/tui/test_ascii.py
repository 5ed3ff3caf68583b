"""A non-UTF-8 locale gets ASCII bars, sparklines and progress, never missing characters."""

from __future__ import annotations

import pytest

from zbench.glyphs import encoding_is_utf8, glyphs
from zbench.tui.format import bar, block
from zbench.tui.widgets.history import spark
from zbench.tui.widgets.jobs_table import progress_text

from .conftest import make_app
from .fakes import FakeJob
from .helpers import settle


@pytest.mark.parametrize(
    ("env", "utf8"),
    [
        ({"LANG": "en_US.UTF-8"}, True),
        ({"LANG": "C"}, False),
        ({"LANG": "en_US.ISO-8859-1"}, False),
        ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, False),  # LC_ALL wins
        ({"LC_CTYPE": "de_DE.utf8"}, True),
    ],
)
def test_the_locale_decides(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], utf8: bool
) -> None:
    for var in ("ZBENCH_ASCII", "LC_ALL", "LC_CTYPE", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert encoding_is_utf8() is utf8


def test_ascii_bars_sparklines_and_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_ASCII", "1")
    assert glyphs().ascii
    for text in (bar(50, 8), block(70), spark([10, 50, 99], 5), bar(None, 4)):
        assert text.replace("[/]", "").isascii(), text
    assert "####" in bar(50, 8)
    assert progress_text(FakeJob(1, "resnet50", step=50, total=100)) == "###--- 50/100"


async def test_the_dashboard_draws_in_ascii(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZBENCH_ASCII", "1")
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        from zbench.tui.widgets.gpu_panel import GpuPanel

        panel = app.screen.query(GpuPanel).first()
        text = "".join(str(w.render()) for w in panel.query("*") if hasattr(w, "render"))
        assert "█" not in text and "░" not in text and "#" in text
