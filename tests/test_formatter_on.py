"""The formatter decides the layout of every Python file in the repository (zbench/, benchmarks/,
tests/, scripts/): no line turns it off. A line whose alignment carries meaning would need a reason
here and an entry in ALLOWED; there are none today."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("zbench", "benchmarks", "tests", "scripts")
ALLOWED: set[str] = set()  # "path:line" entries, each with its reason beside it
MARKERS = ("fmt: " + "skip", "fmt: " + "off")  # spelled apart so this file does not match itself


def test_the_formatter_is_not_turned_off_anywhere() -> None:
    paths = sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py"))
    assert any(p.parts[-2:] == ("motion", "renderer.py") for p in paths)  # the walk finds files
    skipped = [
        f"{path.relative_to(REPO)}:{n}"
        for path in paths
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if any(marker in line for marker in MARKERS)
    ]
    assert set(skipped) <= ALLOWED, skipped
