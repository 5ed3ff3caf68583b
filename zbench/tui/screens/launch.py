"""The launch dialog: workloads and their options, or a suite, validated as you type.

Its fields are rows of the runner's option table (``zbench.contract.config.RUN_OPTIONS``: label,
choices, default, help as the tooltip), and validation runs the runner's own option parser
(``parse_args``, standard library only), so the dialog accepts exactly what a runner accepts. What
the form holds and how it becomes a request is ``zbench.tui.launch_form``; this is its widgets.
Each demo's options are rows of the demo table (``zbench.contract.demos``), in a section of their
own shown while the demo is picked, checked by the demos' parser and the demo's own check.
"""

from __future__ import annotations

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

from zbench.contract.config import DATA_SOURCES, RUN_OPTION, WORKLOADS
from zbench.contract.demos import Demo
from zbench.contract.demos import demos as registered_demos
from zbench.contract.options import Opt

from ..format import escape
from ..launch_form import (
    DATASET,
    FORM,
    GPUS_LABEL,
    INPUTS,
    MORE,
    SELECTS,
    SWITCH,
    build_request,
    demo_fields,
    demo_widget,
    field_label,
    placeholder,
)
from ..services import LaunchRequest


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
            yield Label(GPUS_LABEL)
            yield Input(placeholder="0,1 (first free)", id="gpu-ids", compact=True)
            return
        opt = RUN_OPTION[name]
        yield Label(field_label([opt.flag]))
        widget = opt.flag[2:]
        if opt.kind in ("choice", "bool"):
            default = "cpu" if name == "device" and not self.has_gpus else opt.default
            yield _option_field(widget, opt, self._options(widget), default)
        else:
            yield _option_field(widget, opt, None, placeholder(opt))

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
