"""Markdown (golden), CSV and JSON exports."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from zbench.results.api import query_results
from zbench.results.export import FormatError, md_escape, render, rows_from_json

GOLDEN = Path(__file__).with_name("golden")


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ZBENCH_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; ZBENCH_UPDATE_GOLDEN=1 rewrites it"


def test_markdown_golden(filled: Path) -> None:
    _check_golden("results.md", render(query_results(filled), "md"))


def test_markdown_golden_filtered(filled: Path) -> None:
    rows = query_results(filled, workload="resnet50", framework="torch", device="h200")
    assert len(rows) == 5
    _check_golden("resnet50-torch.md", render(rows, "md"))


def test_markdown_cells_are_escaped() -> None:
    assert md_escape("a|b\nc\\d") == "a\\|b<br>c\\\\d"


def test_markdown_table_shape(filled: Path) -> None:
    lines = render(query_results(filled), "md").split("\n\n")[0].splitlines()
    table = [line for line in lines if line.startswith("|")]
    widths = {line.replace("\\|", "").count("|") for line in table}
    assert len(widths) == 1, "every row has the header's number of cells"


def test_csv_has_raw_numbers_and_published(filled: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(render(query_results(filled), "csv"))))
    assert len(rows) == 10
    assert rows[0]["samples_per_s"] == "2101.4" and rows[0]["published_samples_per_s"] == ""
    assert rows[0]["published_note"] == "published as TF32, this run is FP32"
    assert rows[0]["setup"] == rows[0]["setup"].strip() and len(rows[0]["setup"]) == 8
    assert rows[2]["mem_util"] == ""  # NA stays empty, not 0
    assert rows[9]["gpu_name"] == "Quadro RTX 8000 | rev\nB"


def test_json_round_trip_keeps_full_config(filled: Path) -> None:
    rows = query_results(filled)
    data = json.loads(render(rows, "json"))
    assert data["results"][0]["config"]["batch_size"] == 128
    assert data["results"][0]["phases"]["warmup"]["gpu_util_mean"] == 97.0 / 2
    published = data["results"][0]["published"]
    assert published["candidate"]["source"].startswith("Lambda")
    assert published["not_comparable"] == "published as TF32, this run is FP32"
    back = rows_from_json(json.dumps(data))
    assert back == rows


def test_unknown_format() -> None:
    with pytest.raises(FormatError, match="--format: must be one of md, csv, json, got 'xml'"):
        render([], "xml")


def test_review_order_groups_by_model_then_train_before_infer() -> None:
    from zbench.results.api import ResultRow, review_order

    def row(workload: str, mode: str, gpus: int = 1, framework: str = "torch", t: float = 0.0):  # type: ignore[no-untyped-def]
        return ResultRow(workload, framework, mode, gpus, "H200", "fp32", 8, 1.0, created=t)

    rows = [
        row("unet2d", "infer", t=1),
        row("resnet50", "train", gpus=2, t=2),
        row("resnet50", "infer", t=3),
        row("resnet50", "train", framework="tf", t=4),
        row("resnet50", "train", t=5),
        row("unet2d", "train", t=6),
    ]
    got = [(r.workload, r.framework, r.gpus, r.mode) for r in review_order(rows)]
    assert got == [
        ("resnet50", "torch", 1, "train"),
        ("resnet50", "torch", 1, "infer"),
        ("resnet50", "torch", 2, "train"),
        ("resnet50", "tf", 1, "train"),
        ("unet2d", "torch", 1, "train"),
        ("unet2d", "torch", 1, "infer"),
    ]


def test_a_run_over_several_nodes_shows_nodes_by_gpus(filled: Path) -> None:
    from dataclasses import replace

    from zbench.results.format import cells, gpus_cell

    row = query_results(filled)[0]
    nodes = [{"rank": r, "host": "localhost", "gpus": 1} for r in range(2)]
    multi = replace(row, gpus=2, result={**row.result, "nodes": nodes})
    assert gpus_cell(multi) == "2x1" and "2x1" in cells(multi)
    assert gpus_cell(replace(row, gpus=2)) == "2"  # one node: the plain count
    assert "| 2x1 |" in render([multi], "md")
    from zbench.results.identity import scaling_key

    one_node = replace(row, gpus=2)
    assert scaling_key(multi) != scaling_key(one_node)  # never paired for scaling
