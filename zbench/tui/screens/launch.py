"""The launch dialog: workloads and their options, or a suite, validated as you type.

Validation runs the runner's own option parser (``zbench.contract.config.parse_args``, standard
library only), so the dialog accepts exactly what a runner accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, SelectionList, Static

from zbench.contract.config import (
    DATA_SOURCES,
    FRAMEWORKS,
    MODES,
    PRECISIONS,
    WORKLOADS,
    RunConfig,
    UsageError,
    parse_args,
)
from zbench.demos.registry import demos as registered_demos
from zbench.demos.runner import DemoConfig
from zbench.demos.runner import parse_args as parse_demo_args

from ..services import LaunchRequest

DATASET = "dataset"


def parse_gpu_ids(text: str) -> tuple[int, ...] | None:
    """``"0,1"`` -> (0, 1); blank -> None (the first free GPUs). Raises ValueError."""
    text = text.strip()
    if not text:
        return None
    try:
        ids = tuple(int(part) for part in text.replace(" ", "").split(","))
    except ValueError:
        raise ValueError(f"GPUs: expected indices like 0,1, got {text!r}") from None
    if any(i < 0 for i in ids) or len(set(ids)) != len(ids):
        raise ValueError(f"GPUs: indices must be distinct and 0 or more, got {text!r}")
    return ids


def runner_argv(workload: str, form: dict[str, str], gpu_ids: tuple[int, ...] | None) -> list[str]:
    argv = [workload, "--framework", form["framework"], "--mode", form["mode"]]
    for flag in ("precision", "batch-size", "steps"):
        if form.get(flag):
            argv += [f"--{flag}", form[flag]]
    if form["data"] == DATASET:
        argv += ["--data", form["path"]]
    else:
        argv += ["--data-source", form["data"]]
    if gpu_ids:
        argv += ["--gpus", str(len(gpu_ids))]
    return argv


def build_request(
    suite: str, workloads: list[str], form: dict[str, str]
) -> tuple[LaunchRequest | None, str]:
    """(the request, "") or (None, a one-line reason)."""
    if suite:
        return LaunchRequest(suite=suite), ""
    if not workloads:
        return None, "pick at least one workload (space toggles)"
    try:
        gpu_ids = parse_gpu_ids(form["gpus"])
    except ValueError as exc:
        return None, str(exc)
    if form["data"] == DATASET:
        if not form["path"].strip():
            return None, "data: give the dataset's path"
        if not Path(form["path"]).expanduser().exists():
            return None, f"data: no such path: {form['path']}"
    configs: list[RunConfig | DemoConfig] = []
    demos = registered_demos()
    for demo in [w for w in workloads if w in demos]:  # demos take their defaults
        device = ["--device", "cpu"] if form.get("device") == "cpu" else []
        configs.append(parse_demo_args([demo, *device])[0])
    for workload in [w for w in workloads if w not in demos]:
        try:
            config, _ = parse_args(runner_argv(workload, form, gpu_ids))
        except UsageError as exc:
            return None, f"{workload}: {exc}"
        configs.append(config)
    return LaunchRequest(configs=tuple(configs), gpu_ids=gpu_ids), ""


class LaunchScreen(ModalScreen[LaunchRequest | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "launch", "Launch", id="launch.submit"),
        Binding("escape", "cancel", "Close", id="launch.cancel"),
    ]

    def __init__(self, suites: list[str]) -> None:
        super().__init__()
        self.suites = suites

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Launch: tab moves, space/enter picks, ctrl+s launches", id="title")
            with Grid(id="form"):
                yield Label("suite")
                yield Select(
                    [(s, s) for s in self.suites],
                    prompt="none: the runs below",
                    id="suite",
                    compact=True,
                )
                yield Label("workloads")
                yield SelectionList[str](
                    *[
                        (f"{w.name}  {w.title}", w.name, w.name == "resnet50")
                        for w in WORKLOADS.values()
                    ],
                    *[
                        (f"{d.name}  demo: {d.title}", d.name, False)
                        for d in registered_demos().values()
                    ],
                    id="workloads",
                    compact=True,
                )
                yield from self._select("framework", FRAMEWORKS, "torch")
                yield from self._select("mode", MODES, "train")
                yield Label("GPUs")
                yield Input(placeholder="e.g. 0,1 (blank: first free)", id="gpus", compact=True)
                yield Label("precision")
                yield Select(
                    [(p, p) for p in PRECISIONS], prompt="default", id="precision", compact=True
                )
                yield Label("batch size")
                yield Input(placeholder="per GPU (blank: default)", id="batch-size", compact=True)
                yield Label("steps")
                yield Input(placeholder="measured steps (blank: default)", id="steps", compact=True)
                yield from self._select("data", (*DATA_SOURCES, DATASET), DATA_SOURCES[0])
                yield Label("dataset path")
                yield Input(placeholder="for data = dataset", id="path", compact=True)
            yield Static(id="error")
            with Horizontal(id="buttons"):
                yield Button("Launch (ctrl+s)", variant="success", id="launch", compact=True)
                yield Button("Close (esc)", id="close", compact=True)

    @staticmethod
    def _select(name: str, options: tuple[str, ...], value: str) -> ComposeResult:
        yield Label(name)
        yield Select(
            [(o, o) for o in options], value=value, allow_blank=False, id=name, compact=True
        )

    def on_mount(self) -> None:
        self.query_one("#workloads").focus()
        self.validate()

    def form(self) -> dict[str, str]:
        values = {}
        for name in ("framework", "mode", "precision", "data"):
            value = self.query_one(f"#{name}", Select).value
            values[name] = "" if value is Select.NULL else str(value)
        for name in ("gpus", "batch-size", "steps", "path"):
            values[name] = self.query_one(f"#{name}", Input).value.strip()
        return values

    def request(self) -> tuple[LaunchRequest | None, str]:
        suite = self.query_one("#suite", Select).value
        workloads = list(self.query_one("#workloads", SelectionList).selected)
        return build_request("" if suite is Select.NULL else str(suite), workloads, self.form())

    def validate(self) -> bool:
        request, error = self.request()
        self.query_one("#error", Static).update(f"[$error]{error}[/]" if error else "")
        self.query_one("#launch", Button).disabled = request is None
        return request is not None

    def on_input_changed(self) -> None:
        self.validate()

    def on_select_changed(self) -> None:
        self.validate()

    def on_selection_list_selected_changed(self) -> None:
        self.validate()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "launch":
            self.action_launch()
        else:
            self.dismiss(None)

    def action_launch(self) -> None:
        request, _ = self.request()
        if self.validate() and request is not None:
            self.dismiss(request)

    def action_cancel(self) -> None:
        self.dismiss(None)
