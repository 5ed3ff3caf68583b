"""`zbench export -o`: a failed write keeps the file it would have replaced; pipes and devices."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# Under this limit, SQLite's own files (the 32 KiB -shm) fit; the samples of the H200 runs do not.
FILE_LIMIT = 64 * 1024


def _zbench(*args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "zbench", *args],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=small_files if limit else None,
    )


def test_an_export_that_fails_half_way_leaves_the_old_file_as_it_was(
    h200_db: Path, tmp_path: Path
) -> None:
    """The export was written over the old file in place: a write that failed part way (a full
    disk) left it cut short, what it held before lost."""
    out = tmp_path / "samples.jsonl"
    out.write_text('{"kept": true}\n')
    got = _zbench("export", "--samples", "--db", str(h200_db), "-o", str(out), limit=FILE_LIMIT)
    assert got.returncode == 1, got.stderr  # the work failed; the path given was fine
    assert got.stderr == f"zbench: export: cannot write {out}: File too large\n"
    assert out.read_text() == '{"kept": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "samples.jsonl"]


def test_an_export_replaces_a_file_whole_and_keeps_its_mode(h200_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    out.write_text("old\n")
    out.chmod(0o640)
    link = tmp_path / "link.md"
    link.symlink_to(out)
    got = _zbench("export", "--db", str(h200_db), "-o", str(link))
    assert got.returncode == 0, got.stderr
    assert link.is_symlink() and out.read_text().startswith("| Run | Model |")
    assert out.stat().st_mode & 0o777 == 0o640


@pytest.mark.skipif(not Path("/dev/stdout").exists(), reason="no /dev/stdout")
def test_an_export_to_dev_stdout_through_a_pipe_is_written_not_waited_on(h200_db: Path) -> None:
    """`export -o /dev/stdout | head` hung: the check that -o is no database read the pipe."""
    got = _zbench("export", "--db", str(h200_db), "-o", "/dev/stdout")
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("| Run | Model |")
    assert got.stderr == "Wrote 10 results to /dev/stdout\n"
