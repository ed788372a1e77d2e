"""Gnumeric, the engine that follows Excel: its recalculation is real, and it computes Excel's semantics
where LibreOffice and ``formulas`` do not (docs/excel-compatibility.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.engines import gnumeric, recalculate
from workbook.engines.values import formula_cells, read_values

from .conftest import STALE, expected_tiny

pytestmark = pytest.mark.skipif(not gnumeric.available(), reason="ssconvert not found (scripts/install-libreoffice.sh)")


def test_without_recalc_the_stale_cache_stays_and_with_it_comes_back_corrected(tiny_xlsx, tmp_path):
    wanted = formula_cells(tiny_xlsx)
    plain, recalc = tmp_path / "plain.xlsx", tmp_path / "recalc.xlsx"
    gnumeric.convert(tiny_xlsx, plain, recalc=False)
    gnumeric.convert(tiny_xlsx, recalc, recalc=True)
    stale = read_values(plain, wanted)
    assert stale[("Plan Summary", "B4")] == STALE
    fresh = read_values(recalc, wanted)
    want = expected_tiny()
    assert fresh[("Plan Summary", "B4")] == want[("Plan Summary", "B4")]
    assert fresh[("Inputs", "D3")] == want[("Inputs", "D3")]


def _one_sheet(tmp_path: Path, formulas: dict[str, str]) -> Path:
    import xlsxwriter

    path = tmp_path / "semantics.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("S")
    ws.write_row("A1", [0, 0, -8, 3, 2])
    ws.write_row("A2", [10, 20, 30])
    for cell, f in formulas.items():
        ws.write_formula(cell, f, None, STALE)
    wb.close()
    return path


def test_gnumeric_computes_excels_semantics_where_the_other_engines_differ(tmp_path):
    """0^0 and POWER(0,0) are #NUM! in Excel and Gnumeric (1 in LibreOffice and formulas), a negative base
    with a fractional exponent is #NUM!, and the EXP/LN form the writer uses is 1 at 0^0 everywhere."""
    from workbook.sheets.excel_math import power_nonneg

    path = _one_sheet(tmp_path, {
        "A5": "=A1^B1", "B5": "=POWER(A1,B1)", "C5": "=C1^(1/D1)",
        "D5": "=" + power_nonneg("A1", "B1"), "E5": "=" + power_nonneg("E1", "D1"),
        "F5": "=E1^D1^E1",  # Gnumeric's own deviation: right-associative (512), Excel 64
        "G5": "=INDEX(A2:C2,2)",  # Gnumeric's own deviation: #REF!, Excel 20
        "H5": "=INDEX(A2:C2,1,2)",  # the portable form: 20 everywhere
    })
    got = gnumeric.recalculate(path)
    assert got[("S", "A5")] == "#NUM!" and got[("S", "B5")] == "#NUM!" and got[("S", "C5")] == "#NUM!"
    assert got[("S", "D5")] == 1.0 and got[("S", "E5")] == pytest.approx(8.0)
    assert got[("S", "F5")] == 512.0
    assert got[("S", "G5")] == "#REF!"
    assert got[("S", "H5")] == 20.0
    other = recalculate(path, "formulas")
    assert other[("S", "A5")] == 1.0  # what Excel does not do: the reason Gnumeric verifies too
    assert other[("S", "D5")] == 1.0 and other[("S", "H5")] == 20.0


def test_benign_load_warnings_are_filtered():
    err = ("At A1: 'Plan!$A:$A,Plan!$1:$4' Multiple expressions are not supported in this context\n"
           "Unknown enum value 'notContains'\nsomething else\n")
    assert gnumeric.unexpected_warnings(err) == ["something else"]
