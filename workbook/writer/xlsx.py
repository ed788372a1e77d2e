"""Writes the workbook with xlsxwriter: catalogue tables, Plan inputs, line items, checks, Cover.

Every formula is written with the reference value as its cached result (rule 12), so viewers that
do not recalculate still show true numbers. The file is written to a temporary name and renamed
into place, so a failed build never leaves a half-written output.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xlsxwriter
from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer import styles
from workbook.writer.cells import CellRegistry
from workbook.writer.layout import (
    COL_KEY,
    COL_LABEL,
    COL_NOTES,
    COL_SOURCE,
    FIXED_HEADERS,
    COL_UNIT,
    HEADER_ROW,
    SHEET_ORDER,
    Layout,
    quote_sheet,
    value_col,
)

#: fixed document timestamp: the same inputs give a byte-identical file
DOC_TIME = dt.datetime(2026, 1, 1, 0, 0, 0)
PROTECT_OPTIONS = {"select_locked_cells": True, "select_unlocked_cells": True, "format_columns": True}


@dataclass
class Book:
    """What the builder writes, and what it learned while writing (for tests and verify)."""

    path: Path
    scenario_names: list[str]
    cells: CellRegistry = field(default_factory=CellRegistry)
    layout: Layout = field(default_factory=Layout)
    names: dict[str, str] = field(default_factory=dict)  # defined name -> reference


class Writer:
    """Thin wrapper over an xlsxwriter Workbook that records every cell's role."""

    def __init__(self, path: Path, book: Book) -> None:
        self.book = book
        self.wb = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_numbers": False})
        self.wb.set_properties({"created": DOC_TIME, "title": "AI-infrastructure planning workbook"})
        self.ws: dict[str, Any] = {title: self.wb.add_worksheet(title) for title in SHEET_ORDER}
        self._formats: dict[tuple[str, str], Any] = {}

    def fmt(self, style: str, num_format: str | None = None):
        key = (style, num_format or "")
        if key not in self._formats:
            props = dict(styles.BASE)
            props.update(styles.STYLES[style])
            if num_format:
                props["num_format"] = num_format
            self._formats[key] = self.wb.add_format(props)
        return self._formats[key]

    # -- cells ---------------------------------------------------------------------------------
    def text(self, sheet: str, row: int, col: int, value: str, style: str = "text", role: str = "text", key: str = "") -> None:
        self.ws[sheet].write_string(row, col, "" if value is None else str(value), self.fmt(style))
        self.book.cells.add(sheet, row, col, role, key)

    def number(self, sheet: str, row: int, col: int, value: float, style: str, role: str, key: str = "",
               num_format: str | None = None, scenario: int | None = None) -> None:
        self.ws[sheet].write_number(row, col, float(value), self.fmt(style, num_format))
        self.book.cells.add(sheet, row, col, role, key, scenario)

    def blank(self, sheet: str, row: int, col: int, style: str, role: str, key: str = "",
              num_format: str | None = None) -> None:
        self.ws[sheet].write_blank(row, col, None, self.fmt(style, num_format))
        self.book.cells.add(sheet, row, col, role, key)

    def formula(self, sheet: str, row: int, col: int, formula: str, cached: Any, role: str, key: str = "",
                num_format: str | None = None, scenario: int | None = None) -> None:
        style = "link" if role == "link" else ("check" if role == "check" else "calc")
        if isinstance(cached, bool):
            cached = 1 if cached else 0
        self.ws[sheet].write_formula(row, col, formula, self.fmt(style, num_format), cached)
        self.book.cells.add(sheet, row, col, role, key, scenario)

    def define(self, name: str, sheet: str, first_row: int, col: int, last_row: int | None = None) -> None:
        a = xl_rowcol_to_cell(first_row, col, row_abs=True, col_abs=True)
        ref = f"{quote_sheet(sheet)}!{a}"
        if last_row is not None and last_row != first_row:
            ref += ":" + xl_rowcol_to_cell(last_row, col, row_abs=True, col_abs=True)
        if name in self.book.names:
            raise ValueError(f"defined name {name!r} twice")
        self.book.names[name] = ref
        self.wb.define_name(name, "=" + ref)

    # -- sheet furniture -----------------------------------------------------------------------
    def title(self, sheet: str, title: str, subtitle: str) -> None:
        self.text(sheet, 0, 0, title, "title", "label")
        self.text(sheet, 1, 0, subtitle, "subtitle", "label")

    def calc_header(self, sheet: str, scenario_names: list[str]) -> None:
        ws = self.ws[sheet]
        for col, head in enumerate(FIXED_HEADERS):
            self.text(sheet, HEADER_ROW, col, head, "header", "header")
        for i, name in enumerate(scenario_names):
            self.text(sheet, HEADER_ROW, value_col(i), name, "header", "header")
        ws.set_column(COL_LABEL, COL_LABEL, 46)
        ws.set_column(COL_UNIT, COL_UNIT, 12)
        ws.set_column(COL_NOTES, COL_NOTES, 24)
        ws.set_column(COL_SOURCE, COL_SOURCE, 9)
        ws.set_column(COL_KEY, COL_KEY, 26, None, {"level": 1, "hidden": True})
        ws.set_column(value_col(0), value_col(0), 16, None, {"collapsed": True})  # the outline button of Key
        if len(scenario_names) > 1:
            ws.set_column(value_col(1), value_col(len(scenario_names) - 1), 16)
        ws.freeze_panes(HEADER_ROW + 1, value_col(0))

    def finish_sheet(self, sheet: str, last_col: int, last_row: int, landscape: bool = True) -> None:
        ws = self.ws[sheet]
        ws.protect("", PROTECT_OPTIONS)
        if landscape:
            ws.set_landscape()
        ws.set_paper(9)
        ws.fit_to_pages(1, 0)
        ws.print_area(0, 0, max(last_row, 1), max(last_col, 1))
        ws.repeat_rows(HEADER_ROW, HEADER_ROW)
        ws.set_footer(f"&L&A&C{self.book.path.name}&RPage &P of &N")

    def close(self) -> None:
        self.wb.close()


def atomic_output(path: Path):
    """A temporary path beside *path*; call the returned commit() to move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    os.close(fd)

    def commit() -> None:
        os.replace(tmp, path)

    def abort() -> None:
        if os.path.exists(tmp):
            os.unlink(tmp)

    return Path(tmp), commit, abort


__all__ = ["Book", "Writer", "atomic_output"]
