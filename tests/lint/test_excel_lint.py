"""The Excel lint finds each fault it names when one is injected into a clean file, and nothing in a clean one
(the default and plan workbooks are linted where they are built: tests/writer/test_parity.py, tests/planner)."""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import pytest
import xlsxwriter

from workbook.lint.__main__ import main
from workbook.lint.excel import RULES, lint_formula, lint_number_format, lint_xlsx, looks_like_reference


def _clean(path: Path, *, extra=None) -> Path:
    wb = xlsxwriter.Workbook(str(path))
    ws = wb.add_worksheet("Plan")
    ws.write_row("A1", [1, 2, 3])
    ws.write_formula("A2", "=SUM(A1:C1)", None, 6)
    wb.define_name("gpu_count", "=Plan!$A$1")
    if extra:
        extra(wb, ws)
    wb.close()
    return path


def _rules(path: Path) -> set[str]:
    return {f.rule for f in lint_xlsx(path)}


def test_a_clean_file_has_no_finding(tmp_path):
    assert lint_xlsx(_clean(tmp_path / "clean.xlsx")) == []


@pytest.mark.parametrize("rule, extra", [
    ("power", lambda wb, ws: ws.write_formula("B2", "=A1^B1", None, 1)),
    ("power", lambda wb, ws: ws.write_formula("B2", "=POWER(A1,0)", None, 1)),
    ("number-format", lambda wb, ws: ws.write_number("D1", 5e9, wb.add_format({"num_format": '[>=1E9]0.0,,," B";0'}))),
    ("index-one-row", lambda wb, ws: ws.write_formula("B2", "=INDEX(Plan!$A$1:$C$1,2)", None, 2)),
    ("future-function", lambda wb, ws: ws.write_formula("B2", '=TEXTJOIN(",",1,A1:C1)', None, "1,2,3")),
    ("string-literal", lambda wb, ws: ws.write_formula("B2", '="' + "x" * 300 + '"', None, "x")),
    ("formula-length", lambda wb, ws: ws.write_formula("B2", "=" + "+".join(["A1"] * 3000), None, 3000)),
])
def test_each_injected_fault_is_found(tmp_path, rule, extra):
    assert rule in RULES
    assert rule in _rules(_clean(tmp_path / "faulty.xlsx", extra=extra))


@pytest.mark.parametrize("name", ["ab12", "R1C1", "GPU_COUNT"])
def test_a_name_like_a_reference_or_colliding_ignoring_case_is_found(tmp_path, name):
    """xlsxwriter refuses such names, so they are injected the way another tool (openpyxl) would write them."""
    import openpyxl
    from openpyxl.workbook.defined_name import DefinedName

    path = _clean(tmp_path / "names.xlsx")
    wb = openpyxl.load_workbook(path)
    wb.defined_names[name] = DefinedName(name, attr_text="Plan!$B$1")
    wb.save(path)
    assert "defined-name" in _rules(path)


def test_an_over_long_validation_prompt_is_found(tmp_path):
    import openpyxl
    from openpyxl.worksheet.datavalidation import DataValidation

    path = _clean(tmp_path / "dv.xlsx")
    wb = openpyxl.load_workbook(path)
    dv = DataValidation(type="whole", operator="greaterThan", formula1="0", promptTitle="t" * 40, prompt="p" * 300)
    dv.add("C3")
    wb["Plan"].add_data_validation(dv)
    wb.save(path)
    found = [f for f in lint_xlsx(path) if f.rule == "data-validation"]
    assert len(found) == 2


def test_nesting_and_arguments_limits():
    deep = "=" + "ABS(" * 65 + "1" + ")" * 65
    assert {f.rule for f in lint_formula(deep, "x")} == {"nesting"}
    many = "=SUM(" + ",".join(["1"] * 256) + ")"
    assert {f.rule for f in lint_formula(many, "x")} == {"arguments"}
    assert lint_formula('=IF(A1>0,"a^b",INDEX(t_col,MATCH(1,x,0)))', "x") == []  # ^ inside a string is text


def test_number_format_grammar():
    assert lint_number_format('[>=1E9]0.0,,," B";#,##0') == ["1E9"]
    assert lint_number_format('[>=1000000000]0.0,,," B";[>=1E+6]0.0,," M";#,##0') == []
    assert lint_number_format('"[>=1E9]"0') == []  # a quoted literal is not a condition


def test_names_that_look_like_references():
    for name in ("ab12", "XFD1048576", "R1C1", "r2c", "C", "A1"):
        assert looks_like_reference(name), name
    for name in ("gpu_count", "c_two", "XFE1", "cat_gpu_id", "t_prec_bytes"):
        assert not looks_like_reference(name), name


def test_log_chart_over_text_and_a_non_finite_cache(tmp_path):
    def chart(wb, ws):
        ws.write_row("A5", [10, "n/a", 1000])
        c = wb.add_chart({"type": "bar"})
        c.add_series({"values": "=Plan!$A$5:$C$5"})
        c.set_x_axis({"log_base": 10})
        ws.insert_chart("E5", c)
    found = lint_xlsx(_clean(tmp_path / "chart.xlsx", extra=chart))
    assert [f.rule for f in found] == ["log-chart"] and "B5" in found[0].detail
    path = _clean(tmp_path / "nan.xlsx")
    bad = tmp_path / "nan2.xlsx"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = re.sub(rb"<v>6</v>", b"<v>inf</v>", data)
            zout.writestr(item, data)
    assert "non-finite" in _rules(bad)


def test_the_command_line(tmp_path, capsys):
    clean = _clean(tmp_path / "clean.xlsx")
    assert main([str(clean)]) == 0
    faulty = _clean(tmp_path / "f.xlsx", extra=lambda wb, ws: ws.write_formula("B2", "=A1^0", None, 1))
    assert main([str(faulty)]) == 1
    assert "power" in capsys.readouterr().out
    junk = tmp_path / "junk.xlsx"
    junk.write_bytes(b"not a zip")
    assert main([str(junk)]) == 2


def test_the_openxml_schema_validator_catches_a_bogus_element(tmp_path):
    audit = pytest.importorskip("openxml_audit")
    validator = audit.OpenXmlValidator(file_format=audit.FileFormat.OFFICE_2010)
    path = _clean(tmp_path / "clean.xlsx")
    assert validator.validate(str(path)).is_valid
    bad = tmp_path / "bogus.xlsx"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"<sheetData>", b"<bogusElement/><sheetData>")
            zout.writestr(item, data)
    assert not validator.validate(str(bad)).is_valid
