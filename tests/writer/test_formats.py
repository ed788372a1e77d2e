"""Number formats: one per unit from styles.UNIT_FORMATS, readable in Excel and LibreOffice."""

from __future__ import annotations

import csv
import shutil
import subprocess

import openpyxl
import pytest
import xlsxwriter

from workbook.calc import registry
from workbook.units import UNITS
from workbook.writer.numfmt import render
from workbook.writer.styles import UNIT_FORMATS, number_format, unknown_units

#: (unit, the row's values, what the first value reads as)
READS = [
    ("tokens", [2e12, 8e12], "2.0 T"),
    ("tokens", [2e12, 3e9], "2.0 T"),
    ("count", [7.0554e10, 2.357e11], "70.6 B"),
    ("count", [5.3e6, 262144], "5.3 M"),
    ("tokens", [262144, 5.3e6], "262,144"),
    ("tokens/s", [1645.07, 2742.1], "1,645"),
    ("count", [4096, 5120], "4,096"),
    ("USD", [119472.277, 34635356.1], "$119,472"),
    ("USD", [-1234.5, 156800.0], "-$1,235"),
    ("USD", [0.0008645, 0.1242], "$0.0009"),
    ("USD/GPU-h", [2.5, 1.0], "$2.50"),
    ("USD/GPU-h", [0.098, 0.07], "$0.098"),
    ("USD/1M tokens", [0.3377, 48.5], "$0.34"),
    ("USD/GPU", [37500.0], "$37,500"),
    ("fraction", [0.75, 0.5], "75.0%"),
    ("fraction", [0.00209, 0.00175], "0.21%"),
    ("fraction", [-0.001096, 0.0], "-0.11%"),
    ("FLOP", [8.0856e22], "8.09E+22"),
    ("FLOP", [4.0], "4"),
    ("s", [1e-6], "0.000001"),
    ("sequences", [1e-9], "1.00E-09"),
    ("GB/s", [0.002391, 4.227], "0.002"),
    ("s", [840236.96, 1.117e8], "840,237"),
    ("ms", [19.45, 10.91], "19.5"),
    ("GB", [13.476, 3598.2], "13.5"),
    ("GB", [80.0, 96.0], "80"),
    ("GB", [0.5, 0.0, 3.5, 2.0], "0.5"),
    ("0/1", [1, 0], "1"),
    ("x", [1.3333, 1.3333], "1.3"),
    ("gen", [5], "Gen 5"),
    ("TFLOPS", [989.5, 148.0], "989.5"),
]


def test_every_unit_has_a_format():
    units = {e.q.unit for e in registry().values()}
    assert units <= set(UNITS), "units outside workbook.units.UNITS"
    assert unknown_units() == set(), "UNITS and UNIT_FORMATS differ"
    for unit in units:
        assert number_format(unit, [1.0, 2.5e9]) not in ("", "General"), unit


@pytest.mark.parametrize("unit,values,shown", READS, ids=[f"{u}-{s}" for u, _, s in READS])
def test_values_read_well(unit, values, shown):
    assert render(number_format(unit, values), values[0]) == shown


def test_unknown_unit_falls_back_to_a_readable_format():
    assert render(number_format("spec 17.4.8", [3, 0]), 3) == "3"
    assert render(number_format("-", [1e-9]), 1e-9) == "1.00E-09"
    assert render(number_format("-", [0.75, 0.5]), 0.75) == "0.75"


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice not installed")
def test_libreoffice_shows_what_render_says(tmp_path):
    """The custom formats (magnitudes, conditions, currency) read the same in LibreOffice."""
    path = tmp_path / "formats.xlsx"
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet()
    for r, (unit, values, _) in enumerate(READS):
        ws.write_number(r, 0, values[0], wb.add_format({"num_format": number_format(unit, values)}))
    wb.close()
    profile = tmp_path / "profile"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to",
                    "csv:Text - txt - csv (StarCalc):44,34,76,1,,1033,false,true,true", "--outdir", str(tmp_path),
                    str(path)], check=True, capture_output=True, timeout=180)
    shown = [row[0] for row in csv.reader((tmp_path / "formats.csv").open(encoding="utf-8"))]
    assert shown == [s for _, _, s in READS]


def test_calculation_cells_carry_their_unit_format(built):
    path, book = built
    wb = openpyxl.load_workbook(path)
    reg = registry()
    for rec in book.cells.by_role("calc", "link", "check"):
        if rec.key not in reg:
            continue
        fmt = wb[rec.sheet][rec.coord].number_format
        unit = reg[rec.key].q.unit
        assert fmt != "General", (rec.sheet, rec.coord, unit)
        if unit.startswith("USD"):
            assert fmt.startswith("$"), (rec.key, fmt)
        if unit == "fraction":
            assert fmt.endswith("%"), (rec.key, fmt)


def test_catalogue_and_constants_formats(built):
    wb = openpyxl.load_workbook(built[0])
    hw = wb["Hardware"]
    fmts = {}
    for row in hw.iter_rows():
        for c in row:
            if isinstance(c.value, (int, float)) and not isinstance(c.value, bool):
                fmts.setdefault(c.column_letter, set()).add(c.number_format)
    assert all("General" not in f for f in fmts.values())
    header = {c.value: c.column_letter for row in hw.iter_rows() for c in row if isinstance(c.value, str)}
    price = hw[f"{header['price_on_demand_usd_per_gpu_hour']}{hw.max_row}"].number_format
    assert price.startswith("$") and ".00" in price
    models = wb["Models"]
    head = {c.value: c.column_letter for c in models[5]}
    assert "B" in models[f"{head['published_params_total']}6"].number_format
