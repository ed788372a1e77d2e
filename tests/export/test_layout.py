"""What finance prints and opens is whole: no chart past its print area, no word past the page's right margin,
no text cut at its cell's edge (one-scenario and default workbooks, every sheet)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.export.helpers import (charts_past_print_area, tables_split, texts_cut, words_overlapping,
                                  words_past_right_margin)
from tests.planner.helpers import planned_once
from workbook.cli import main

ROOT = Path(__file__).resolve().parents[2]
ONE = str(ROOT / "catalog" / "scenarios" / "17.9.4-70b-plan-h800.yaml")


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs poppler-utils (pdftotext)")]


def _pdf(xlsx: Path, sheets: str) -> Path:
    """The PDF of *sheets* of *xlsx* (all: every sheet)."""
    if sheets == "all":
        import openpyxl

        sheets = ",".join(openpyxl.load_workbook(xlsx, read_only=True).sheetnames)
    pdf = xlsx.with_name(f"{xlsx.stem}-{len(sheets)}.pdf")
    assert main(["export", str(xlsx), "--pdf", str(pdf), "--sheets", sheets]) == 0
    return pdf


@pytest.fixture(scope="module")
def one(tmp_path_factory) -> Path:
    """A one-scenario workbook: its print areas are narrowest (five fixed columns and one scenario column)."""
    path = tmp_path_factory.mktemp("one") / "one.xlsx"
    assert main(["build", "--scenarios", ONE, "-o", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def default(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("default") / "default.xlsx"
    assert main(["build", "-o", str(path)]) == 0
    return path


def test_charts_end_inside_the_print_area(one: Path, default: Path) -> None:
    """A chart wider than the print area was cut at its right edge (one-scenario Summary, Cost, ZeRO, Inference,
    Sensitivity: 760-900 px charts over ~700 px of columns)."""
    assert charts_past_print_area(one) == []
    assert charts_past_print_area(default) == []


def test_status_lines_print_whole(default: Path) -> None:
    """The status line of each scenario ("PASS (2 warning(s); first: Communication share above the planning
    limit)") was cut at its column's edge on the Summary and the Checks sheets: a text result wraps."""
    pdf = _pdf(default, "Summary,Checks")
    assert texts_cut(default, pdf) == []
    assert words_past_right_margin(pdf) == []


@pytest.mark.parametrize("book", ["one", "default"])
def test_every_sheet_prints_whole(book: str, request) -> None:
    """Every sheet of the workbook printed: no word past the right margin (the one-scenario Summary's status, the
    Manifest's record), no cell's text cut (Defaults at the default 8.43 width: keys cut, its subtitle cut;
    Constants keys; titles and subtitles of a catalogue sheet cut on its pages right of the first)."""
    xlsx = request.getfixturevalue(book)
    pdf = _pdf(xlsx, "all")
    assert words_past_right_margin(pdf) == []
    assert texts_cut(xlsx, pdf) == []
    assert tables_split(xlsx, pdf) == []  # Engines: the devices table's header at the foot of the profiles' page
    assert words_overlapping(pdf) == []  # the one-scenario tornado's -step labels over the driver names


@pytest.mark.parametrize("request_file", ["17.9.4-70b-h800", "serve-70b-chat"])
def test_plan_pdf_prints_whole(request_file: str) -> None:
    """The plan PDF (workbook plan REQUEST -o DIR): no word past the margin, no text cut, no table split from its
    header (the serving plans compared: their header at the foot of a page, their rows on the next under the
    sheet's header; the TCO by year likewise on Cost Breakdown), no chart label over another. The plan is the one
    tests/planner's plan-book tests read (planned once per session)."""
    xlsx, data = planned_once(f"catalog/requests/{request_file}.yaml", request_file)
    pdf = Path(data["pdf"])
    assert words_past_right_margin(pdf) == []
    assert texts_cut(xlsx, pdf) == []
    assert tables_split(xlsx, pdf) == []
    assert words_overlapping(pdf) == []  # the tornado's 57.8 over 59.5 days
