"""`zbench results / export / compare / plot` through Typer's CliRunner with a fixed width."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from zbench.cli import app

CLI = CliRunner(env={"COLUMNS": "220", "TERM": "dumb", "NO_COLOR": "1"})


def test_results_table_with_published_column(filled: Path) -> None:
    result = CLI.invoke(app, ["results", "--workload", "resnet50", "--framework", "torch"])
    assert result.exit_code == 0
    # H200's published "FP32" is TF32: beside a strict-FP32 run it does not compare, and says why.
    assert "Published" in result.output and "not comparable" in result.output
    assert "2,259 (TF32, H200)" not in result.output
    assert "Lambda deeplearning-benchmark" in result.output  # the caption names the source
    assert result.output.count("ResNet-50") == 5 and "VGG16" not in result.output


def test_results_filters_and_json(filled: Path) -> None:
    result = CLI.invoke(app, ["results", "--gpu", "rtx 8000", "--json"])
    data = json.loads(result.output)["results"]
    assert [r["workload"] for r in data] == ["unet2d"]
    assert data[0]["gpu_util"] is None
    later = CLI.invoke(app, ["results", "--since", "2099-01-01", "--json"])
    assert json.loads(later.output)["results"] == []


def test_results_bad_date_is_exit_2(filled: Path) -> None:
    result = CLI.invoke(app, ["results", "--since", "yesterday"])
    assert result.exit_code == 2 and "YYYY" not in result.output
    assert result.output == (
        "zbench: results: --since: wants a date like 2026-01-31, "
        "got 'yesterday' (see zbench results -h)\n"
    )


def test_a_date_the_clock_cannot_count_names_since(filled: Path) -> None:
    """`--since 0001-01-01` said only "zbench: year 0 is out of range"."""
    result = CLI.invoke(app, ["results", "--since", "0001-01-01"])
    assert result.exit_code == 2
    assert (
        result.output == "zbench: results: --since: 0001-01-01: out of the range of dates "
        "the clock can count (see zbench results -h)\n"
    )


def test_export_formats(filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    assert CLI.invoke(app, ["export", "-f", "csv", "-o", str(out)]).exit_code == 0
    assert len(list(csv.reader(out.open()))) == 11  # header + 10 runs (a quoted cell has a newline)
    bad = CLI.invoke(app, ["export", "--format", "xml"])
    assert bad.exit_code == 2
    assert bad.output.strip() == "zbench: export: --format: must be one of md, csv, json, got 'xml'"


def test_compare_run_ids_and_exported_files(filled: Path, tmp_path: Path) -> None:
    assert CLI.invoke(app, ["compare", "1", "4"]).exit_code == 2  # 1 vs 2 GPUs: not alike
    result = CLI.invoke(app, ["compare", "1", "4", "--unlike", "--json"])
    assert json.loads(result.output)["differences"] == [{"field": "gpus", "a": 1, "b": 2}]
    metrics = {m["metric"]: m for m in json.loads(result.output)["metrics"]}
    assert round(metrics["samples_per_s"]["ratio_b_over_a"], 3) == round(4050.2 / 2101.4, 3)
    exported = tmp_path / "other-machine.json"
    exported.write_text(CLI.invoke(app, ["export", "-f", "json"]).output)
    table = CLI.invoke(app, ["compare", f"{exported}:6", "1", "--unlike"])
    assert table.exit_code == 0
    assert "0.53x" in table.output and "Not alike: precision fp16 vs fp32" in table.output
    # Each figure as the results table prints it, under its column's title (it printed
    # 14,066,017,894.40 bytes, then "GPU memory GiB 40.20" and "GPU util % 97.00" beside the
    # table's "GPU mem GiB 40.2" and "97"); the JSON keeps the bytes.
    side = CLI.invoke(app, ["compare", "1", "4", "--unlike"]).output
    rows = {line.split("│")[1].strip(): line.split("│")[2:4] for line in side.splitlines()[6:-1]}
    table = CLI.invoke(app, ["results", "--run", "1", "--run", "4", "--wide"]).output.splitlines()
    head = table[1].split("  ")
    titles = [t.strip() for t in head if t.strip()]
    for title in ("Samples/s", "GPU util %", "Mem-ctrl util %", "GPU mem GiB", "CPU util %"):
        col = titles.index(title)
        shown = [re.split(r"\s{2,}", line.strip())[col] for line in table[2:4]]
        assert [c.strip() for c in rows[title]] == shown, (title, side)
    assert "bytes" not in side
    assert CLI.invoke(app, ["compare", "1", "99"]).exit_code == 2
    same = CLI.invoke(app, ["compare", "1", "01"])  # one run twice compares nothing
    assert same.exit_code == 2 and "same run" in same.output


def test_compare_file_run_splits_at_the_last_colon_and_names_a_missing_run(
    filled: Path, tmp_path: Path
) -> None:
    """`results-12:30.json:6` was read as the file `results-12`; `FILE:99` said "no results in
    it" of a file holding ten."""
    exported = tmp_path / "results-12:30.json"
    exported.write_text(CLI.invoke(app, ["export", "-f", "json"]).output)
    table = CLI.invoke(app, ["compare", f"{exported}:6", "1", "--unlike"])
    assert table.exit_code == 0, table.output
    assert "Not alike: precision fp16 vs fp32" in table.output
    missing = CLI.invoke(app, ["compare", f"{exported}:99", "1"])
    assert missing.exit_code == 2
    assert (
        missing.output
        == f"zbench: compare: {exported}:99: no run 99 in it (runs 1, 6, 7, 2, 4, 3, 5, 8, ...)\n"
    )


def test_compare_refuses_one_run_named_twice_through_its_export(
    filled: Path, tmp_path: Path
) -> None:
    """`compare 1 1` was refused, but `compare FILE:6 FILE:6` (or FILE:6 and 6, the run it was
    exported from) printed a table of 1.00x."""
    exported = tmp_path / "all.json"
    exported.write_text(CLI.invoke(app, ["export", "-f", "json"]).output)
    for a, b in ((f"{exported}:6", f"{exported}:6"), (f"{exported}:6", "6")):
        out = CLI.invoke(app, ["compare", a, b])
        assert out.exit_code == 2, out.output
        assert out.output == (
            f"zbench: compare: runs {a} and {b} are the same run: compare takes two different "
            "runs\n"
        )


def test_compare_of_a_digit_that_is_no_number_is_one_line(filled: Path) -> None:
    """ "²" passed str.isdigit() as a run id and int() raised a ValueError traceback."""
    for a, b in (("1", "²"), ("²", "1")):
        out = CLI.invoke(app, ["compare", a, b])
        assert out.exit_code == 2, out.output
        assert out.output.startswith("zbench: compare: ²: not a run id or a zbench JSON export (")
        assert len(out.output.splitlines()) == 1


def test_compare_of_a_blank_side_asks_for_a_run(filled: Path) -> None:
    """A blank side was read as this folder: "not a run id ... ([Errno 21] Is a directory: '.')"."""
    out = CLI.invoke(app, ["compare", "", "1"])
    assert out.exit_code == 2
    assert out.output == (
        "zbench: compare: each run is a run id or an exported file (FILE:RUN), got ''\n"
    )


def test_plot_and_report_into_a_file_are_one_line_and_exit_2(filled: Path, tmp_path: Path) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    for command in (["plot", "-o", str(taken)], ["report", "--output", str(taken)]):
        result = CLI.invoke(app, command)
        assert result.exit_code == 2
        assert result.output == f"zbench: {command[0]}: {taken} is a file, not a folder\n"
    assert taken.read_text() == "mine"


def test_a_place_in_the_folder_that_cannot_be_written_is_one_plain_line_exit_2(
    filled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file named figures in the report's folder read "cannot write the report to out: [Errno
    17] File exists: 'out/figures'"; plot said nothing of charts; a folder no one may write
    (EPERM, as /sys is to root) was exit 1, as if the disk had failed."""
    import errno

    report, charts = tmp_path / "report", tmp_path / "charts"
    report.mkdir()
    (report / "figures").write_text("mine")
    (charts / "throughput_train.png").mkdir(parents=True)
    said = {
        "report": CLI.invoke(app, ["report", "-o", str(report)]),
        "plot": CLI.invoke(app, ["plot", "-o", str(charts)]),
    }
    assert said["report"].exit_code == said["plot"].exit_code == 2
    assert said["report"].output.splitlines()[-1] == (
        f"zbench: report: cannot write the report: {report / 'figures'}: File exists"
    )
    assert said["plot"].output == (
        f"zbench: plot: cannot write the charts: {charts / 'throughput_train.png'}: Is a "
        "directory\n"
    )

    def refused(rows: Any, output: Path) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", str(output))

    monkeypatch.setattr("zbench.results.charts.write_charts", refused)
    out = CLI.invoke(app, ["plot", "-o", str(tmp_path / "sys")])
    assert out.exit_code == 2
    assert (
        out.output
        == f"zbench: plot: cannot write the charts: {tmp_path / 'sys'}: Operation not permitted\n"
    )


def test_plot_and_report_into_a_file_name_make_no_folder_of_it(
    filled: Path, tmp_path: Path
) -> None:
    for command, name in ((["plot", "-o"], "chart.png"), (["report", "--output"], "r.md")):
        result = CLI.invoke(app, [*command, str(tmp_path / "new" / name)])
        assert result.exit_code == 2
        assert result.output.startswith(f"zbench: {command[0]}: --output takes a folder (")
        assert result.output.endswith(f"not a file name: {tmp_path / 'new' / name}\n")
    assert not (tmp_path / "new").exists()
    named = tmp_path / "v1.md"  # a folder of that name that exists is the user's to write into
    named.mkdir()
    assert CLI.invoke(app, ["report", "--output", str(named)]).exit_code == 0
    assert (named / "report.md").is_file()


def test_gpu_filter_is_a_plain_substring(filled: Path) -> None:
    # "_" and "%" are SQL LIKE wildcards; typed by a user they mean themselves.
    for text in ("_", "%", "h_00"):
        result = CLI.invoke(app, ["results", "--gpu", text, "--json"])
        assert json.loads(result.output)["results"] == [], text
    assert json.loads(CLI.invoke(app, ["results", "--gpu", "h200", "--json"]).output)["results"]


def test_export_takes_its_format_from_the_files_name(
    filled: Path, h200_db: Path, tmp_path: Path
) -> None:
    """`-o results.csv` wrote Markdown into a .csv file: -f was md unless given."""
    empty = CLI.invoke(app, ["export", "--samples", "-o", str(tmp_path / "none.csv")])
    assert empty.exit_code == 1 and not (tmp_path / "none.csv").exists()  # runs, no samples
    assert empty.output == "zbench: export: no samples in the 10 selected runs: nothing to export\n"
    for name, first in (("r.csv", "workload,"), ("r.json", "{"), ("r.md", "| Run |")):
        out = CLI.invoke(app, ["export", "--db", str(h200_db), "-o", str(tmp_path / name)])
        assert out.exit_code == 0, out.output
        assert (tmp_path / name).read_text().startswith(first), name
    assert (
        CLI.invoke(app, ["export", "--db", str(h200_db), "-o", str(tmp_path / "r.txt")]).exit_code
        == 0
    )
    assert (tmp_path / "r.txt").read_text().startswith("| Run |")  # no known suffix: md
    # -f wins where the name says nothing, and where it contradicts the name it is refused.
    assert (
        CLI.invoke(
            app, ["export", "--db", str(h200_db), "-f", "json", "-o", str(tmp_path / "r.txt")]
        ).exit_code
        == 0
    )
    assert (tmp_path / "r.txt").read_text().startswith("{")
    # A name of a format no export writes is refused without -f (it wrote Markdown as .xlsx).
    for name, says in (
        ("r.xlsx", "r.xlsx: this export writes md, csv or json, not .xlsx; name the file .md"),
        ("r.HTML", "not .HTML (zbench report writes HTML)"),
        ("r.png", "not .png (zbench plot draws PNG charts)"),
    ):
        other = CLI.invoke(app, ["export", "--db", str(h200_db), "-o", str(tmp_path / name)])
        assert other.exit_code == 2 and not (tmp_path / name).exists(), name
        assert len(other.output.splitlines()) == 1 and says in other.output, other.output
    forced = CLI.invoke(
        app, ["export", "--db", str(h200_db), "-f", "csv", "-o", str(tmp_path / "r.xlsx")]
    )
    assert forced.exit_code == 0 and (tmp_path / "r.xlsx").read_text().startswith("workload,")
    clash = CLI.invoke(
        app, ["export", "--db", str(h200_db), "-f", "md", "-o", str(tmp_path / "x.CSV")]
    )
    assert clash.exit_code == 2 and not (tmp_path / "x.CSV").exists()
    assert clash.output == (
        "zbench: export: -f md but x.CSV is named csv: drop -f or name the file .md\n"
    )
    # Samples: .jsonl and .json are JSON lines, .csv CSV; a Markdown name is no samples format.
    lines = CLI.invoke(
        app, ["export", "--db", str(h200_db), "--samples", "-o", str(tmp_path / "s.json")]
    )
    assert lines.exit_code == 0, lines.output
    first = (tmp_path / "s.json").read_text().splitlines()[0]
    assert json.loads(first)["run_id"] is not None
    md = CLI.invoke(
        app, ["export", "--db", str(h200_db), "--samples", "-o", str(tmp_path / "s.md")]
    )
    assert md.exit_code == 2
    assert md.output == (
        "zbench: export: --samples: s.md: the name asks for md; give -f csv or -f jsonl, or name "
        "the file for one of them\n"
    )
    upper = CLI.invoke(
        app, ["export", "--db", str(h200_db), "-f", "CSV", "-o", str(tmp_path / "u.CSV")]
    )
    assert upper.exit_code == 0 and (tmp_path / "u.CSV").read_text().startswith("workload,")


def test_an_empty_selection_writes_nothing_and_exits_1(filled: Path, tmp_path: Path) -> None:
    """An export of no runs wrote an empty table and exit 0, as if it held the runs asked for."""
    for args in ([], ["--samples"]):
        out = tmp_path / "r.csv"
        got = CLI.invoke(
            app, ["export", *args, "--workload", "vgg16", "--since", "2099-01-01", "-o", str(out)]
        )
        assert got.exit_code == 1 and not out.exists()
        assert got.output == (
            "zbench: export: no runs match (workload vgg16; since 2099-01-01): nothing to export\n"
        )
    empty = tmp_path / "empty.db"
    from zbench.store import Store

    Store(str(empty))
    got = CLI.invoke(app, ["export", "--db", str(empty), "-f", "json"])
    assert got.exit_code == 1
    assert got.output == (
        "zbench: export: no results to export: run a suite first (`zbench suite quick`)\n"
    )


def test_export_to_a_missing_folder_is_one_line_exit_2(filled: Path, tmp_path: Path) -> None:
    result = CLI.invoke(app, ["export", "-o", str(tmp_path / "no" / "such" / "r.md")])
    assert result.exit_code == 2
    assert "cannot write" in result.output and "Traceback" not in result.output


def test_export_never_writes_over_a_database(filled: Path, tmp_path: Path) -> None:
    """`export -o zbench.db` replaced every stored run with a Markdown table of them."""
    import shutil
    import sqlite3

    other = tmp_path / "other.db"
    shutil.copy(filled, other)  # another zbench database, not the one read
    link = tmp_path / "link.db"
    link.symlink_to(filled)
    before = {p: p.read_bytes() for p in (filled, other)}
    live = sqlite3.connect(filled)  # a supervisor's: its -wal holds what is not in the file yet
    live.execute("SELECT 1 FROM jobs").fetchall()
    assert Path(f"{filled}-wal").exists()
    for target in (filled, link, other, Path(f"{filled}-wal")):
        for args in (["export", "-f", "csv"], ["export", "--samples"]):
            out = CLI.invoke(app, [*args, "-o", str(target)])
            assert out.exit_code == 2, (target, out.output)
            assert out.output == (
                f"zbench: export: {target} is a database: writing the export over it would lose it "
                "(-o names a new file)\n"
            )
    live.close()
    assert {p: p.read_bytes() for p in (filled, other)} == before
    assert len(json.loads(CLI.invoke(app, ["results", "--json"]).output)["results"]) == 10


def test_compare_rejects_json_that_is_not_an_export(filled: Path, tmp_path: Path) -> None:
    odd = tmp_path / "odd.json"
    odd.write_text("[1]")
    result = CLI.invoke(app, ["compare", str(odd), str(odd)])
    assert result.exit_code == 2 and "not a run id or a zbench JSON export" in result.output


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"config": [1]}, "config should be an object, got [1]"),
        ({"gpus": "two"}, "gpus should be an integer, got 'two'"),
        ({"gpu_name": ["a"]}, "gpu_name should be text, got ['a']"),
        ({"samples_per_s": float("nan")}, "samples_per_s should be a number, got nan"),
        ({"created": "yesterday"}, "created should be a number, got 'yesterday'"),
        ({"workload": None}, "workload should be text, got None"),
        ({"workload": ...}, "result 1: no workload"),
        # Edited by hand: a GPU count of -1 was compared as "x-1", a negative rate as a ratio.
        ({"gpus": -1}, "gpus should be 0 or more, got -1"),
        ({"samples_per_s": -5.0}, "samples_per_s should be 0 or more, got -5.0"),
    ],
)
def test_compare_checks_every_field_of_an_exported_file(
    filled: Path, tmp_path: Path, change: dict[str, Any], said: str
) -> None:
    """A config that was a list ended in a traceback; a GPU count of "two" was compared as
    "xtwo", a NaN speed as "nanx"."""
    doc = json.loads(CLI.invoke(app, ["export", "-f", "json", "--job", "1"]).output)
    for key, value in change.items():
        if value is ...:
            del doc["results"][0][key]
        else:
            doc["results"][0][key] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = CLI.invoke(app, ["compare", "1", str(bad), "--unlike"])
    assert out.exit_code == 2, out.output
    [line] = out.output.splitlines()
    assert (
        line.startswith(f"zbench: compare: {bad}: not a run id or a zbench JSON export (")
        and said in line
    )


def test_compare_refuses_an_export_of_a_newer_format(filled: Path, tmp_path: Path) -> None:
    doc = json.loads(CLI.invoke(app, ["export", "-f", "json", "--job", "1"]).output)
    assert doc["zbench_results"] == 1
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**doc, "zbench_results": 2}))
    out = CLI.invoke(app, ["compare", "1", str(newer), "--unlike"])
    assert out.exit_code == 2
    assert "written by a newer zbench: results format 2, this one reads up to 1" in out.output
    older = tmp_path / "older.json"  # a bare list of rows, as before the format had a version
    older.write_text(json.dumps(doc["results"]))
    assert CLI.invoke(app, ["compare", "2", str(older), "--unlike"]).exit_code == 0


def test_a_db_that_is_not_a_database_is_one_line_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    bogus = tmp_path / "notes.txt"
    bogus.write_text("this is not SQLite\n" * 100)
    for cmd in (["results"], ["jobs"], ["export"]):
        out = subprocess.run(
            [sys.executable, "-m", "zbench", *cmd, "--db", str(bogus)],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 2, (cmd, out.stderr)
        assert out.stderr.startswith("zbench: ") and "not a usable zbench database" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1


def test_another_programs_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """zbench wrote its tables into any SQLite file --db named (a mistyped path to another tool's
    database, say); now it says whose it is not, and writes nothing."""
    import sqlite3
    import subprocess
    import sys

    other = tmp_path / "inventory.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE parts (name TEXT)")
        # A table named as one of zbench's: it was taken for an old zbench database, switched to
        # write-ahead logging, then refused with "table runs already exists".
        conn.execute("CREATE TABLE runs (id INTEGER)")
    for cmd in (["results"], ["jobs"], ["run", "resnet50", "--device", "cpu", "--detach"]):
        out = subprocess.run(
            [sys.executable, "-m", "zbench", *cmd, "--db", str(other)],
            capture_output=True,
            text=True,
            env={**os.environ, "ZBENCH_HOME": str(tmp_path / "home")},
        )
        assert out.returncode == 2, (cmd, out.stderr)
        assert out.stderr == (
            f"zbench: {cmd[0]}: {other}: not a zbench database (it holds another program's tables: parts, "
            "runs); --db takes zbench's own file or a new one\n"
        )
    with sqlite3.connect(other) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert tables == ["parts", "runs"] and mode == "delete"  # untouched, its journal mode too


def test_the_new_filters_select_by_mode_precision_gpu_count_and_device(filled: Path) -> None:
    def ids(*args: str) -> list[int]:
        out = CLI.invoke(app, ["results", "--json", *args])
        assert out.exit_code == 0, out.output
        return [r["run_id"] for r in json.loads(out.output)["results"]]

    assert sorted(ids("--mode", "infer")) == [2, 10]
    assert ids("--precision", "bf16") == [7]
    assert sorted(ids("--gpus", "2")) == [4, 5]
    assert ids("--device", "rtx") == [10] == ids("--gpu", "rtx")  # --gpu: the old name, hidden
    assert ids("--device", "cpu") == []
    assert len(ids("--device", "cuda")) == 10
    # The same filters pick from exported files in compare, and hold for stored runs.
    bad = CLI.invoke(app, ["compare", "1", "2", "--mode", "train"])  # none to compare: exit 1
    assert bad.exit_code == 1
    assert bad.stderr.strip() == (
        "zbench: compare: run 2 is not one the filters select (mode train)"
    )
    md = CLI.invoke(app, ["export", "-f", "md", "--precision", "fp16"]).output
    assert "| 6 | ResNet-50 |" in md and "| 1 | ResNet-50 |" not in md
