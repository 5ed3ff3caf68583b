"""The launch dialog's form, without its widgets: which options it lays out, and how the values
typed into it become a runner's or a demo's argv and a ``LaunchRequest``, checked by the parsers
of the option tables (``zbench.contract``) so the dialog accepts exactly what a runner accepts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from zbench import gpuids
from zbench.contract.config import RUN_OPTION, RUN_OPTIONS, RunConfig, parse_args
from zbench.contract.demo_options import DemoConfig
from zbench.contract.demo_options import parse_args as parse_demo_args
from zbench.contract.demos import Demo
from zbench.contract.demos import demos as registered_demos
from zbench.contract.options import Opt, UsageError

from .services import LaunchRequest

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
GPUS_LABEL = "GPU ids"  # the field's label, which its errors start with as the others' do


def parse_gpu_ids(text: str) -> tuple[int, ...] | None:
    """``"0,1"`` -> (0, 1); blank -> None (the first free GPUs). Raises ValueError in the words
    of ``zbench run --gpu-ids`` (``gpuids``), after the field's label."""
    return gpuids.parse_gpu_ids(text if text.strip() else None, option=GPUS_LABEL)


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
            argv.append(opt.flag if value == "on" else opt.no_flag)
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
            argv.append(opt.flag if value == "on" else opt.no_flag)
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
            f"{GPUS_LABEL}: a cpu run uses no GPU (clear the field or pick device cuda)"
            if gpu_ids
            else None
        )
    if gpus is None:
        return None
    try:
        gpuids.check_offered(gpu_ids, gpus, option=GPUS_LABEL)
    except gpuids.GpuRequestError as exc:
        return str(exc)
    return None if gpus else f"device: {gpuids.no_gpu('pick device cpu')}"


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


def placeholder(opt: Opt) -> str:
    """An empty number field says what blank means: the table's default."""
    return f"{opt.shown_default} (default)"
