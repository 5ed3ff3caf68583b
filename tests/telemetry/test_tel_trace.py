from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from zbench.telemetry.snapshot import NA, GpuSnapshot, NvLinkSnapshot, Snapshot
from zbench.telemetry.trace import ReplayBackend, TraceWriter, read_header, read_trace


def _snap(i: float, t0: float = 1000.0) -> Snapshot:
    gpu = GpuSnapshot(index=0, name="G", util_gpu=float(i), nvlink=NvLinkSnapshot(tx_bytes_s=NA))
    return Snapshot(t=t0 + i, seq=int(i) + 1, gpus=(gpu,))


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    snaps = [_snap(i) for i in range(3)]
    with TraceWriter(path, interval=1.0) as w:
        for s in snaps:
            w.write(s)
    assert read_header(path)["gpus"] == ["G"]
    assert list(read_trace(path)) == snaps
    if name.endswith(".gz"):
        with gzip.open(path) as fh:
            assert fh.read(1) == b"{"


def test_each_line_is_flushed_and_torn_line_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TraceWriter(path)
    w.write(_snap(0))
    w.write(_snap(1))
    # Without close (a killed recorder), both samples are already on disk.
    assert len(list(read_trace(path))) == 2
    with open(path, "a") as fh:
        fh.write('{"t": 12, "gpus": [')  # torn last line
    assert len(list(read_trace(path))) == 2
    w.close()


def test_not_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(ValueError, match="not a zbench trace"):
        list(read_trace(path))


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("results.db", b"SQLite format 3\x00\xe2\x28\xa1 binary pages"),  # not UTF-8
        ("trace.jsonl.gz", b"not gzip at all"),
        ("empty.jsonl", b""),
    ],
)
def test_a_file_that_is_no_trace_is_one_value_error(
    tmp_path: Path, name: str, content: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))} is not a zbench trace"):
        read_header(path)
    with pytest.raises(FileNotFoundError, match=r"^no such trace file: "):
        read_header(tmp_path / "missing.jsonl")


def test_a_folder_or_a_device_is_no_trace_file(tmp_path: Path) -> None:
    # Both read "no such trace file" before, though each exists.
    with pytest.raises(ValueError, match="is a folder, not a trace file"):
        read_header(tmp_path)
    with pytest.raises(ValueError, match=r"^/dev/null is not a zbench trace \(not a regular"):
        read_header("/dev/null")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("t", "now"),  # replay waited forever for a string clock to pass
        ("host", None),  # drawing the host line raised AttributeError
        ("gpus", "xy"),
        ("gpus.util_gpu", "high"),  # drawing it as a percentage raised ValueError
        ("gpus.index", "zero"),
        ("gpus.lost", 1),
        ("gpus.processes", [{"pid": "x", "name": "p"}]),
        ("host.per_core_pct", "abc"),  # was read as 3 cores
        # its GiB in the monitor was an OverflowError traceback
        pytest.param("gpus.mem_total_bytes", 10**400, id="gpus.mem_total_bytes-10**400"),
        ("t", float("inf")),  # the one field with no n/a
    ],
)
def test_a_line_whose_values_have_the_wrong_types_is_skipped(
    tmp_path: Path, field: str, value: object
) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        w.write(_snap(0))
        w.write(_snap(1))
    header, good, bad = path.read_text().splitlines()
    data = json.loads(bad)
    top, _, key = field.partition(".")
    if not key:
        data[top] = value
    else:
        (data[top][0] if top == "gpus" else data[top])[key] = value
    path.write_text("\n".join([header, good, json.dumps(data), good]) + "\n")
    assert list(read_trace(path)) == [_snap(0), _snap(0)]
    replay = ReplayBackend(path)
    assert replay.notice == "replaying t.jsonl (1 unreadable line skipped)"


def test_gzip_is_told_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    """A compressed trace renamed without .gz, and a plain one named .gz, read as traces (both
    were "not a zbench trace (no header line)")."""
    plain = tmp_path / "plain.jsonl.gz"
    packed = tmp_path / "packed.jsonl"
    with TraceWriter(tmp_path / "t.jsonl.gz") as w:
        w.write(_snap(0))
    packed.write_bytes((tmp_path / "t.jsonl.gz").read_bytes())
    with TraceWriter(tmp_path / "t.jsonl") as w:
        w.write(_snap(0))
    plain.write_bytes((tmp_path / "t.jsonl").read_bytes())
    assert list(read_trace(plain)) == list(read_trace(packed)) == [_snap(0)]


def test_nan_written_as_null(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        w.write(Snapshot(t=1.0, gpus=(GpuSnapshot(index=0, power_w=float("nan")),)))
    assert next(read_trace(path)).gpus[0].power_w is NA


def test_nan_or_infinity_in_a_trace_line_reads_as_na_like_the_null_written_for_it(
    tmp_path: Path,
) -> None:
    """A trace edited by hand with NaN (which JSON lacks) showed "nan/700" as the power."""
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        w.write(Snapshot(t=1.0, gpus=(GpuSnapshot(index=0, power_w=300.0, sm_clock_mhz=1.0),)))
    header, line = path.read_text().splitlines()
    data = json.loads(line)
    data["gpus"][0].update(power_w=float("nan"), sm_clock_mhz=float("inf"))
    path.write_text(header + "\n" + json.dumps(data) + "\n")
    [snap] = read_trace(path)
    assert snap.gpus[0].power_w is NA and snap.gpus[0].sm_clock_mhz is NA


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_replay_honours_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        for i in (0.0, 0.1, 0.2, 0.5):
            w.write(_snap(i))
    clock = Clock()
    rb = ReplayBackend(path, clock=clock, wall=lambda: 99.0)
    seen = []
    for now in (0.0, 0.05, 0.15, 0.3, 0.49, 0.5, 2.0):
        clock.now = now
        s = rb.sample()
        seen.append(s.gpus[0].util_gpu)
        assert s.t == 99.0  # moved to the present
    assert seen == [0.0, 0.0, 0.1, 0.2, 0.2, 0.5, 0.5]
    assert rb.finished


def test_replay_loops(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as w:
        for i in (0.0, 1.0):
            w.write(_snap(i))
    clock = Clock()
    rb = ReplayBackend(path, loop=True, clock=clock)
    clock.now = 1.0
    assert rb.sample().gpus[0].util_gpu == 1.0
    clock.now = 2.1  # period is 2 s: back at the start
    assert rb.sample().gpus[0].util_gpu == 0.0
    assert not rb.finished


def test_replay_of_synthetic_fixture(synthetic_trace: Path) -> None:
    header = read_header(synthetic_trace)
    assert header["synthetic"] is True
    snaps = list(read_trace(synthetic_trace))
    assert len(snaps) == 40
    copying = [s for s in snaps if s.notice == "synthetic: copy"]
    tx = copying[-1].gpus[0].nvlink.tx_bytes_s
    assert tx == pytest.approx(267e9, rel=0.01)
    assert copying[-1].gpus[1].nvlink.rx_bytes_s == pytest.approx(267e9, rel=0.01)


def test_replay_gpu_filter(synthetic_trace: Path) -> None:
    rb = ReplayBackend(synthetic_trace, gpus=[1])
    assert [g.index for g in rb.sample().gpus] == [1]
    with pytest.raises(
        ValueError, match=r"^--gpu-ids: no GPU 7 on the traced machine \(it offers GPUs 0,1\)$"
    ):
        ReplayBackend(synthetic_trace, gpus=[7])


def test_a_compressed_recording_cut_short_keeps_every_whole_sample(tmp_path: Path) -> None:
    """A gzip trace whose recorder was killed, or whose file was cut in transfer, has no end marker:
    it replays the samples before the cut, and says so, rather than failing (click read the
    EOFError as Ctrl-D and printed "aborted")."""
    whole = tmp_path / "whole.jsonl.gz"
    snaps = [_snap(i) for i in range(200)]
    with TraceWriter(whole, interval=1.0) as w:
        for s in snaps:
            w.write(s)
    data = whole.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    kept = list(read_trace(cut))
    assert 0 < len(kept) < 200 and kept == snaps[: len(kept)]
    replay = ReplayBackend(cut)
    assert replay.notice == f"replaying cut.jsonl.gz (cut short: its first {len(kept)} samples)"
    assert ReplayBackend(whole).notice == "replaying whole.jsonl.gz"
    killed = tmp_path / "killed.jsonl.gz"
    recorder = TraceWriter(killed, interval=1.0)
    for s in snaps[:3]:
        recorder.write(s)  # each line flushed; never closed, so no end marker
    assert list(read_trace(killed)) == snaps[:3]
    assert (
        ReplayBackend(killed).notice == "replaying killed.jsonl.gz (cut short: its first 3 samples)"
    )
