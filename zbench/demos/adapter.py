"""Every demo of the table as one harness adapter: ``python -m zbench.demos <demo> ... --events X``.

The demo table (``zbench.contract.demos``) names the entry module (``run(options, emit) ->
figures``), the options, the frame rate and which figures make the result's summary and series;
nothing here is demo-specific.
"""

from __future__ import annotations

import importlib
import os
import platform
import signal
import sys
from types import FrameType
from typing import Any

from zbench.contract.demo_options import DemoConfig, parse_args
from zbench.contract.demos import Demo, check, figure
from zbench.contract.options import UsageError
from zbench.contract.protocol import EventWriter
from zbench.runners.harness import Unavailable
from zbench.runners.harness_demo import DemoAdapter, Series, run_demo


class EntryAdapter(DemoAdapter):
    """A demo table entry under the harness."""

    def __init__(self, config: DemoConfig) -> None:
        self.demo_config = config
        self.entry: Demo = config.entry
        self.name, self.title, self.frame_hz, self.rate = (
            self.entry.name,
            self.entry.title,
            self.entry.frame_hz,
            self.entry.rate,
        )

    def check(self) -> str | None:
        return check(self.entry, self.demo_config.as_options())

    def config(self) -> dict[str, Any]:
        return self.demo_config.as_dict()

    def environment(self) -> dict[str, Any]:
        return {
            "python": platform.python_version(),
            "hostname": platform.node(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }

    def run(self) -> dict[str, Any]:
        try:
            module = importlib.import_module(self.entry.module)
        except ImportError as exc:
            raise Unavailable(
                f"the {self.name} demo needs {exc.name}: pip install 'zbench[torch]'"
            ) from exc
        try:
            figures = module.run(self.demo_config.as_options(), self.events.emit)
        except ImportError as exc:  # a dependency imported late (OpenCV for video drives)
            raise Unavailable(f"the {self.name} demo needs {exc.name}") from exc
        return dict(figures or self.events.reported or {})

    def summary(self, figures: dict[str, Any]) -> list[tuple[str, Any]]:
        return [(label, figure(figures, path)) for label, path in self.entry.summary]

    def series(self, figures: dict[str, Any], progress: list[dict[str, float]]) -> list[Series]:
        out: list[Series] = []
        for s in self.entry.series:
            rows = progress if s.source == "progress" else figures.get(s.source) or []
            points = [
                (r[s.x], r[s.y])
                for r in rows
                if isinstance(r, dict)
                and isinstance(r.get(s.x), int | float)
                and isinstance(r.get(s.y), int | float)
            ]
            out.append((s.name, s.x, s.unit, points))
        return out


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the harness reports an "interrupted" error


def main(argv: list[str] | None = None) -> int:
    """Run one demo from the command line, writing its events; 2 on bad options or events target."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        config, target = parse_args(argv, add_help=True)
    except UsageError as exc:
        print(f"zbench.demos: {exc}", file=sys.stderr)
        return 2
    try:
        writer = EventWriter(target if target is not None else "fd:2")
    except OSError as exc:
        print(f"zbench.demos: cannot open events target {target}: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _on_sigterm)
    with writer:
        return run_demo(EntryAdapter(config), writer)
