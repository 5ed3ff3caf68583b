"""design.md: the store "owns all SQL". No module outside zbench/store/ holds SQL text, imports
sqlite3 or calls a cursor's execute; a scan of every module's syntax tree checks it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import zbench

ROOT = Path(zbench.__file__).parent
STORE = ROOT / "store"
# A string that opens with an SQL statement keyword (upper case, as SQL is written here).
SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|VACUUM"
    r"|REPLACE INTO|WITH \w+ AS)\b"
)
EXECUTE = {"execute", "executemany", "executescript"}


def sql_outside_store(source: str) -> list[str]:
    """What in ``source`` is SQL: string constants (plain or the first part of an f-string)
    that open with a statement keyword, ``sqlite3`` imports, and ``execute`` calls."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if SQL.match(node.value):
                found.append(f"line {node.lineno}: SQL text {node.value.strip()[:40]!r}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            if any(n and n.split(".")[0] == "sqlite3" for n in names):
                found.append(f"line {node.lineno}: imports sqlite3")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in EXECUTE
        ):
            found.append(f"line {node.lineno}: calls .{node.func.attr}()")
    return found


def test_the_scan_finds_sql_in_each_form() -> None:
    source = (
        "import sqlite3\n"
        "Q = 'SELECT * FROM runs'\n"
        "def f(c, t):\n"
        "    c.execute(f'  UPDATE {t} SET x = 1')\n"
        "    return 'select a word, not a statement'\n"
    )
    found = sql_outside_store(source)
    assert sorted(f.split(":")[0] for f in found) == ["line 1", "line 2", "line 4", "line 4"], found


def test_no_sql_outside_the_store() -> None:
    offenders = {
        str(path.relative_to(ROOT.parent)): found
        for path in sorted(ROOT.rglob("*.py"))
        if STORE not in path.parents
        and (found := sql_outside_store(path.read_text(encoding="utf-8")))
    }
    assert not offenders, f"SQL outside zbench/store/: {offenders}"
