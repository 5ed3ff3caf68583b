"""The formatter decides the layout of zbench/: `# fmt: skip` is kept for lines whose alignment
carries meaning, and there are none today. A new one needs a reason and a raised limit here."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "zbench"
LIMIT = 0


def test_the_formatter_is_not_turned_off_in_zbench() -> None:
    skipped = [
        f"{path.relative_to(ROOT.parent)}:{n}"
        for path in sorted(ROOT.rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "fmt: skip" in line or "fmt: off" in line
    ]
    assert len(skipped) <= LIMIT, skipped
