"""Widths, wrapping and row heights: nothing in the built file is cut off or shown as ####."""

from __future__ import annotations

import openpyxl
import pytest

from workbook.writer import printing
from workbook.writer.fit import line_pt, text_width, wrap_lines
from workbook.writer.layout import CALC_SHEETS, COL_LABEL, FIRST_VALUE_COL, HEADER_ROW
from workbook.writer.numfmt import render



def test_wrap_lines():
    assert wrap_lines("Sequence length", 30) == 1
    label = "Training duration at the scenario GPUs and MFU (overhead included) over the whole run"
    assert wrap_lines(label, 50) == 2
    assert wrap_lines("llama-3-70b-serve-h800-tp4", 15, bold=True) == 2  # breaks after hyphens
    assert wrap_lines("price_on_demand_usd_per_gpu_hour", 11, bold=True) >= 3  # a long word breaks inside


def test_pages_wide():
    calc = [50, 13, 8, 8, 0] + [16] * 6
    assert printing.pages_wide(calc) == 1
    assert printing.pages_wide([11] * 34 + [48, 48]) >= 2
    assert printing.pages_wide([16] * 60) > printing.pages_wide([16] * 20)


@pytest.fixture(scope="module")
def sheets(built):
    return openpyxl.load_workbook(built[0]), openpyxl.load_workbook(built[0], data_only=True)


def _width(ws, col: int) -> float:
    for d in ws.column_dimensions.values():
        if d.min <= col <= d.max and d.customWidth:
            return d.width - 5 / 7  # the file's width holds the 5-pixel padding
    return 8.43


def test_values_fit_their_columns(sheets):
    """No formatted value is wider than its column (Excel would show ####)."""
    wb, wbv = sheets
    for title in CALC_SHEETS:
        ws, wsv = wb[title], wbv[title]
        for col in range(FIRST_VALUE_COL + 1, ws.max_column + 1):
            width = _width(ws, col)
            for row in range(HEADER_ROW + 2, ws.max_row + 1):
                v = wsv.cell(row, col).value
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    shown = render(ws.cell(row, col).number_format, v)
                    assert text_width(shown) <= width + 0.01, (title, ws.cell(row, col).coordinate, shown, width)


def test_labels_and_headers_have_room(sheets):
    """Each label and header gets the lines it wraps onto (LibreOffice does not grow rows itself)."""
    wb, _ = sheets
    for title in CALC_SHEETS:
        ws = wb[title]
        for row in range(HEADER_ROW + 1, ws.max_row + 1):
            cells = [ws.cell(row, COL_LABEL + 1)] + ([ws.cell(row, c) for c in range(1, ws.max_column + 1)]
                                                     if row == HEADER_ROW + 1 else [])
            for c in cells:
                if not isinstance(c.value, str) or not c.alignment.wrap_text:
                    continue
                size, bold = int(c.font.sz), bool(c.font.b)
                need = wrap_lines(c.value, _width(ws, c.column), size, bold) * line_pt(size)
                height = ws.row_dimensions[row].height or 15.0
                assert height >= need, (title, c.coordinate, c.value, height, need)


def test_label_column_wraps_at_a_readable_width(sheets):
    wb, _ = sheets
    for title in CALC_SHEETS:
        ws = wb[title]
        assert 30 <= _width(ws, COL_LABEL + 1) <= 50.5, title
        assert ws.cell(HEADER_ROW + 1, FIRST_VALUE_COL + 1).alignment.wrap_text


def test_a_subtitle_wider_than_the_print_area_wraps_in_a_wide_first_column(tmp_path):
    """The printed page clips text that runs past the print area's last column (the serving Recommendation's
    subtitle did): it wraps in its cell, unless its column is so narrow it would take more than three lines."""
    from workbook.writer.xlsx import SUBTITLE_MAX_LINES, Book, Writer

    path = tmp_path / "t.xlsx"
    w = Writer(path, Book(path, []))
    long = "Request r-1: the recommended serving plan, live from its scenario column's rows; " * 2
    cases = {"Plan": (58, long), "Cost": (58, "A short subtitle."), "Storage": (9, long)}
    for sheet, (width, subtitle) in cases.items():
        w.title(sheet, sheet, subtitle)
        w.ws[sheet].set_column(0, 0, width)
        w.ws[sheet].set_column(1, 3, 14)
        w.text(sheet, 3, 0, "Line item", "label", "label")
        w.finish_sheet(sheet, 3, 3)
    w.close()
    wb = openpyxl.load_workbook(path)
    plan = wb["Plan"]
    assert plan["A2"].alignment.wrap_text and plan["A2"].font.i
    lines = wrap_lines(long, 58)
    assert 1 < lines <= SUBTITLE_MAX_LINES and plan.row_dimensions[2].height >= lines * line_pt(10)
    assert not wb["Cost"]["A2"].alignment.wrap_text  # it fits: it stays one line
    assert wrap_lines(long, 9) > SUBTITLE_MAX_LINES and not wb["Storage"]["A2"].alignment.wrap_text
    assert wb["Cost"].print_area == "'Cost'!$A$1:$D$4"
    last = wb["Storage"].print_area.split("$")[-2]  # it runs over: the print area widens to hold it
    assert last > "D" and text_width(long) <= 9 + sum(wb["Storage"].column_dimensions[c].width for c in "BCD") + \
        8.43 * (ord(last) - ord("D"))


def _hardware_sheet(tmp_path, cells, *, fit: tuple, finish: tuple):
    """The Hardware sheet of a workbook holding only *cells* (row, col, text, style, role), its columns fitted
    (first, last, min, max width) and the sheet finished (last col, last row); read back with openpyxl."""
    from workbook.writer.xlsx import Book, Writer

    path = tmp_path / "t.xlsx"
    w = Writer(path, Book(path, []))
    for row, col, text, style, role in cells:
        w.text("Hardware", row, col, text, style, role)
    w.fit_columns("Hardware", *fit)
    w.finish_sheet("Hardware", *finish)
    w.close()
    return openpyxl.load_workbook(path)["Hardware"]


def test_a_header_word_never_breaks_inside(tmp_path):
    """A catalogue header (a field key such as hbm_device_MiB) printed as 'hbm_devi' over 'ce_MiB': its column is
    at least as wide as its longest word, whatever the column's bound."""
    ws = _hardware_sheet(tmp_path, [(3, 1, "price_on_demand_usd_per_gpu_hour", "header", "header"),
                                    (3, 2, "tdp_W", "header", "header")], fit=(1, 2, 7, 11), finish=(2, 3))
    assert _width(ws, 2) >= text_width("price_on_demand_usd_per_gpu_hour", bold=True)
    assert _width(ws, 3) == pytest.approx(7, abs=0.2)


def test_a_one_line_text_its_neighbour_would_cut_wraps(tmp_path):
    """A one-line text wider than its bounded column, with a filled cell beside it, wraps (it was cut)."""
    ws = _hardware_sheet(tmp_path, [(5, 0, "bidirectional_aggregate_and_more", "input_text", "input"),
                                    (5, 1, "x", "input_text", "input"),
                                    (6, 0, "runs_over_an_empty_cell_beside", "input_text", "input")],
                         fit=(0, 1, 6, 10), finish=(3, 6))
    assert ws["A6"].alignment.wrap_text and ws["A6"].font.color.rgb.endswith("0000FF")  # still an input
    assert ws.row_dimensions[6].height >= 2 * line_pt(10)
    assert not ws["A7"].alignment.wrap_text
