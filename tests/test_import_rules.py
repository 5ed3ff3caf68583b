"""design.md's layering, enforced: import each module in a fresh interpreter and read sys.modules."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
import time

import pytest

import zbench

FRAMEWORKS = ("torch", "tensorflow", "keras", "jax")


def _modules(prefix: str) -> list[str]:
    pkg = __import__(prefix, fromlist=["_"])
    names = [prefix]
    if hasattr(pkg, "__path__"):
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, prefix + ".")]
    return names


def _loaded_after_import(module: str) -> set[str]:
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m.split(".")[0] for m in json.loads(out.stdout.strip().splitlines()[-1])}


CORE = [m for p in ("zbench.telemetry", "zbench.jobs", "zbench.results") for m in _modules(p)]
UI = ["zbench.cli", *_modules("zbench.tui")]


@pytest.mark.parametrize("module", CORE)
def test_core_never_imports_textual(module: str) -> None:
    loaded = _loaded_after_import(module)
    assert "textual" not in loaded, f"{module} imports textual"
    assert not loaded & set(FRAMEWORKS), f"{module} imports a DL framework"


@pytest.mark.parametrize("module", UI)
def test_ui_never_imports_frameworks(module: str) -> None:
    loaded = _loaded_after_import(module)
    assert not loaded & set(FRAMEWORKS), f"{module} imports {loaded & set(FRAMEWORKS)}"


@pytest.mark.parametrize(
    "module",
    [
        "zbench.runners",
        "zbench.contract.protocol",
        "zbench.contract.config",
        "zbench.contract.measure",
        "zbench.contract.resolve",
    ],
)
def test_runner_contract_is_framework_free(module: str) -> None:
    assert not _loaded_after_import(module) & set(FRAMEWORKS)


def test_help_is_fast() -> None:
    # Best of three, so a busy CI core does not make it flaky; "well under a second" is the target.
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "zbench", "--help"], capture_output=True, text=True, check=True
        )
        best = min(best, time.perf_counter() - t0)
    assert "monitor" in out.stdout
    assert best < 1.0, f"zbench --help took {best:.2f}s"


def test_version_matches_package() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "zbench", "--version"], capture_output=True, text=True
    )
    assert out.stdout.strip() == f"zbench {zbench.__version__}"
