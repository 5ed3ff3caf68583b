"""The keys a suite file takes beside its jobs' options, as rows of the options' own table
(``contract.options.Opt``): the one list the suite loader (``jobs.suites``) checks a file against
and ``zbench suite -h`` prints, so neither can name a key the other does not know.

A ``[[job]]`` table (and ``[defaults]``) takes :data:`JOB_KEYS` and the runner's options
(``contract.config.RUN_OPTIONS``); a demo's job (``workload = "snake"``) takes
:data:`DEMO_JOB_KEYS` and that demo's options (``contract.demos``). :data:`ALSO` are the values a
suite file may give beside those an option's parser takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from zbench.contract.options import Opt

# The top of a suite file.
FILE_KEYS: tuple[Opt, ...] = (
    Opt("name", "str", None, "The suite's name", default_text="the file's name"),
    Opt("description", "str", None, "What it runs, in a line (the launch dialog shows it)"),
    Opt(
        "defaults",
        "table",
        None,
        "[defaults]: keys every [[job]] takes unless it gives its own (a key a demo's job does "
        "not take is left out of it)",
    ),
    Opt(
        "job",
        "tables",
        None,
        "[[job]]: one job each; a list as a key's value makes one job per element (a matrix)",
    ),
)

_TIMEOUT = Opt(
    "timeout_s", "float", None, "Cancel the job after this many seconds (--timeout)", low=0
)
_WORKLOAD = Opt(
    "workload",
    "str",
    None,
    "A benchmark (zbench run's workloads) or a demo's name (its own keys: below)",
)
# A benchmark's [[job]] keys beside the runner's options.
JOB_KEYS: tuple[Opt, ...] = (
    _WORKLOAD,
    _TIMEOUT,
    Opt(
        "gpu_ids",
        "list",
        None,
        'Which GPUs it may use, e.g. [0, 1] (--gpu-ids; not with device = "cpu")',
        default_text="the first free ones",
    ),
    Opt("share_gpus", "bool", False, "Run on GPUs another job holds"),
    Opt(
        "extra",
        "list",
        None,
        "Strings passed to the launcher untouched (zbench run's arguments after --)",
    ),
)
# A demo's [[job]] keys beside the demo's options (a demo takes one GPU, the first free one).
DEMO_JOB_KEYS: tuple[Opt, ...] = (_WORKLOAD, _TIMEOUT)


@dataclass(frozen=True)
class Also:
    """A value a suite file's key takes beside those the option's parser takes, and its meaning."""

    key: str
    value: str
    help: str


AUTO_DEVICE = "auto"
ALL_GPUS = "all"
ALSO: tuple[Also, ...] = (
    Also("device", AUTO_DEVICE, "cuda when a GPU is present, else cpu"),
    Also("gpus", ALL_GPUS, "every GPU (a scaling run; skipped with fewer than 2)"),
)
TOP_KEYS = frozenset(k.name for k in FILE_KEYS)
