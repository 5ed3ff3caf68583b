"""`zbench cache` (its size, `clear`) and the doctor's compile-cache line."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zbench import paths
from zbench.cli import app

runner = CliRunner(env={"COLUMNS": "120"})


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path))
    cache = paths.cache_dir()
    (cache / "triton" / "abc").mkdir(parents=True)
    (cache / "triton" / "abc" / "kernel.cubin").write_bytes(b"x" * 3000)
    (cache / "batch_search.json").write_text("{}")
    return cache


def test_cache_shows_its_size_per_entry(home: Path) -> None:
    res = runner.invoke(app, ["cache", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got == {
        "path": str(home),
        "bytes": 3002,
        "entries": {"batch_search.json": 2, "triton": 3000},
    }
    text = runner.invoke(app, ["cache"]).stdout
    assert "2.9 KiB" in text and "triton" in text and "zbench cache clear" in text


def test_cache_clear_empties_it_and_says_how_much(home: Path) -> None:
    res = runner.invoke(app, ["cache", "clear"])
    assert res.exit_code == 0 and "cleared 2.9 KiB" in res.stdout
    assert list(home.iterdir()) == []
    assert json.loads(runner.invoke(app, ["cache", "--json"]).stdout)["bytes"] == 0
    empty = runner.invoke(app, ["cache"]).stdout  # no clear to offer: it says what fills it
    assert "0 B" in empty and "empty: the first --preset max run fills it" in empty
    assert "zbench cache clear" not in empty


def test_a_link_in_the_cache_counts_as_what_clear_frees(home: Path, tmp_path: Path) -> None:
    """clear removes a link, never what it points at: the link's target (elsewhere on disk,
    kept) was counted and 'cleared 1.9 MiB' said of a link to /etc."""
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    (elsewhere / "deep" / "big.bin").write_bytes(b"x" * 100_000)
    (home / "inductor").symlink_to(elsewhere, target_is_directory=True)
    (home / "triton" / "abc" / "outside").symlink_to(elsewhere / "deep")
    usage = paths.cache_usage()
    assert 3000 <= usage["triton"] < 3500 and usage["inductor"] < 500  # the links' own bytes
    res = runner.invoke(app, ["cache", "clear"])
    assert res.exit_code == 0 and "cleared 3." in res.stdout and "KiB" in res.stdout
    assert (elsewhere / "deep" / "big.bin").stat().st_size == 100_000


def test_cache_unknown_action_is_one_line_and_status_2(home: Path) -> None:
    res = runner.invoke(app, ["cache", "purge"])
    assert (
        res.exit_code == 2
        and "cache: action: must be one of show, clear, got 'purge'" in res.output
    )
    assert (home / "batch_search.json").exists()  # nothing deleted


def test_doctor_reports_the_cache(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbench.telemetry import doctor

    monkeypatch.setattr(doctor, "framework_status", lambda progress=None: {})
    monkeypatch.setattr(doctor, "machine", lambda: {"host": {}, "gpus": [], "warnings": []})
    assert doctor.collect()["cache"] == {"path": str(home), "bytes": 3002}


def test_doctor_creates_no_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zbench.telemetry import doctor

    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "fresh"))
    assert doctor.cache_report() == {"path": str(tmp_path / "fresh" / "cache"), "bytes": 0}
    assert not (tmp_path / "fresh").exists()


def _holder(code: str) -> subprocess.Popen[str]:
    """A process that runs ``code``, says ``ready`` and waits for its stdin to close."""
    import sys

    script = f"import sys\n{code}\nprint('ready', flush=True)\nsys.stdin.read()\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def _end(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_cache_clear_waits_for_a_compiling_runner_of_any_database(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner compiling into the cache holds it: clear refuses, one line, status 2, and deletes
    nothing. Clear asked only the default database, so a job submitted with another --db into
    the same data folder had its cache deleted under it."""
    from tests.rows import job_row
    from zbench.store import Store

    monkeypatch.delenv("ZBENCH_DB", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    runner_proc = _holder("from zbench.runners.torch.tuning import compile_cache; compile_cache()")
    try:  # its job is in another database of this data folder; the default one has none
        Store(tmp_path / "other.db").add_jobs([job_row(state="running", pid=runner_proc.pid)])
        res = runner.invoke(app, ["cache", "clear"])
        assert res.exit_code == 2
        assert res.output == (
            "zbench: cache: a running job uses the cache (its runner may be compiling into it); "
            "clear it when the job ends\n"
        )
        assert (home / "batch_search.json").exists() and (home / "triton" / "abc").is_dir()
    finally:
        _end(runner_proc)
    assert runner.invoke(app, ["cache", "clear"]).exit_code == 0  # its lock went with it
    assert list(home.iterdir()) == []


def test_a_running_job_that_does_not_hold_the_cache_does_not_stop_a_clear(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live runner that never used the cache (TensorFlow, a demo) is no reason to refuse, and
    a process killed while it held the cache holds it no more (the kernel drops the lock)."""
    from tests.rows import job_row
    from zbench.store import Store

    monkeypatch.delenv("ZBENCH_DB", raising=False)
    Store(paths.db_path()).add_jobs([job_row(state="running", pid=os.getpid())])
    killed = _holder("from zbench import paths; paths.use_cache()")
    killed.kill()
    killed.wait(timeout=60)
    assert runner.invoke(app, ["cache", "clear"]).exit_code == 0
    assert list(home.iterdir()) == []


def test_a_runner_waits_for_a_clear_under_way_and_not_for_ever(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    clearing = _holder(
        "import fcntl; from zbench import paths\n"
        "fh = open(paths.home() / paths.CACHE_LOCK, 'a'); fcntl.flock(fh, fcntl.LOCK_EX)"
    )
    monkeypatch.setattr(paths, "CACHE_WAIT_S", 0.5)
    monkeypatch.setattr(paths, "_held_cache", {})
    try:
        start = time.monotonic()
        assert paths.use_cache() == home
        assert 0.5 <= time.monotonic() - start < 10  # it waited, then went on
    finally:
        _end(clearing)
        paths.release_cache()
    start = time.monotonic()
    assert paths.use_cache() == home and time.monotonic() - start < 0.5  # no clear: no wait
    with pytest.raises(paths.CacheBusy):  # held by this process now: its own clear refuses
        paths.clear_cache()
    assert (home / "batch_search.json").exists()
    paths.release_cache()
    assert paths.clear_cache() == 3002


def test_doctor_offers_clear_only_for_a_cache_that_holds_something(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from tests.fakes.fake_nvml import FakeNvml
    from zbench.telemetry import doctor

    monkeypatch.setattr(doctor, "framework_status", lambda progress=None: {})
    monkeypatch.setitem(
        sys.modules, "pynvml", FakeNvml(init_error=FakeNvml.LIBRARY_NOT_FOUND).module
    )
    wide = {"COLUMNS": "300"}  # the whole line, however long the temporary path
    full = runner.invoke(app, ["doctor"], env=wide).stdout
    assert f"compile cache {home}: 2.9 KiB (`zbench cache clear` empties it)" in full
    paths.clear_cache()
    empty = runner.invoke(app, ["doctor"], env=wide).stdout
    assert f"compile cache {home}: 0 B\n" in empty


def test_a_file_removed_while_the_cache_is_measured_is_not_an_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A running job's compiler writes temporary files and renames them: one listed by the walk
    and gone before its size was read made `zbench cache` fail (exit 2, 'No such file or
    directory'), and the doctor report no size."""
    from zbench.telemetry import doctor

    (home / "triton" / "abc" / "kernel.tmp").write_bytes(b"x" * 500)
    (home / "gone.lock").write_bytes(b"x")
    real = os.lstat

    def racing(path: str) -> os.stat_result:
        if str(path).endswith((".tmp", ".lock")):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path)

    monkeypatch.setattr(os, "lstat", racing)
    res = runner.invoke(app, ["cache", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["entries"] == {"batch_search.json": 2, "triton": 3000}
    assert doctor.cache_report() == {"path": str(home), "bytes": 3002}


@pytest.mark.parametrize("where", ["home", "under a file", "cache"])
def test_doctor_says_a_data_folder_that_is_a_file_is_not_a_folder(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$ZBENCH_HOME (or its cache) a regular file: the doctor said `compile cache ...: 0 B`, an
    empty cache. It says which path is not a folder, in the cache line and as an error, and
    exits 1 (zbench's commands fail there; a warning about the GPUs exits 0)."""
    import sys

    from tests.fakes.fake_nvml import FakeNvml
    from zbench.telemetry import doctor

    monkeypatch.setattr(doctor, "framework_status", lambda progress=None: {})
    monkeypatch.setitem(
        sys.modules, "pynvml", FakeNvml(init_error=FakeNvml.LIBRARY_NOT_FOUND).module
    )
    (tmp_path / "file").write_text("not a folder")
    home = {"home": "file", "under a file": "file/sub", "cache": "data"}[where]
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / home))
    if where == "cache":
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "cache").write_text("not a folder")
    blocked = tmp_path / ("data/cache" if where == "cache" else "file")
    text = runner.invoke(app, ["doctor"], env={"COLUMNS": "400"})
    assert text.exit_code == 1, text.output
    assert f"/cache: {blocked}: exists and is not a folder\n" in text.stdout
    assert "0 B" not in text.stdout and "no warnings" not in text.stdout
    as_json = runner.invoke(app, ["doctor", "--json"])
    assert as_json.exit_code == 1
    got = json.loads(as_json.stdout)
    assert got["cache"]["bytes"] is None and got["cache"]["not_a_folder"] == str(blocked)
    assert got["warnings"] == []
    [warning] = got["errors"]
    assert f"error: {warning}\n" in text.stdout
    if where == "cache":
        assert warning.startswith(f"{blocked} is not a folder: runs that compile fail")
    else:
        assert f"the data folder {tmp_path / home} " in warning and "$ZBENCH_HOME" in warning
    with pytest.raises(paths.DataDirError, match="exists and is not a folder"):
        paths.cache_usage(tmp_path / home / "cache")


def test_a_data_folder_where_no_lock_can_be_made_still_clears(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only data folder (a writable cache in it): no runner can make the lock to hold, so
    clear does not need it either, and says nothing of a lock file."""

    def read_only(path: Path, mode: str = "a+") -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(paths, "open_private", read_only)
    monkeypatch.setattr(paths, "_held_cache", {})
    assert paths.use_cache() == home and paths._held_cache == {}
    res = runner.invoke(app, ["cache", "clear"])
    assert res.exit_code == 0 and "cleared 2.9 KiB" in res.stdout
