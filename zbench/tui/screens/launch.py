"""The launch dialog: workloads and their options, or a suite, validated as you type.

Its fields are rows of the runner's option table (``zbench.contract.config.RUN_OPTIONS``: label,
choices, default, help as the tooltip), and validation runs the runner's own option parser
(``parse_args``, standard library only), so the dialog accepts exactly what a runner accepts.
Each demo's options are rows of the demo table (``zbench.contract.demos``), in a section of their
own shown while the demo is picked, checked by the demos' parser and the demo's own check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    Button,
    Collapsible,
    Footer,
    Input,
    Label,
    Select,
    SelectionList,
    Static,
)

from zbench.contract.config import (
    DATA_SOURCES,
    RUN_OPTION,
    RUN_OPTIONS,
    WORKLOADS,
    Opt,
    RunConfig,
    UsageError,
    parse_args,
)
from zbench.contract.demo_options import DemoConfig
from zbench.contract.demo_options import parse_args as parse_demo_args
from zbench.contract.demos import Demo
from zbench.contract.demos import demos as registered_demos

from ..format import escape
from ..services import LaunchRequest

DATASET = "dataset"
# The table's options the dialog offers, as the form lays them out (two a row); a widget's id is
# the option's flag without its dashes. Choices are Selects, numbers Inputs (blank: the default).
# The GPU indices ("gpu-ids", the count follows from them) and, after these, the data source or
# dataset path ("data", "path": --data-source or --data) are the dialog's own fields.
FORM = (
    "framework",
    "mode",
    "gpu-ids",
    "precision",
    "batch_size",
    "steps",
    "device",
    "preset",
    "warmup",
    "image_size",
    "repeat",
)
# Every other row of the table, under "more options" (collapsed): the GPU count follows from the
# indices, and "data" covers --data and --data-source.
MORE = tuple(o.name for o in RUN_OPTIONS if o.name not in (*FORM, "gpus", "data", "data_source"))
TABLE = tuple(RUN_OPTION[name] for name in (*FORM, *MORE) if name != "gpu-ids")
NUMBER_FLAGS = tuple(o.flag[2:] for o in TABLE if o.kind == "int")
SELECTS = (*(o.flag[2:] for o in TABLE if o.kind in ("choice", "bool")), "data")
SWITCH = ("on", "off")  # a bool option's Select: --x or --no-x (blank: the preset decides)
INPUTS = ("gpu-ids", *NUMBER_FLAGS, "path")


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


def demo_fields(demo: Demo) -> tuple[Opt, ...]:
    """The demo's options the dialog offers: its table's rows but the device (the form's)."""
    return tuple(o for o in demo.options if o.name != "device")


def demo_widget(demo: str, opt: Opt) -> str:
    """The id of a demo option's field: the demo's name, then the flag (``snake-board``)."""
    return f"{demo}-{opt.flag[2:]}"


def demo_argv(demo: Demo, form: dict[str, str]) -> list[str]:
    """The demo's argv from the form (a blank field leaves the table's default)."""
    argv = [demo.name, *(["--device", "cpu"] if form.get("device") == "cpu" else [])]
    for opt in demo_fields(demo):
        value = form.get(demo_widget(demo.name, opt), "")
        if value and opt.kind == "bool":
            argv.append(opt.flag if value == "on" else f"--no-{opt.flag[2:]}")
        elif value and opt.kind == "switch":
            argv.append(f"--{value}")
        elif value:  # one word: a value such as "-x" is the field's, not an option
            argv.append(f"{opt.flag}={value}")
    return argv


def _demo_config(demo: Demo, form: dict[str, str]) -> tuple[DemoConfig | None, str]:
    """(the demo's config, "") or (None, a one-line reason naming the demo and the field)."""
    try:
        config, _ = parse_demo_args(demo_argv(demo, form))
    except UsageError as exc:
        return None, f"{demo.name}: {exc.naming(lambda names: names[0].lstrip('-'))}"
    problem = config.check()  # the demo's own check: a model to animate, a video to read
    return (None, f"{demo.name}: {_in_form_words(demo, problem)}") if problem else (config, "")


def _in_form_words(demo: Demo, text: str) -> str:
    """A demo's message as the form shows its fields: a switch's flag (``--animate``) is its
    field and value there (``mode animate``). Other flags (``--drive``) match their fields'
    labels already."""
    for opt in demo.options:
        if opt.kind == "switch":
            for choice in opt.choices:
                text = re.sub(rf"--{re.escape(choice)}\b", f"{opt.name} {choice}", text)
    return text


def runner_argv(workload: str, form: dict[str, str], gpu_ids: tuple[int, ...] | None) -> list[str]:
    """The form as the runner's argv (a blank field leaves the table's default)."""
    argv = [workload]
    for opt in TABLE:
        value = form.get(opt.flag[2:])
        if value and opt.kind == "bool":
            argv.append(opt.flag if value == "on" else f"--no-{opt.flag[2:]}")
        elif value:  # one word: a value such as "-x" is the field's, not an option
            argv.append(f"{opt.flag}={value}")
    if form["data"] == DATASET:
        argv.append(f"--data={form['path']}")
    else:
        argv += ["--data-source", form["data"]]
    if gpu_ids:
        argv += ["--gpus", str(len(gpu_ids))]
    return argv


def field_label(names: list[str]) -> str:
    """The form's label of the runner option with these names ("batch size" for --batch-size)."""
    name = next((o.name for o in TABLE if o.flag in names), names[0].lstrip("-"))
    return name.replace("_", " ").replace("-", " ")


def gpu_problem(
    gpu_ids: tuple[int, ...] | None, device: str | None, gpus: Sequence[int] | None
) -> str | None:
    """Why these GPU indices cannot run on a machine that has ``gpus`` (None: not known)."""
    if device == "cpu":
        return (
            "GPUs: a cpu run uses no GPU (clear the field or pick device cuda)" if gpu_ids else None
        )
    if gpus is None:
        return None
    if not gpus:
        return "device: this machine has no GPU (pick device cpu)"
    missing = [i for i in gpu_ids or () if i not in gpus]
    if missing:
        offers = ",".join(map(str, gpus))
        return f"GPUs: no GPU {','.join(map(str, missing))} here (this machine has {offers})"
    return None


def build_request(
    suite: str, workloads: list[str], form: dict[str, str], gpus: Sequence[int] | None = None
) -> tuple[LaunchRequest | None, str]:
    """(the request, "") or (None, a one-line reason); ``gpus``: the machine's GPU indices, if
    known."""
    if suite:
        return LaunchRequest(suite=suite), ""
    if not workloads:
        return None, "pick at least one workload (space toggles)"
    try:
        gpu_ids = parse_gpu_ids(form.get("gpu-ids", ""))
    except ValueError as exc:
        return None, str(exc)
    problem = gpu_problem(gpu_ids, form.get("device"), gpus)
    if problem:
        return None, problem
    if form["data"] == DATASET and not form["path"].strip():
        return None, "data: give the dataset's path"  # a missing one: the config's check says
    from zbench.jobs.api import check_config  # after the first frame, as every jobs import

    configs: list[RunConfig | DemoConfig] = []
    demos = registered_demos()
    for name in [w for w in workloads if w in demos]:
        demo_config, problem = _demo_config(demos[name], form)
        if demo_config is None:
            return None, problem
        configs.append(demo_config)
    for workload in [w for w in workloads if w not in demos]:
        try:
            config, _ = parse_args(runner_argv(workload, form, gpu_ids))
        except UsageError as exc:
            return None, f"{workload}: {exc.naming(field_label)}"
        problem = check_config(config)  # what the runner would refuse at once, as submit does
        if problem:
            return None, problem if problem.startswith(workload) else f"{workload}: {problem}"
        configs.append(config)
    return LaunchRequest(configs=tuple(configs), gpu_ids=gpu_ids), ""


def _placeholder(opt: Opt) -> str:
    """An empty number field says what blank means: the table's default."""
    return f"{opt.shown_default} (default)"


def _option_field(
    widget: str, opt: Opt, choices: Sequence[str] | None, value: str | None
) -> Select[str] | Input:
    """An option's field, its help as the tooltip: an Input when there are no ``choices``
    (``value``: its placeholder), else a Select of them at ``value`` (None: blank, "default")."""
    if choices is None:
        return Input(placeholder=value or "", id=widget, compact=True, tooltip=opt.help)
    options = [(c, c) for c in choices]
    if value is None:
        return Select(options, prompt="default", id=widget, compact=True, tooltip=opt.help)
    return Select(
        options, value=value, allow_blank=False, id=widget, compact=True, tooltip=opt.help
    )


class LaunchScreen(ModalScreen[LaunchRequest | None]):
    """The launch dialog: a workload and its options, or a suite; dismissed with the request."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "launch", "Launch", id="launch.submit"),
        Binding("escape", "cancel", "Close", id="launch.cancel"),
    ]

    def __init__(
        self,
        suites: list[str],
        *,
        gpus: Sequence[int] | None = None,
        remembered: dict[str, str] | None = None,
    ) -> None:
        """``gpus``: the machine's GPU indices (None: not known), which GPU ids are checked
        against; none (a host without a GPU) makes cpu the device, so a launch works;
        ``remembered`` holds the form's values from the last launch."""
        super().__init__()
        self.suites = suites
        self.gpus = None if gpus is None else tuple(gpus)
        self.has_gpus = gpus is None or bool(gpus)
        self.remembered = {k: str(v) for k, v in (remembered or {}).items()}
        self.demos = registered_demos()
        fields = [(demo_widget(d.name, o), o) for d in self.demos.values() for o in demo_fields(d)]
        # A demo's Selects and the values each offers; its other options are Inputs.
        self.demo_choices = {
            w: SWITCH if o.kind == "bool" else o.choices
            for w, o in fields
            if o.kind in ("choice", "switch", "bool")
        }
        self.demo_selects = list(self.demo_choices)
        self.demo_inputs = [w for w, _ in fields if w not in self.demo_choices]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Launch: tab moves, space/enter picks, ctrl+s launches", id="title")
            with VerticalScroll(id="fields", can_focus=False):
                yield from self._fields()
            with Vertical(id="foot"):  # docked: in sight however far the fields are scrolled
                yield Static(id="error")
                with Horizontal(id="buttons"):
                    yield Button("Launch (ctrl+s)", variant="success", id="launch", compact=True)
                    yield Button("Close (esc)", id="close", compact=True)
        yield Footer()  # the dialog's keys: the screen's below do nothing while it is open

    def _fields(self) -> ComposeResult:
        """The form, more options and the demos' sections: what scrolls when the dialog is short."""
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
                *[(f"{d.name}  demo: {d.title}", d.name, False) for d in self.demos.values()],
                id="workloads",
                compact=True,
            )
            for name in FORM:
                yield from self._field(name)
            yield from self._select("data", (*DATA_SOURCES, DATASET), DATA_SOURCES[0])
            yield Label("data path")
            yield Input(placeholder="for data = dataset", id="path", compact=True)
        with Collapsible(title="more options", collapsed=True, id="more"), Grid(id="more-form"):
            for name in MORE:
                yield from self._field(name)
        for demo in self.demos.values():  # shown while the demo is picked
            with (
                Collapsible(title=f"{demo.name} options", id=f"demo-{demo.name}", classes="demo"),
                Grid(classes="demo-form"),
            ):
                for opt in demo_fields(demo):
                    yield from self._demo_field(demo, opt)
        yield Static(id="suite-info")

    def _field(self, name: str) -> ComposeResult:
        """One field of the form: a row of the option table, or the GPU indices."""
        if name == "gpu-ids":
            yield Label("GPU ids")
            yield Input(placeholder="0,1 (first free)", id="gpu-ids", compact=True)
            return
        opt = RUN_OPTION[name]
        yield Label(field_label([opt.flag]))
        widget = opt.flag[2:]
        if opt.kind in ("choice", "bool"):
            default = "cpu" if name == "device" and not self.has_gpus else opt.default
            yield _option_field(widget, opt, self._options(widget), default)
        else:
            yield _option_field(widget, opt, None, _placeholder(opt))

    @staticmethod
    def _demo_field(demo: Demo, opt: Opt) -> ComposeResult:
        """One of a demo's options: a Select for choices and on/off, else an Input (blank: the
        table's default, which its placeholder names)."""
        yield Label(opt.name.replace("_", " "))
        widget = demo_widget(demo.name, opt)
        if opt.kind in ("choice", "switch", "bool"):
            choices = SWITCH if opt.kind == "bool" else opt.choices
            value = ("on" if opt.default else "off") if opt.kind == "bool" else opt.default
            yield _option_field(widget, opt, choices, value)
        else:
            unset = "none" if opt.path else "automatic"  # no file; a number chosen by the demo
            shown = unset if opt.default is None else str(opt.default)
            yield _option_field(widget, opt, None, f"{shown} (default)")

    def _show_demo_options(self) -> None:
        picked = set(self.query_one("#workloads", SelectionList).selected)
        for name in self.demos:
            self.query_one(f"#demo-{name}", Collapsible).display = name in picked

    @staticmethod
    def _select(name: str, options: tuple[str, ...], value: str) -> ComposeResult:
        yield Label(name)
        yield Select(
            [(o, o) for o in options], value=value, allow_blank=False, id=name, compact=True
        )

    def on_mount(self) -> None:
        self._restore(self.remembered)
        self._show_demo_options()
        self.query_one("#workloads").focus()
        self.validate()

    def _restore(self, values: dict[str, str]) -> None:
        """Put remembered values back; one that no longer fits (a renamed option) is skipped."""
        for name in (*SELECTS, *self.demo_selects):
            value = values.get(name)
            if name == "device" and not self.has_gpus:
                continue  # no GPU here: cpu, whatever was used last time
            if value and value in self._choices(name):
                self.query_one(f"#{name}", Select).value = value
        for name in (*INPUTS, *self.demo_inputs):
            if name in values:
                self.query_one(f"#{name}", Input).value = values[name]
        workloads = values.get("workloads")
        if workloads:
            chosen = [w for w in workloads.split(",") if w in WORKLOADS or w in self.demos]
            if chosen:
                box = self.query_one("#workloads", SelectionList)
                box.deselect_all()
                for w in chosen:
                    box.select(w)

    def _choices(self, name: str) -> tuple[str, ...]:
        """What the Select ``name`` offers: a demo option's values, or the form's."""
        return self.demo_choices.get(name) or self._options(name)

    @staticmethod
    def _options(name: str) -> tuple[str, ...]:
        if name == "data":
            return (*DATA_SOURCES, DATASET)
        opt = RUN_OPTION[name.replace("-", "_")]
        return SWITCH if opt.kind == "bool" else opt.choices

    def form(self) -> dict[str, str]:
        values = {}
        for name in (*SELECTS, *self.demo_selects):
            value = self.query_one(f"#{name}", Select).value
            values[name] = "" if value is Select.NULL else str(value)
        for name in (*INPUTS, *self.demo_inputs):
            values[name] = self.query_one(f"#{name}", Input).value.strip()
        return values

    def remembered_values(self) -> dict[str, str]:
        """The form as the next launch should start from it."""
        workloads = ",".join(self.query_one("#workloads", SelectionList).selected)
        return {**self.form(), "workloads": workloads}

    def request(self) -> tuple[LaunchRequest | None, str]:
        suite = self.query_one("#suite", Select).value
        workloads = list(self.query_one("#workloads", SelectionList).selected)
        suite_name = "" if suite is Select.NULL else str(suite)
        return build_request(suite_name, workloads, self.form(), self.gpus)

    def validate(self) -> bool:
        request, error = self.request()
        self.query_one("#error", Static).update(f"[$error]{error}[/]" if error else "")
        self.query_one("#launch", Button).disabled = request is None
        return request is not None

    def on_input_changed(self) -> None:
        self.validate()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.validate()
        if event.select.id == "suite":
            # A suite runs its own jobs and options: the form's fields would be ignored.
            chosen = event.value is not Select.NULL
            for field in self.query("#dialog Input, #dialog Select, #dialog SelectionList"):
                if field.id != "suite":
                    field.disabled = chosen
            info = self.query_one("#suite-info", Static)
            info.display = event.value is not Select.NULL
            if info.display:
                info.update(f"[$text-muted]{escape(str(event.value))}: reading the suite…[/]")
                self._describe(str(event.value))

    @work(thread=True, exclusive=True, group="suite-info", exit_on_error=False)
    def _describe(self, name: str) -> None:
        try:
            text = self.app.services.suite_summary(name)  # type: ignore[attr-defined]
        except Exception as exc:
            text = f"{name}: {exc}"
        self.app.call_from_thread(self._described, name, text)

    def _described(self, name: str, text: str) -> None:
        if self.query_one("#suite", Select).value == name:
            self.query_one("#suite-info", Static).update(escape(text))

    def on_selection_list_selected_changed(self) -> None:
        self._show_demo_options()
        self.validate()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "launch":
            self.action_launch()
        else:
            self.dismiss(None)

    def action_launch(self) -> None:
        request, _ = self.request()
        if self.validate() and request is not None:
            remember = getattr(self.app, "remember", None)
            if remember is not None:
                remember(launch=self.remembered_values())
            self.dismiss(request)

    def action_cancel(self) -> None:
        self.dismiss(None)
