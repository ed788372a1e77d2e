"""PDF export: only the chosen sheets, recalculated, with the numbers printed and no error values."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from tests.export.helpers import page_footers
from workbook.cli import main
from workbook.readback import key_rows

ROOT = Path(__file__).resolve().parents[2]
ONE = str(ROOT / "catalog" / "scenarios" / "17.9.4-70b-plan-h800.yaml")
ERRORS = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "Err:")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("pdftotext") is None, reason="needs poppler-utils (pdftotext)")]


def _text(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True).stdout


def test_pdf_of_chosen_sheets(tmp_path: Path) -> None:
    wb_path = tmp_path / "plan.xlsx"
    assert main(["build", "--scenarios", ONE, "-o", str(wb_path)]) == 0
    pdf = tmp_path / "plan.pdf"
    assert main(["export", str(wb_path), "--pdf", str(pdf), "--sheets", "Cover,Summary"]) == 0
    text = _text(pdf)
    assert not any(e in text for e in ERRORS)
    assert "Summary" in text and "Master check" in text
    footers = page_footers(pdf)  # footer: file, sheet, page x of y
    assert {f[1] for f in footers} == {"Cover", "Summary"}
    n = str(len(footers))
    assert [f[2:] for f in footers] == [["Page", str(i), "of", n] for i in range(1, len(footers) + 1)]
    assert {f[0] for f in footers} == {"plan.xlsx"}  # the footer names the file, not a staging copy
    wb = openpyxl.load_workbook(wb_path, data_only=True)
    gpus = wb["Summary"][f"F{key_rows(wb['Summary'])['plan_gpus_to_buy'] + 1}"].value
    assert f"{gpus:,.0f}" in text  # the GPU count as the Summary prints it


def test_unknown_sheet(tmp_path: Path, capsys) -> None:
    wb_path = tmp_path / "plan.xlsx"
    assert main(["build", "--scenarios", ONE, "-o", str(wb_path)]) == 0
    assert main(["export", str(wb_path), "--sheets", "Cover,Budget"]) == 2
    assert "no sheet 'Budget'" in capsys.readouterr().err
