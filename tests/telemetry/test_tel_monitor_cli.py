"""``zbench monitor`` through the real CLI (typer's CliRunner, fixed width) and as a process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes.fake_nvml import FakeNvml
from zbench.cli import app
from zbench.telemetry.trace import read_header, read_trace

runner = CliRunner(env={"COLUMNS": "120"})


def test_json_from_replay_one_object_per_sample(synthetic_trace: Path) -> None:
    res = runner.invoke(
        app,
        [
            "monitor",
            "--replay",
            str(synthetic_trace),
            "--count",
            "3",
            "--interval",
            "0.05",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 3
    objs = [json.loads(line) for line in lines]
    assert [len(o["gpus"]) for o in objs] == [2, 2, 2]
    assert objs[0]["gpus"][0]["nvlink"]["active_links"] == 18


def test_table_with_fake_nvml(fake: FakeNvml) -> None:
    fake.gpus[0].util_gpu = 93
    fake.gpus[1].gpm_supported = False
    res = runner.invoke(app, ["monitor", "--count", "2", "--interval", "0.05", "--gpu-ids", "0,1"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "NVL TX" in out and "0 H200" in out and "93%" in out
    assert "host CPU" in out
    assert max(len(line) for line in out.splitlines()) <= 120
    res = runner.invoke(app, ["monitor", "--once", "--wide"])
    assert "NVLink TX GB/s" in res.stdout and "PCIe TX/RX GB/s" in res.stdout


def test_count_shows_that_many_samples_each_with_real_rates(fake: FakeNvml, tmp_path: Path) -> None:
    """``--count 1`` printed the priming sample, whose CPU % is n/a (nothing to take a difference
    from yet). A first sample is taken and not shown or recorded, as ``--once`` does."""
    out = tmp_path / "rec.jsonl"
    res = runner.invoke(
        app, ["monitor", "--count", "2", "--interval", "0.05", "--json", "--record", str(out)]
    )
    assert res.exit_code == 0, res.output
    objs = [json.loads(line) for line in res.stdout.strip().splitlines()]
    assert len(objs) == 2 and all(o["host"]["cpu_pct"] is not None for o in objs)
    assert [s.host.cpu_pct for s in read_trace(out)] == [o["host"]["cpu_pct"] for o in objs]
    res = runner.invoke(app, ["monitor", "--count", "1", "--interval", "0.05"])
    assert res.exit_code == 0 and "n/a" not in res.stdout.split("host CPU")[1].splitlines()[0]


def test_host_only_mode_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml(init_error=FakeNvml.DRIVER_NOT_LOADED)
    monkeypatch.setitem(sys.modules, "pynvml", fake.module)
    res = runner.invoke(app, ["monitor", "--count", "1", "--json"])
    assert res.exit_code == 0
    snap = json.loads(res.stdout)
    assert snap["gpus"] == [] and snap["notice"].endswith("host-only mode")
    res = runner.invoke(app, ["monitor", "--count", "1"])
    assert "host-only mode" in res.stdout and "host CPU" in res.stdout
    # Asking for a GPU by index on a machine without a driver is bad input, not a host-only view.
    res = runner.invoke(app, ["monitor", "--count", "1", "--gpu-ids", "0"])
    assert res.exit_code == 2
    assert res.output.startswith(
        "zbench: monitor: --gpu-ids: no GPU 0 on this machine (it offers no GPU: no NVIDIA driver"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu-ids", "0,x"], "--gpu-ids: 'x' is not a GPU index (expected e.g. 0,1)"),
        (["--gpu-ids", "0,0"], "--gpu-ids: GPU 0 is named twice"),  # was shown once, exit 0
        (["--gpu-ids", "5"], "--gpu-ids: no GPU 5 on this machine (it offers GPUs 0,1)"),
        (["--replay", "missing.jsonl"], "no such trace file: missing.jsonl"),
        (["--once"], "--once shows one sample: it cannot go with --count 1"),
        (["--replay", __file__], "is not a zbench trace"),
    ],
)
def test_bad_input_is_one_line_exit_2(fake: FakeNvml, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["monitor", "--count", "1", *args])
    assert res.exit_code == 2
    assert res.output.startswith("zbench: monitor: ") and len(res.output.strip().splitlines()) == 1
    assert message in res.output


def test_recording_over_the_trace_being_replayed_is_refused(
    tmp_path: Path, synthetic_trace: Path
) -> None:
    """`monitor --replay T --record T` replaced T's samples with the few it replayed."""
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(synthetic_trace.read_bytes())
    (tmp_path / "link.jsonl").symlink_to(trace)
    for record in (trace, tmp_path / "link.jsonl", tmp_path / "." / "t.jsonl"):
        res = runner.invoke(
            app, ["monitor", "--replay", str(trace), "--record", str(record), "--count", "1"]
        )
        assert res.exit_code == 2
        assert res.output.strip() == (
            f"zbench: monitor: --record {record} is the trace --replay plays: recording would overwrite it"
        )
    assert trace.read_bytes() == synthetic_trace.read_bytes()


def test_recording_over_an_existing_file_is_refused(fake: FakeNvml, tmp_path: Path) -> None:
    """`monitor --record T` replaced a trace already at T without a word: the earlier recording
    was lost. An empty file (made by the user, or `touch`) is written."""
    kept = tmp_path / "kept.jsonl"
    kept.write_text('{"type": "header"}\n{"t": 1}\n')
    before = kept.read_bytes()
    res = runner.invoke(app, ["monitor", "--count", "1", "--record", str(kept), "--json"])
    assert res.exit_code == 2
    assert res.output.strip() == (
        f"zbench: monitor: --record {kept} already holds {len(before)} bytes (a recording?): give a new "
        "path, or delete it first"
    )
    assert kept.read_bytes() == before
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    res = runner.invoke(app, ["monitor", "--count", "1", "--record", str(empty), "--json"])
    assert res.exit_code == 0, res.output
    assert read_header(empty)["gpus"]


def test_a_recording_of_a_replay_names_the_replayed_host(
    tmp_path: Path, synthetic_trace: Path
) -> None:
    """Its header said this machine's host name, as if it had been measured here."""
    out = tmp_path / "again.jsonl"
    res = runner.invoke(
        app, ["monitor", "--replay", str(synthetic_trace), "--record", str(out), "--count", "2"]
    )
    assert res.exit_code == 0, res.output
    header = read_header(out)
    assert header["host"] == read_header(synthetic_trace)["host"]
    assert header["replayed_from"] == synthetic_trace.name


def test_record_then_replay(fake: FakeNvml, tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    res = runner.invoke(
        app, ["monitor", "--count", "3", "--interval", "0.05", "--record", str(out), "--json"]
    )
    assert res.exit_code == 0
    assert read_header(out)["gpus"] == ["NVIDIA H200", "NVIDIA H200"]
    assert len(list(read_trace(out))) == 3
    res = runner.invoke(app, ["monitor", "--replay", str(out), "--interval", "0.05", "--json"])
    assert res.exit_code == 0  # ends by itself when the trace runs out
    assert 1 <= len(res.stdout.strip().splitlines()) <= 4


def test_ctrl_c_exits_0_with_complete_trace(synthetic_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    cmd = [sys.executable, "-m", "zbench", "monitor", "--replay", str(synthetic_trace)]
    cmd += ["--interval", "0.05", "--json", "--record", str(out)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    for _ in range(3):
        proc.stdout.readline()
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    lines = out.read_text().splitlines()
    assert len(lines) >= 4 and all(line.endswith("}") for line in lines)
    assert len(list(read_trace(out))) == len(lines) - 1
