"""Every CSV zbench writes defuses cells a spreadsheet would run as formulas (issue 28, case 6)."""

from __future__ import annotations

import csv
import io

import pytest

from zbench.csvcell import safe_cell, write_rows
from zbench.fleet.gather import to_csv
from zbench.results.api import ResultRow
from zbench.results.demos import DemoResult
from zbench.results.demos import render as render_demos
from zbench.results.export import render

BAD = ['=HYPERLINK("http://e")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\rx"]


@pytest.mark.parametrize("text", BAD)
def test_a_text_cell_that_starts_like_a_formula_gets_a_quote(text: str) -> None:
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", [-1.5, -3, 0, "-1.5", "+2e3", "plain", "a=b", None])
def test_numbers_and_plain_text_are_kept(value: object) -> None:
    assert safe_cell(value) == value


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_results_csv_defuses_a_gpu_name_but_keeps_numbers() -> None:
    row = ResultRow("resnet50", "torch", "train", 1, '=HYPERLINK("http://e")', "fp32", 8, -1.5)
    header, cells = _cells(render([row], "csv"))
    got = dict(zip(header, cells, strict=True))
    assert got["gpu_name"] == '\'=HYPERLINK("http://e")'
    assert got["samples_per_s"] == "-1.5"


def test_fleet_csv_defuses_every_text_cell() -> None:
    rows = [{"host": "@evil", "state": "done", "tag": "=1+1", "samples_per_s": -2.0}]
    header, cells = _cells(to_csv(rows))
    assert dict(zip(header, cells, strict=True)) == {
        "host": "'@evil",
        "state": "done",
        "tag": "'=1+1",
        "samples_per_s": "-2.0",
    }


def test_demo_csv_defuses_a_gpu_name() -> None:
    row = DemoResult(1, 1, 0.0, "snake", "train", "-cmd", 1.0, {})
    assert "'-cmd" in render_demos([row], "csv")


def test_write_rows_guards_the_header_too() -> None:
    assert _cells(write_rows(["=h"], [["ok"]])) == [["'=h"], ["ok"]]
