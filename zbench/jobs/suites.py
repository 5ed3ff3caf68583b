"""Suites: lists of jobs in TOML, built in (``review``, ``quick``, ``precision``) or the user's own.

Format (the built-in files in ``suites/`` are examples)::

    name = "mine"
    description = "..."
    [defaults]            # applied to every job below
    precision = "fp32"
    timeout_s = 3600
    [[job]]               # a list as a value expands into one job per element (a matrix)
    workload = ["resnet50", "vgg16"]
    framework = ["torch", "tf"]
    mode = "train"
    gpus = 1              # or "all": every GPU (a scaling run, skipped with fewer than 2)

Job keys are the runner's options (validated by the runner's own parser) plus the suite's own
(``jobs.suite_keys``: ``timeout_s``, ``gpu_ids``, ``share_gpus``, ``extra``; ``device = "auto"``,
cuda when a GPU is present, else cpu). A job whose workload is a demo's name (``workload =
"snake"``) takes that demo's options instead (``zbench demo snake -h``, validated by the demos'
parser), with ``timeout_s`` and ``device = "auto"``; a ``[defaults]`` key it does not take is left
out of it. What cannot run here (a framework not installed, too few GPUs) is listed in
``Suite.skipped`` with the reason. ``zbench suite -h`` lists every key from the same tables.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zbench.contract import demos as demo_table
from zbench.contract.config import RUN_OPTION, RUN_OPTIONS, RunConfig, parse_args
from zbench.contract.demo_options import DemoConfig
from zbench.contract.demo_options import parse_args as parse_demo_args
from zbench.contract.demos import Demo
from zbench.contract.kinds import DEMO
from zbench.contract.options import UsageError
from zbench.gpuids import GpuRequestError, check_offered, gpu_ids_from
from zbench.jobs.api import JobSpec, check_config
from zbench.jobs.gpus import offered_gpus
from zbench.jobs.suite_keys import ALL_GPUS, AUTO_DEVICE, TOP_KEYS
from zbench.jobs.suite_keys import DEMO_JOB_KEYS as DEMO_OWN_KEYS
from zbench.jobs.suite_keys import JOB_KEYS as JOB_OWN_KEYS
from zbench.jobs.suite_values import SuiteError, flag, option_key, toml_text
from zbench.textfit import counted

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SUITES_DIR = Path(__file__).with_name("suites")
SUITES: dict[str, Path] = {p.stem: p for p in sorted(SUITES_DIR.glob("*.toml"))}  # built in
# A benchmark's job keys: the runner's options and the suite's own (``jobs.suite_keys``).
JOB_KEYS = {o.name for o in RUN_OPTIONS} | {k.name for k in JOB_OWN_KEYS}
# A demo job's keys beside its demo's options.
DEMO_JOB_KEYS = {k.name for k in DEMO_OWN_KEYS}
FRAMEWORK_MODULES = {"torch": "torch", "tf": "tensorflow"}
NOT_EXPANDED = {"extra", "gpu_ids"}  # list-valued keys that are one value, not a matrix
# More is a typo (a list too many in a matrix: it would run for weeks, and a million took minutes of
# memory to refuse), not a suite; the count is the file's, skipped jobs too, so a suite is valid on
# every machine or on none.
MAX_JOBS = 1_000


@dataclass(frozen=True)
class Suite:
    """A parsed suite: the jobs to run, and those skipped on this machine with the reason."""

    name: str
    description: str
    specs: tuple[JobSpec, ...]
    skipped: tuple[tuple[JobSpec, str], ...] = field(default=())

    def skipped_lines(self) -> list[str]:
        """Each skipped job and why, as `zbench suite` and the TUI say it."""
        return [f"{spec_label(spec)}: {why}" for spec, why in self.skipped]


def installed_frameworks() -> set[str]:
    """Frameworks whose package is installed (found without importing it)."""
    return {k for k, mod in FRAMEWORK_MODULES.items() if importlib.util.find_spec(mod) is not None}


def user_suites_dir() -> Path:
    """The user's own suites: ``suites/`` beside the config file (``~/.config/zbench/suites``;
    ``$ZBENCH_HOME/suites`` with ``$ZBENCH_HOME``). Each ``NAME.toml`` there is ``zbench suite
    NAME`` and is listed in the launch dialog."""
    from zbench.settings import config_path

    return config_path().parent / "suites"


def user_suites() -> dict[str, Path]:
    """The user's suites by name; a built-in's name stays the built-in's (the file is still run by
    its path). A folder that cannot be read lists none."""
    try:
        found = sorted(p for p in user_suites_dir().glob("*.toml") if p.is_file())
    except OSError:
        return {}
    return {p.stem: p for p in found if p.stem not in SUITES}


def shadowed(name: str) -> Path | None:
    """The user's suite file that a built-in suite of its name hides (run by its path), if any."""
    path = user_suites_dir() / f"{name}.toml"
    try:
        return path if name in SUITES and path.is_file() else None
    except OSError:
        return None


def suites() -> dict[str, Path]:
    """Every suite that runs by name: the built-in ones, then the user's."""
    return {**SUITES, **user_suites()}


def _known() -> str:
    """The suites a name may be, as an error lists them."""
    mine = user_suites()
    where = f"; yours in {user_suites_dir()}: {', '.join(mine)}" if mine else ""
    return f"built in: {', '.join(SUITES)}{where}; or a .toml file"


def spec_label(spec: JobSpec) -> str:
    """A suite's job in a few words, as `zbench suite` and the TUI list what they skip."""
    c = spec.config
    where = "cpu" if c.device == "cpu" else counted(c.gpus, "GPU")
    if c.kind == DEMO:  # a demo has no precision to name
        return f"{c.workload} demo {c.mode} on {where}"
    return f"{c.workload} {c.framework} {c.mode} {c.precision or 'default'} on {where}"


@dataclass(frozen=True)
class Here:
    """What this machine offers the suite's jobs: GPUs (and, with none, why), frameworks."""

    n_gpus: int
    have: set[str]
    why: str = ""  # gpus.offered_gpus's words for none: no driver, CUDA_VISIBLE_DEVICES=-1...

    def none_found(self) -> str:
        return f"needs a GPU; none found ({self.why})" if self.why else "needs a GPU; none found"


def load_suite(
    name_or_path: str | Path,
    *,
    gpu_count: int | None = None,
    frameworks: Iterable[str] | None = None,
) -> Suite:
    """A suite by name (:func:`suites`), or a suite file. ``gpu_count`` and ``frameworks``
    default to what this machine has."""
    if not str(name_or_path).strip():  # Path("") is this folder: ". is a folder" said it
        raise SuiteError(f"no suite named {str(name_or_path)!r} ({_known()})")
    path = suites().get(str(name_or_path)) or Path(name_or_path)
    try:  # stat raises, not answers False, under a folder that cannot be looked in
        exists, is_file = path.exists(), path.is_file()
    except OSError as exc:
        raise SuiteError(f"{path}: {exc.strerror}") from None
    if exists and not is_file:  # a FIFO would block the read
        what = "a folder" if path.is_dir() else "not a regular file"
        raise SuiteError(f"{path} is {what}; a suite file is a .toml file")
    if not exists and (path.suffix == ".toml" or len(path.parts) > 1):  # meant as a file
        raise SuiteError(f"{path}: no such file")
    if not exists:
        raise SuiteError(f"no suite {str(name_or_path)!r} ({_known()})")
    try:
        raw = path.read_bytes()
        # utf-8-sig: a byte-order mark (written by some Windows editors) is not part of the TOML.
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SuiteError(
            f"{path}: not UTF-8 text (byte {raw[exc.start]:#04x} on line {line}); "
            "a suite file is TOML, which is UTF-8"
        ) from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SuiteError(f"{path}: {exc}") from None
    ids, why = offered_gpus() if gpu_count is None else (range(gpu_count), "")
    have = installed_frameworks() if frameworks is None else set(frameworks)
    return parse_suite(data, str(path), Here(len(ids), have, why))


def _unknown(what: str, key: str, known: Iterable[str]) -> str:
    """``unknown key 'batch'``, with the known key closest to it, if one is close (a plural, a
    typo), and where every key is listed."""
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown {what} {key!r} ({hint}zbench suite -h lists every key)"


def parse_suite(data: dict[str, Any], where: str, here: Here) -> Suite:
    """A Suite from its TOML table: defaults merged, keys checked, what cannot run here skipped."""
    unknown_top = set(data) - TOP_KEYS
    if unknown_top:
        raise SuiteError(f"{where}: {_unknown('top-level key', sorted(unknown_top)[0], TOP_KEYS)}")
    defaults = data.get("defaults", {})
    jobs = data.get("job", [])
    if not isinstance(defaults, dict):
        raise SuiteError(f"{where}: [defaults] must be a table, got {toml_text(defaults)}")
    demos = demo_table.demos()  # read once: it looks in each demo's module file
    job_keys = JOB_KEYS | _demo_keys(demos.values())
    bad = sorted(set(defaults) - job_keys)
    if bad:
        raise SuiteError(f"{where}: [defaults]: {_unknown('key', bad[0], job_keys)}")
    if isinstance(jobs, dict):
        raise SuiteError(f"{where}: job must be [[job]] tables (an array of tables), not one [job]")
    if not isinstance(jobs, list):
        raise SuiteError(
            f"{where}: job must be [[job]] tables (an array of tables), got {toml_text(jobs)}"
        )
    if not jobs:
        raise SuiteError(f"{where}: no [[job]] entries")
    name = _text(data, "name", where)
    if name is not None and not (name.strip() and name.isprintable()):
        raise SuiteError(f"{where}: name must be one line of printable text, got {name!r}")
    specs: list[JobSpec] = []
    skipped: list[tuple[JobSpec, str]] = []
    total = 0
    for n, job in enumerate(jobs, 1):
        if not isinstance(job, dict):
            raise SuiteError(f"{where}: job {n}: must be a table")
        merged = {**defaults, **job}
        bad = sorted(set(merged) - job_keys)
        if bad:
            raise SuiteError(f"{where}: job {n}: {_unknown('key', bad[0], job_keys)}")
        if "workload" not in merged:
            raise SuiteError(f"{where}: job {n}: no workload")
        for one in _by_kind(merged, set(job), f"{where}: job {n}", demos):
            total += math.prod(
                len(v) for k, v in one.items() if isinstance(v, list) and k not in NOT_EXPANDED
            )
            if total > MAX_JOBS:
                raise SuiteError(
                    f"{where}: job {n}: the suite would run {total:,} or more jobs; at most "
                    f"{MAX_JOBS:,} (each list in a job multiplies its jobs)"
                )
            for combo in _expand(one, f"{where}: job {n}"):
                spec, reason = _spec(combo, f"{where}: job {n}", here, demos)
                if reason is None:
                    specs.append(spec)
                else:
                    skipped.append((spec, reason))
    description = _text(data, "description", where) or ""
    return Suite(name or Path(where).stem, description, tuple(specs), tuple(skipped))


def _text(data: dict[str, Any], key: str, where: str) -> str | None:
    """A top-level string (``name``, ``description``), None when the file has none."""
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise SuiteError(f"{where}: {key} must be a string, got {toml_text(value)}")
    return value


def _demo_keys(entries: Iterable[Demo]) -> set[str]:
    """The keys a job of these demos takes: their options and ``DEMO_JOB_KEYS``."""
    return DEMO_JOB_KEYS | {o.name for entry in entries for o in entry.options}


def _by_kind(
    merged: dict[str, Any], own: set[str], where: str, demos: Mapping[str, Demo]
) -> list[dict[str, Any]]:
    """A job's keys for each kind of workload it names: the benchmarks' together, and one per
    demo (``workload = ["resnet50", "snake"]`` is two). A key the job itself gives that its
    workload does not take is refused; a ``[defaults]`` key is left out where it does not apply."""
    names = merged["workload"] if isinstance(merged["workload"], list) else [merged["workload"]]
    if not names:
        raise SuiteError(f"{where}: workload is an empty list (it would expand to no job)")
    groups: dict[str | None, list[Any]] = {}
    for name in names:
        groups.setdefault(name if isinstance(name, str) and name in demos else None, []).append(
            name
        )
    out = []
    for demo, group in groups.items():
        takes = _demo_keys([demos[demo]]) if demo else JOB_KEYS
        wrong = sorted(own - takes)
        if wrong:
            what = f"the demo {demo!r}" if demo else "a benchmark"
            hint = f"zbench demo {demo} -h" if demo else "zbench run -h"
            raise SuiteError(f"{where}: {what} takes no key {wrong[0]!r} (see {hint})")
        one = {k: v for k, v in merged.items() if k in takes}
        one["workload"] = group if len(group) > 1 else group[0]
        out.append(one)
    return out


def _expand(job: dict[str, Any], where: str = "suite") -> list[dict[str, Any]]:
    keys = list(job)
    empty = [k for k in keys if job[k] == [] and k not in NOT_EXPANDED]
    if empty:
        raise SuiteError(f"{where}: {empty[0]} is an empty list (it would expand to no job)")
    values = [
        job[k] if isinstance(job[k], list) and k not in NOT_EXPANDED else [job[k]] for k in keys
    ]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def _spec(
    job: dict[str, Any], where: str, here: Here, demos: Mapping[str, Demo]
) -> tuple[JobSpec, str | None]:
    options = dict(job)
    timeout = _timeout(options.pop("timeout_s", None), where)
    demo = demos.get(options["workload"]) if isinstance(options["workload"], str) else None
    if demo is not None:
        return _demo_spec(demo, options, timeout, where, here)
    gpu_ids = options.pop("gpu_ids", None)
    share = options.pop("share_gpus", False)
    if gpu_ids is not None:
        try:
            gpu_ids = list(gpu_ids_from(gpu_ids))
        except GpuRequestError as exc:
            raise SuiteError(f"{where}: {exc}") from None
    if not isinstance(share, bool):
        raise SuiteError(f"{where}: share_gpus must be true or false")
    if options.get("device") == AUTO_DEVICE:
        options["device"] = "cuda" if here.n_gpus else "cpu"
    scaling = options.get("gpus") == ALL_GPUS
    if scaling:  # every GPU, and at least the 2 a scaling run needs (fewer: it is skipped)
        options["gpus"] = 1 if options.get("device") == "cpu" else max(here.n_gpus, 2)
    config = _config(options, where)
    if gpu_ids is not None and config.device == "cpu":
        raise SuiteError(f'{where}: gpu_ids needs device = "cuda" (this job runs on the CPU)')
    problem = check_config(config)
    if problem:
        raise SuiteError(f"{where}: {problem}")
    spec = JobSpec(config, tuple(gpu_ids) if gpu_ids is not None else None, timeout, share)
    return spec, _skip_reason(config, scaling, gpu_ids, here)


def _timeout(value: Any, where: str) -> float | None:
    if value is not None and not (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    ):
        raise SuiteError(  # as `zbench run --timeout` says it
            f"{where}: timeout_s must be a finite number of seconds above 0, got {toml_text(value)}"
        )
    return float(value) if value else None


def _demo_spec(
    demo: Demo,
    options: dict[str, Any],
    timeout: float | None,
    where: str,
    here: Here,
) -> tuple[JobSpec, str | None]:
    """A demo job, its options checked by the demos' own parser (as `zbench demo NAME` does)."""
    name = options.pop("workload")
    if options.get("device") == AUTO_DEVICE:
        options["device"] = "cuda" if here.n_gpus else "cpu"
    by_name = {o.name: o for o in demo.options}
    argv = [name]
    for key, value in options.items():
        opt = by_name[key]
        if opt.kind == "switch":  # motion's mode = "animate": the flag --animate
            if value not in opt.choices:
                choices = ", ".join(repr(c) for c in opt.choices)
                raise SuiteError(f"{where}: {key} must be one of {choices}, got {toml_text(value)}")
            argv.append(f"--{value}")
            continue
        argv.append(flag(opt, key, value, where))
    try:
        config, _ = parse_demo_args(argv)
    except UsageError as exc:
        raise SuiteError(
            f"{where}: {exc.naming(lambda names: option_key(names, options))}"
        ) from None
    problem = config.check()
    if problem:
        raise SuiteError(f"{where}: {problem}")
    return JobSpec(config, None, timeout), _demo_skip_reason(config, here)


def _demo_skip_reason(config: DemoConfig, here: Here) -> str | None:
    if "torch" not in here.have:  # every demo is PyTorch
        return _not_installed("torch")
    if config.device != "cpu" and not here.n_gpus:
        return here.none_found()
    return None


def _config(options: dict[str, Any], where: str) -> RunConfig:
    """Build the options through the runner's own parser, so a suite cannot say what `zbench run`
    would reject."""
    if not isinstance(options["workload"], str):
        raise SuiteError(
            f"{where}: workload must be a workload's name, got {toml_text(options['workload'])}"
        )
    argv = [options["workload"]]
    extra = options.pop("extra", [])
    for key, value in options.items():
        if key != "workload":
            also = f" or {ALL_GPUS!r}" if key == "gpus" else ""
            argv.append(flag(RUN_OPTION.get(key), key, value, where, also))
    if extra:
        if not isinstance(extra, list) or not all(isinstance(e, str) for e in extra):
            raise SuiteError(f"{where}: extra must be a list of strings")
        argv += ["--", *extra]
    try:
        config, _ = parse_args(argv)
    except UsageError as exc:
        raise SuiteError(
            f"{where}: {exc.naming(lambda names: option_key(names, options))}"
        ) from None
    return config


def _not_installed(framework: str) -> str:
    pretty = {"torch": "PyTorch", "tf": "TensorFlow"}.get(framework, framework)
    return f"{pretty} is not installed"


def _skip_reason(
    config: RunConfig, scaling: bool, gpu_ids: list[int] | None, here: Here
) -> str | None:
    if config.framework not in here.have:
        return _not_installed(config.framework)
    if config.device == "cpu":
        return None
    if not here.n_gpus:
        return here.none_found()
    if scaling and here.n_gpus < 2:
        return f"a scaling run needs 2 or more GPUs; {here.n_gpus} found"
    need = len(gpu_ids) if gpu_ids else config.gpus
    if need > here.n_gpus:
        return f"needs {counted(need, 'GPU')}; {here.n_gpus} found"
    try:  # gpu_ids = [7] on a machine of 2: skipped in run's words, not queued to wait for ever
        check_offered(gpu_ids, range(here.n_gpus), option="gpu_ids")
    except GpuRequestError as exc:
        return str(exc)
    return None
