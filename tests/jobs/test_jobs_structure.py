"""The jobs package's shape: job states are spelled in one module, and no two job modules import
each other (directly or round a longer circle)."""

from __future__ import annotations

import ast
from pathlib import Path

import zbench

PKG = Path(zbench.__file__).parent
STATE_ONLY_WORDS = {"queued", "running", "crashed", "lost"}  # not also a phase or an error kind


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_job_modules_import_no_circle() -> None:
    mods = {f"zbench.jobs.{p.stem}": p for p in (PKG / "jobs").glob("*.py")}
    graph = {m: {i for i in _imports(p) if i in mods and i != m} for m, p in mods.items()}

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph[start])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo += graph[m]
        return seen

    circles = sorted(m for m in mods if m in reach(m))
    assert not circles, f"modules on an import circle: {circles}"


def test_job_states_are_spelled_only_in_the_enum_module() -> None:
    files = [*(PKG / "jobs").glob("*.py"), *(PKG / "store").glob("*.py")]
    files += (PKG / "results").glob("*.py")
    assert len(files) > 30  # the scan sees the packages it names
    found = []
    for path in files:
        if path.name == "states.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in STATE_ONLY_WORDS:
                found.append(f"{path.name}:{node.lineno} {node.value!r}")
    assert not found, found
