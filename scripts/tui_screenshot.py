"""Save an SVG screenshot of the live dashboard, headless (Textual's own export).

    python scripts/tui_screenshot.py OUT.svg [--wait 6] [--size 160x50] [--replay TRACE] [--db DB]
    python scripts/tui_screenshot.py launch.svg --size 80x24 --keys l   # the launch dialog

For documentation and bug reports: it samples the real hardware (or a trace) and reads the real jobs
database, exactly as ``zbench`` does, and writes what the screen shows after ``--wait`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from zbench.tui.app import ZbenchApp
from zbench.tui.feed import SamplerFeed
from zbench.tui.services import LocalServices


async def shoot(
    out: Path,
    wait: float,
    size: tuple[int, int],
    replay: Path | None,
    db: Path | None,
    keys: tuple[str, ...] = (),
) -> None:
    """Run the app headless at ``size``, wait ``wait`` seconds, press ``keys`` (Textual's names,
    half a second apart), and write its screen as SVG."""
    app = ZbenchApp(LocalServices(db), feed_factory=lambda: SamplerFeed(replay, 0.5), interval=0.5)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(wait)
        for key in keys:
            await pilot.press(key)
            await pilot.pause(0.5)
        out.write_text(app.export_screenshot(title="zbench"))


def main() -> int:
    """Parse the options and save the dashboard's screenshot."""
    p = argparse.ArgumentParser()
    p.add_argument("out", type=Path)
    p.add_argument("--wait", type=float, default=6.0)
    p.add_argument("--size", default="160x50")
    p.add_argument("--replay", type=Path, default=None)
    p.add_argument("--db", type=Path, default=None)
    p.add_argument("--keys", default="", help="keys to press first, comma-separated (l,tab)")
    a = p.parse_args()
    w, h = (int(x) for x in a.size.lower().split("x"))
    keys = tuple(k for k in a.keys.split(",") if k)
    asyncio.run(shoot(a.out, a.wait, (w, h), a.replay, a.db, keys))
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
