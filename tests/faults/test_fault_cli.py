"""Cases 6, 7 and 9's command-line cases: every failure is one line with a meaningful exit status,
data is never read as Rich markup, and bad input is refused before a job is queued."""

from __future__ import annotations

import json
import shlex
import stat
from pathlib import Path

import pytest

from tests.faults.conftest import one_line_error, zbench
from tests.jobs.jobkit import fake_spec, wait_for
from tests.rows import run_row
from zbench.jobs import api
from zbench.jobs.suites import Here, SuiteError, parse_suite
from zbench.store import Store

FINAL = ("done", "failed", "crashed", "oom", "timeout", "cancelled", "lost")


def _add_run(db: Path, **fields: object) -> int:
    return Store(db).add_run(run_row(**fields))


def test_a_home_that_is_a_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "file"))
    code, _, err = zbench("jobs")
    assert code == 2 and "exists and is not a folder" in one_line_error(err)
    monkeypatch.setenv("ZBENCH_HOME", str(tmp_path / "file" / "home"))
    code, _, err = zbench("jobs")
    assert code == 2 and one_line_error(err).endswith("file: exists and is not a folder")


def test_a_home_on_a_read_only_parent_is_one_line(
    read_only_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.faults.conftest import make_read_only

    make_read_only(read_only_dir)
    monkeypatch.setenv("ZBENCH_HOME", str(read_only_dir / "home"))
    code, _, err = zbench("jobs")
    assert code == 2 and "cannot create the folder (Read-only file system)" in one_line_error(err)


def test_a_read_only_home_with_a_writable_db_queues_nothing(
    home: Path, tmp_path: Path, read_only_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.faults.conftest import make_read_only

    make_read_only(read_only_dir)
    monkeypatch.setenv("ZBENCH_HOME", str(read_only_dir))
    db = tmp_path / "w.db"
    code, _, err = zbench("run", "resnet50", "--device", "cpu", "--detach", "--db", str(db))
    assert code == 2 and "not writable" in one_line_error(err)
    assert not db.exists() or Store(db).jobs() == []


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("ZBENCH_SUPERVISOR_IDLE_S", "abc", "'abc' is not a number of seconds"),
        ("ZBENCH_SAMPLE_INTERVAL_S", "0", "'0' must be a finite number of seconds, >= 0.05"),
        ("ZBENCH_STALL_TIMEOUT_S", "nan", "'nan' must be a finite number of seconds, >= 0"),
        ("ZBENCH_STORE_GIVE_UP_S", "-1", "'-1' must be a finite number of seconds, >= 0"),
        ("ZBENCH_QUIET_WARN_S", "1 min", "'1 min' is not a number of seconds"),
    ],
)
def test_a_bad_timing_in_the_environment_is_refused_before_queueing(
    home: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, says: str
) -> None:
    """The supervisor read these as it started: a bad one ended it in a traceback in its log,
    after `zbench run --detach` had said the job was queued, and the job waited for ever."""
    monkeypatch.setenv(name, value)
    code, _, err = zbench("run", "resnet50", "--device", "cpu", "--detach")
    assert code == 2 and one_line_error(err) == f"zbench: run: ${name}: {says}"
    db = home / "zbench.db"
    assert not db.exists() or Store(db).jobs() == []


@pytest.mark.parametrize("command", [["jobs"], ["results"], ["export"], ["jobs", "--json"]])
def test_stdout_on_a_full_device_is_one_line(home: Path, command: list[str]) -> None:
    _add_run(home / "zbench.db")
    with open("/dev/full", "w") as full:
        code, _, err = zbench(*command, stdout=full)
    assert code == 1 and "No space left on device" in one_line_error(err)


def test_monitor_recording_to_a_full_device_is_one_line(home: Path) -> None:
    code, _, err = zbench("monitor", "--count", "2", "--interval", "0.05", "--record", "/dev/full")
    assert code == 1 and "No space left on device" in one_line_error(err)


def test_plot_onto_a_file_is_one_line(home: Path, tmp_path: Path) -> None:
    _add_run(home / "zbench.db")
    target = tmp_path / "a-file"
    target.write_text("x")
    code, _, err = zbench("plot", "-o", str(target))
    assert code == 2 and str(target) in one_line_error(err)


def test_compare_on_wrongly_typed_json_is_one_line(home: Path, tmp_path: Path) -> None:
    db = home / "zbench.db"
    _add_run(db)
    code, out, err = zbench("export", "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    rows = data if isinstance(data, list) else data.get("results", data)
    rows[0]["samples_per_s"] = "fast"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, _, err = zbench("compare", "1", str(bad))
    assert code == 2 and "should be a number" in one_line_error(err)


def test_cancel_of_an_impossible_id_is_one_line(home: Path) -> None:
    code, _, err = zbench("cancel", "99999999999999999999")
    assert code == 2 and one_line_error(err) == "zbench: cancel: no job 99999999999999999999"


def test_the_database_swapped_while_following_is_one_line(home: Path) -> None:
    from zbench.cli.follow import _console, follow
    from zbench.errors import ZbenchError

    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("ok", steps=3)], db=db)
    wait_for(jid, db, FINAL)
    db.unlink()
    Path(f"{db}-wal").unlink(missing_ok=True)
    Path(f"{db}-shm").unlink(missing_ok=True)
    with pytest.raises(ZbenchError, match=f"no job {jid}"):
        follow([jid], db, _console())


def test_cancel_of_an_ended_job_is_not_a_failure(home: Path) -> None:
    db = home / "zbench.db"
    [jid] = api.submit([fake_spec("ok", steps=2)], db=db)
    wait_for(jid, db, FINAL)
    code, out, _ = zbench("cancel", str(jid))
    assert code == 0 and "already ended" in out


# --- Rich markup from data (case 7) ------------------------------------------------------------


def test_a_suite_named_like_markup_prints_as_is(home: Path, tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(
        'name = "nightly [/x] [bold red]"\n[[job]]\nworkload = "resnet50"\ndevice = "cpu"\n'
        'steps = 2\nwarmup = 0\nextra = ["behave=ok"]\n'
    )
    code, out, err = zbench("suite", str(suite), "--detach")
    assert code == 0, err
    assert "nightly [/x] [bold red]" in out


def test_a_gpu_name_like_markup_prints_as_is_in_compare(home: Path) -> None:
    db = home / "zbench.db"
    a, b = _add_run(db, gpu_name="GPU [/x]"), _add_run(db, gpu_name="[bold red]H200")
    code, out, err = zbench("compare", str(a), str(b), "--unlike")
    assert code == 0, err
    text = " ".join(out.split())  # the title wraps at the table's width
    assert "GPU [/x]" in text and "[bold red]H200" in text


# --- bad input refused before a job is queued (case 9) -----------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["vgg16", "--image-size", "16"], "needs --image-size 32 or more"),
        (["resnet50", "--data", "/no/such/dataset"], "no such file or folder"),
        (["resnet50", "--data", "/"], "resnet50 --data /: not a known dataset layout: /"),
        (["fasterrcnn", "--data", "/"], "fasterrcnn --data /: no VOCdevkit/VOC2007 or VOC2012"),
        (["resnet50", "--steps", "1000000000000"], "at most"),
    ],
)
def test_bad_runner_input_is_refused_at_submit(home: Path, args: list[str], says: str) -> None:
    code, _, err = zbench("run", *args, "--device", "cpu", "--detach")
    assert code == 2 and says in one_line_error(err)
    db = home / "zbench.db"
    assert not db.exists() or Store(db).jobs() == []


def test_submit_itself_refuses_a_bad_spec(home: Path) -> None:
    """The TUI's launch and suites go through the same check as `zbench run`."""
    spec = fake_spec("ok")
    bad = api.JobSpec(spec.config.__class__(**{**spec.config.__dict__, "image_size": 8}))
    with pytest.raises(api.JobSpecError, match="needs --image-size 32 or more"):
        api.submit([spec, bad], db=home / "zbench.db")
    assert Store(home / "zbench.db").jobs() == []


@pytest.mark.parametrize(
    ("job", "says"),
    [
        ({"workload": []}, "empty list"),
        ({"workload": "resnet50", "device": "cpu", "gpu_ids": [0]}, "gpu_ids needs"),
        ({"workload": "resnet50", "device": "cpu", "steps": 10**12}, "at most"),
        ({"workload": "resnet50", "device": "cuda", "gpu_ids": []}, "gpu_ids: names no GPU"),
        # [0, 0] was taken, as `zbench run --gpu-ids 0,0` is not; both say it in the same words
        ({"workload": "resnet50", "device": "cuda", "gpu_ids": [0, 0]}, "gpu_ids: GPU 0 is named"),
        ({"workload": "resnet50", "device": "cuda", "gpu_ids": [-1]}, "gpu_ids: -1 is not a GPU"),
    ],
)
def test_suites_refuse_what_cannot_run(job: dict, says: str) -> None:
    with pytest.raises(SuiteError, match=says):
        parse_suite({"job": [job]}, "s.toml", Here(1, {"torch", "tf"}))


# --- the data directory (case 9) ---------------------------------------------------------------


def test_a_relative_home_stores_absolute_paths_and_everything_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZBENCH_HOME", "relhome")
    db = tmp_path / "relhome" / "zbench.db"
    [jid] = api.submit([fake_spec("ok", steps=2, step_s=0.01)], db=None)
    info = wait_for(jid, db, FINAL)
    assert info.log_path and Path(info.log_path).is_absolute()
    for path in [tmp_path / "relhome", *(tmp_path / "relhome").rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
    first = Path(info.log_path).read_text().splitlines()[0]
    assert first.startswith("$ ") and "behave=ok" in shlex.split(first[2:])


def test_the_runner_log_command_line_is_shell_quoted(home: Path) -> None:
    db = home / "zbench.db"
    spec = fake_spec("ok", steps=2)
    spec = api.JobSpec(
        spec.config.__class__(**{**spec.config.__dict__, "extra": ("behave=ok", "note=a b")})
    )
    [jid] = api.submit([spec], db=db)
    info = wait_for(jid, db, FINAL)
    first = Path(info.log_path or "").read_text().splitlines()[0]
    assert shlex.split(first[2:])[-1] == "note=a b"
