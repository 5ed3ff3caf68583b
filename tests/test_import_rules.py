"""design.md's layering. The import rules themselves are import-linter contracts in pyproject.toml,
run by `lint-imports` in the test gate; here one fresh interpreter imports every core, UI and
contract module and reads sys.modules, which also catches imports a static reading cannot see."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import zbench

FRAMEWORKS = {"torch", "tensorflow", "keras", "jax"}
CORE = ("zbench.telemetry", "zbench.jobs", "zbench.results", "zbench.store", "zbench.fleet")


def _modules(prefix: str) -> list[str]:
    pkg = __import__(prefix, fromlist=["_"])
    names = [prefix]
    if hasattr(pkg, "__path__"):
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix + ".")]
    return names


def _core_modules() -> list[str]:
    """Every module of the UI-free core packages."""
    return [m for p in CORE for m in _modules(p)]


def _loaded_after_import(modules: list[str], *, full: bool = False) -> set[str]:
    code = "import importlib, json, sys\n"
    code += f"for m in {modules!r}: importlib.import_module(m)\n"
    code += "print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    names = json.loads(out.stdout.strip().splitlines()[-1])
    return set(names) if full else {m.split(".")[0] for m in names}


def test_core_ui_and_contract_load_no_framework() -> None:
    core = _core_modules()
    ui = ["zbench.cli", *_modules("zbench.tui")]
    contract = [*_modules("zbench.contract"), "zbench.runners"]
    loaded = _loaded_after_import([*core, *ui, *contract])
    assert not loaded & FRAMEWORKS, f"imports {loaded & FRAMEWORKS}"


def test_core_and_contract_load_no_textual() -> None:
    core = _core_modules()
    loaded = _loaded_after_import([*core, *_modules("zbench.contract")])
    assert "textual" not in loaded and "typer" not in loaded


def test_the_core_renders_nothing() -> None:
    # Every Rich view lives in zbench.cli (or the TUI): importing all of the core loads no rich.
    core = [
        m
        for p in ("zbench.telemetry", "zbench.jobs", "zbench.results", "zbench.fleet")
        for m in _modules(p)
    ]
    mods = [*core, "zbench.settings", "zbench.paths", "zbench.textfit", "zbench.gpuids"]
    loaded = _loaded_after_import(mods, full=True)
    assert not {m for m in loaded if m == "rich" or m.startswith(("rich.", "zbench.cli"))}


def test_every_command_body_is_in_the_cli_package() -> None:
    cli = set(_modules("zbench.cli"))
    assert {
        "zbench.cli.jobs",
        "zbench.cli.results",
        "zbench.cli.monitor",
        "zbench.cli.doctor",
    } <= cli
    core = [m for p in ("zbench.telemetry", "zbench.jobs", "zbench.results") for m in _modules(p)]
    assert not [m for m in core if m.endswith(("commands", "_view"))]


def test_help_loads_no_framework_and_no_textual() -> None:
    """What keeps `zbench --help` fast, read from sys.modules, not a clock (the machine running
    the gate may be busy; benchmarks/startup.py times it): no framework, no TUI, no NVML or
    store."""
    code = (
        "import json, runpy, sys\n"
        "sys.argv = ['zbench', '--help']\n"
        "try:\n    runpy.run_module('zbench', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "monitor" in out.stdout
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "zbench" in loaded and "typer" in loaded  # the help really ran in that interpreter
    assert not loaded & (FRAMEWORKS | {"textual", "pynvml", "sqlite3", "numpy"})


def test_version_matches_package() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "zbench", "--version"], capture_output=True, text=True
    )
    assert out.stdout.strip() == f"zbench {zbench.__version__}"


def test_first_frame_imports_only_the_dashboard() -> None:
    # What the first frame does not need is imported when first used: the stores, the runner's
    # option table, the charts library, the other screens and dialogs, the snapshot classes and
    # the telemetry backends (the feed opens after the first frame).
    code = (
        "import json, sys, zbench.tui.app, zbench.tui.feed; "
        "print(json.dumps(sorted(m for m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    # The job-state enum (a few lines, standard library only) is the one part of jobs it reads.
    assert {m for m in loaded if m.startswith("zbench.jobs")} <= {
        "zbench.jobs",
        "zbench.jobs.states",
    }
    loaded -= {"zbench.jobs", "zbench.jobs.states"}
    # Of telemetry, only the NA sentinel, which the formatting compares values with.
    assert {m for m in loaded if m.startswith("zbench.telemetry")} == {
        "zbench.telemetry",
        "zbench.telemetry.na",
    }
    deferred = {
        "zbench.contract",
        "zbench.runners",
        "zbench.demos",
        "zbench.jobs",
        "zbench.results",
        "zbench.store",
        "plotext",
        "textual_plotext",
        "sqlite3",
        "psutil",
        "zbench.tui.screens.launch",
        "zbench.tui.launch_form",
        "zbench.tui.screens.results",
        "zbench.tui.screens.history",
        "zbench.tui.screens.processes",
        "zbench.tui.screens.confirm",
    }
    assert not loaded & deferred, f"the first frame imports {sorted(loaded & deferred)}"
