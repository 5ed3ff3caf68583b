from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from zbench.contract.protocol import SCHEMA_VERSION, EventTail, EventWriter, parse_line, read_events


def test_writer_emits_versioned_timestamped_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with EventWriter(path) as w:
        w.phase("warmup")
        w.progress(3, 10, samples_per_s=123.5)
        w.error("oom", "CUDA out of memory", batch_size=256)
    events = list(read_events(path))
    assert [e["type"] for e in events] == ["phase", "progress", "error"]
    assert all(e["v"] == SCHEMA_VERSION and isinstance(e["t"], float) for e in events)
    assert events[1]["samples_per_s"] == 123.5
    assert events[2]["kind"] == "oom" and events[2]["batch_size"] == 256


def test_writer_rejects_unknown_type_and_nan(tmp_path: Path) -> None:
    w = EventWriter(tmp_path / "e.jsonl")
    with pytest.raises(ValueError):
        w.emit("bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        w.emit("result", samples_per_s=float("nan"))


def test_writer_on_inherited_fd(tmp_path: Path) -> None:
    r, wfd = os.pipe()
    w = EventWriter(f"fd:{wfd}")
    w.phase("setup")
    w.close()
    with os.fdopen(r) as fh:
        assert parse_line(fh.readline())["phase"] == "setup"  # type: ignore[index]


@pytest.mark.parametrize(
    "line",
    [
        "",
        "not json",
        "[1,2]",
        '{"type": "phase"}',
        '{"v": 1, "t": 1, "type": "nope"}',
        '{"v":1,"t":"x","type":"log"}',
    ],
)
def test_reader_skips_what_it_cannot_parse(line: str) -> None:
    assert parse_line(line) is None


def test_tail_returns_only_complete_new_lines(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    tail = EventTail(path)
    assert tail.poll() == []  # file not there yet
    good = json.dumps({"v": 1, "t": 1.0, "type": "phase", "phase": "setup"})
    with open(path, "w") as fh:
        fh.write(good + "\n" + good[:10])
    assert len(tail.poll()) == 1
    with open(path, "a") as fh:
        fh.write(good[10:] + "\ngarbage\n")
    events = tail.poll()
    assert len(events) == 1 and events[0]["phase"] == "setup"
    assert tail.poll() == []


def test_read_events_ignores_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps({"v": 1, "t": 1.0, "type": "log", "msg": "a"}) + '\n{"v": 1, "t')
    assert [e["msg"] for e in read_events(path)] == ["a"]
