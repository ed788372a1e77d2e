"""Writes the workbook with xlsxwriter: catalogue tables, Plan inputs, line items, checks, Cover.

Every formula is written with the reference value as its cached result (rule 12), so viewers that
do not recalculate still show true numbers. The file is written to a temporary name and renamed
into place, so a failed build never leaves a half-written output.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xlsxwriter
from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer import printing, styles
from workbook.writer.fast_sheet import FastFormulaWorksheet
from workbook.writer.cells import CellRegistry
from workbook.writer.fit import DEFAULT_ROW_PT, DEFAULT_WIDTH, HEADER_STYLE, SheetFit, text_width, wrap_lines
from workbook.writer.numfmt import render
from workbook.writer.layout import (
    COL_KEY,
    COL_LABEL,
    COL_NOTES,
    COL_SOURCE,
    FIXED_HEADERS,
    COL_UNIT,
    HEADER_ROW,
    OPTIONAL_SHEETS,
    SHEET_ORDER,
    Layout,
    quote_sheet,
    value_col,
)

#: fixed document timestamp: the same inputs give a byte-identical file
DOC_TIME = dt.datetime(2026, 1, 1, 0, 0, 0)
PROTECT_OPTIONS = {"select_locked_cells": True, "select_unlocked_cells": True, "format_columns": True}
MAX_FROZEN_ROWS = printing.MAX_FROZEN_ROWS
TITLE_ROW_PT = 21
#: styles whose text does not widen its column: it runs over into the empty cells beside it
OVERFLOW_STYLES = ("title", "subtitle", "block")
#: a subtitle wider than the print area wraps in its cell when that takes at most this many lines (a narrow first
#: column would make it a tall row: it runs over as before)
SUBTITLE_MAX_LINES = 3
#: suffix of a style's wrapping variant
WRAP = "_wrap"
#: a chart is no narrower than this (pixels): a print area narrower than it widens to hold the chart
MIN_CHART_PX = 560
#: room a chart leaves at the print area's right edge (pixels): the chart's border stays on the page
CHART_EDGE_PX = 4


@dataclass
class Book:
    """What the builder writes, and what it learned while writing (for tests and verify)."""

    path: Path
    scenario_names: list[str]
    cells: CellRegistry = field(default_factory=CellRegistry)
    layout: Layout = field(default_factory=Layout)
    names: dict[str, str] = field(default_factory=dict)  # defined name -> reference
    #: "folder/file.yaml" -> sha256 of each YAML file the build read (import's three-way compare)
    input_hashes: dict[str, str] = field(default_factory=dict)


class Writer:
    """Thin wrapper over an xlsxwriter Workbook that records every cell's role."""

    def __init__(self, path, book: Book, optional: tuple[str, ...] = (), tmpdir: str | None = None) -> None:
        """*path*: a file name or a binary file open for writing (workbook.safe_write.atomic_file);
        *optional*: the optional sheets (layout.OPTIONAL_SHEETS) this workbook has; *tmpdir*: the folder of
        xlsxwriter's part files (default scratch_dir())."""
        self.book = book
        options = {"strings_to_formulas": False, "strings_to_numbers": False}
        scratch = tmpdir if tmpdir is not None else scratch_dir()
        if scratch is not None:
            options["tmpdir"] = scratch
        self.wb = xlsxwriter.Workbook(path if hasattr(path, "write") else str(path), options)
        self.wb.add_chart = _literal_chart_names(self.wb.add_chart)
        self.wb.set_properties({"created": DOC_TIME, "title": "AI-infrastructure planning workbook"})
        sheets = [t for t in SHEET_ORDER if t not in OPTIONAL_SHEETS or t in optional]
        self.ws: dict[str, Any] = {title: self.wb.add_worksheet(title, worksheet_class=FastFormulaWorksheet)
                                   for title in sheets}
        self._formats: dict[tuple[str, str], Any] = {}
        self._styles: dict[str, dict] = {}  # style -> its format properties (_props), read-only
        self._fit_of: dict[str, tuple] = {}  # style -> what _track records of it
        self.fit: dict[str, SheetFit] = {title: SheetFit() for title in sheets}
        #: sheet -> (header row, columns to freeze) of its table: freeze panes and print titles follow it
        self.table_header: dict[str, tuple[int, int]] = {}
        self.calc_sheets: list[str] = []  # sheets with the scenario columns
        self.cached: dict[str, dict[int, float]] = {}  # quantity -> {scenario: cached value} (charts)

    def fmt(self, style: str, num_format: str | None = None):
        key = (style, num_format or "")
        if key not in self._formats:
            self._formats[key] = self.wb.add_format(self._props(style, num_format))
        return self._formats[key]

    @staticmethod
    def _props(style: str, num_format: str | None = None) -> dict:
        """The format of *style*; ``<style>_wrap`` is *style* with its text wrapping in the cell."""
        props = dict(styles.BASE)
        base = style[:-len(WRAP)] if style.endswith(WRAP) and style not in styles.STYLES else style
        props.update(styles.STYLES[base])
        if base != style:
            props["text_wrap"] = True
        if num_format:
            props["num_format"] = num_format
        return props

    def _style(self, style: str) -> dict:
        """``_props(style)``, worked out once per style (do not change it)."""
        p = self._styles.get(style)
        if p is None:
            p = self._styles[style] = self._props(style)
        return p

    def _track(self, sheet: str, row: int, col: int, text: str, style: str, plain: bool = False) -> None:
        """Remember what a cell shows, to size its column and row when the sheet is finished."""
        if not text:
            return  # SheetFit.add keeps only text
        f = self._fit_of.get(style)
        if f is None:
            p = self._style(style)
            f = self._fit_of[style] = (int(p["font_size"]), bool(p.get("bold")), bool(p.get("text_wrap")),
                                       style not in OVERFLOW_STYLES, 2 if style == "header" else 1, not p.get("align"))
        size, bold, wrap, sizes, lines, unaligned = f
        self.fit[sheet].add(row, col, text, size, bold, wrap, sizes=sizes, lines=lines, style=style,
                            plain=plain and unaligned)

    # -- cells ---------------------------------------------------------------------------------
    def text(self, sheet: str, row: int, col: int, value: str, style: str = "text", role: str = "text", key: str = "") -> None:
        text = "" if value is None else str(value)
        self.ws[sheet].write_string(row, col, text, self.fmt(style))
        self.book.cells.add(sheet, row, col, role, key, content=text)
        self._track(sheet, row, col, text, style, plain=True)

    def number(self, sheet: str, row: int, col: int, value: float, style: str, role: str, key: str = "",
               num_format: str | None = None, scenario: int | None = None) -> None:
        self.ws[sheet].write_number(row, col, float(value), self.fmt(style, num_format))
        self.book.cells.add(sheet, row, col, role, key, scenario, content=repr(float(value)))
        self._track(sheet, row, col, render(num_format or "General", float(value)), style)

    def blank(self, sheet: str, row: int, col: int, style: str, role: str, key: str = "",
              num_format: str | None = None) -> None:
        self.ws[sheet].write_blank(row, col, None, self.fmt(style, num_format))
        self.book.cells.add(sheet, row, col, role, key)

    def formula(self, sheet: str, row: int, col: int, formula: str, cached: Any, role: str, key: str = "",
                num_format: str | None = None, scenario: int | None = None, style: str | None = None,
                room: str | None = None) -> None:
        """A formula cell with its cached value; *room* is the longest text it may show after an edit (the row is
        sized for it too, so a recalculated status line is not cut by a height fitted to today's short text)."""
        style = style or ("link" if role == "link" else ("check" if role == "check" else "calc"))
        if isinstance(cached, bool):
            cached = 1 if cached else 0
        if isinstance(cached, str) and not self._style(style).get("text_wrap"):
            style += WRAP  # a text result (a status line) wraps in its column: beside a filled cell it would be cut
        self.ws[sheet].write_formula(row, col, formula, self.fmt(style, num_format), cached)
        self.book.cells.add(sheet, row, col, role, key, scenario, content=formula,
                            cached=repr(float(cached)) if isinstance(cached, (int, float)) else str(cached))
        shown = render(num_format or "General", float(cached)) if isinstance(cached, (int, float)) else str(cached)
        if key and scenario is not None and isinstance(cached, (int, float)):
            self.cached.setdefault(key, {})[scenario] = float(cached)
        self._track(sheet, row, col, shown, style)
        if room:
            self._track(sheet, row, col, room, style)

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

    def fit_columns(self, sheet: str, first: int, last: int, lo: float, hi: float) -> None:
        """Columns first..last get the width of their content, between *lo* and *hi* (text wraps)."""
        self.fit[sheet].bound(first, last, lo, hi)

    def set_table_header(self, sheet: str, header_row: int, freeze_cols: int) -> None:
        """The sheet's table header: it stays in view (and is repeated on printed pages)."""
        self.table_header.setdefault(sheet, (header_row, freeze_cols))

    def calc_header(self, sheet: str, scenario_names: list[str]) -> None:
        ws = self.ws[sheet]
        for col, head in enumerate(FIXED_HEADERS):
            self.text(sheet, HEADER_ROW, col, head, "header", "header")
        if sheet != "Plan":  # Plan's header row holds the name inputs; every other header follows them
            for i, name in enumerate(scenario_names):
                ref = xl_rowcol_to_cell(HEADER_ROW, value_col(i))
                self.formula(sheet, HEADER_ROW, value_col(i), f"=Plan!{ref}", name, "link", key="name", style="header")
        self.fit_columns(sheet, COL_LABEL, COL_LABEL, 30, 50)
        self.fit_columns(sheet, COL_UNIT, COL_UNIT, 7, 13)
        self.fit_columns(sheet, COL_NOTES, COL_NOTES, 8, 30)
        self.fit_columns(sheet, COL_SOURCE, COL_SOURCE, 8, 14)
        self.fit_columns(sheet, COL_KEY, COL_KEY, 10, 34)
        self.fit_columns(sheet, value_col(0), value_col(len(scenario_names) - 1), 12, 17)
        ws.set_column(COL_KEY, COL_KEY, 26, None, {"level": 1, "hidden": True})
        ws.set_column(value_col(0), value_col(0), 16, None, {"collapsed": True})  # the outline button of Key
        self.set_table_header(sheet, HEADER_ROW, value_col(0))
        self.calc_sheets.append(sheet)

    def finish_sheet(self, sheet: str, last_col: int, last_row: int, landscape: bool = True) -> None:
        """Size columns and rows, freeze the table header, set up printing, protect the sheet."""
        ws = self.ws[sheet]
        ws.protect("", PROTECT_OPTIONS)
        fit = self.fit[sheet]
        widths = fit.widths()
        same = [c for c in widths if c >= value_col(0)] if sheet in self.calc_sheets else []
        for c in same:  # scenario columns alike
            widths[c] = max(widths[x] for x in same)
        for col, width in sorted(widths.items()):
            _set_width(ws, col, width)
        last_col = _fit_charts(ws, max(last_col, 1))
        wide = printing.pages_wide([_file_width(ws, c) for c in range(last_col + 1)], landscape) > 1
        if wide:  # a page right of the first prints column A alone: its titles fit it (up to its bound) or wrap
            runs = [c for c in fit.cells if c.col == 0 and c.style in ("title", "block") and not c.wrap]
            floor = min(max((text_width(c.text, c.size, c.bold) for c in runs), default=0.0),
                        fit.bounds.get(0, (0.0, 0.0))[1])
            if _width(ws, 0) < floor:
                _set_width(ws, 0, math.ceil(floor * 10) / 10)
            for c in runs:
                if text_width(c.text, c.size, c.bold) > _width(ws, 0):
                    ws.write_string(c.row, c.col, c.text, self.fmt(c.style + WRAP))
                    c.wrap = True
        for c in fit.boxed_in("block"):  # a block title with a neighbour cannot run over: it wraps
            ws.write_string(c.row, c.col, c.text, self.fmt("block_wrap"))
            c.wrap = True
        for c in fit.cut(lambda col: _width(ws, col), last_col, OVERFLOW_STYLES):
            if c.plain and not _hidden(ws, c.col):  # a one-line text its neighbour (or the page's edge) would cut
                ws.write_string(c.row, c.col, c.text, self.fmt(c.style + WRAP))
                c.wrap = True
        for c in _past_print_area(fit, ws, last_col, "subtitle", wide):  # it would be cut in print: it wraps
            ws.write_string(c.row, c.col, c.text, self.fmt("subtitle_wrap"))
            c.wrap = True
        if wide:  # one too long to wrap in column A moves right of it: the pages right of the first leave it out
            for c in fit.cells:
                if c.style == "subtitle" and c.col == 0 and not c.wrap and \
                        text_width(c.text, c.size, c.bold) > _width(ws, 0) and (c.row, 1) not in fit.taken():
                    self._move(sheet, c, 1)
        last_col = _room_for_subtitle(fit, ws, last_col)
        heights = fit.heights(lambda c: _width(ws, c))
        heights[0] = max(heights.get(0, 0), TITLE_ROW_PT)
        for row, pt in sorted(heights.items()):
            ws.set_row(row, pt)
        header = self.table_header.get(sheet)
        title_rows = (0, 1)
        if header is not None:
            row, cols = header
            near = row < MAX_FROZEN_ROWS
            ws.freeze_panes(row + 1 if near else 0, cols)
            title_rows = (0, row) if near else title_rows
        printed = [_file_width(ws, c) for c in range(last_col + 1)]
        one_wide = printing.pages_wide(printed, landscape) == 1  # else the page model does not hold: a break each
        _keep_subtables(ws, fit, heights, last_row, printing.body_pt(printed, landscape) if one_wide else 0.0,
                        sum(heights.get(r, DEFAULT_ROW_PT) for r in range(title_rows[0], title_rows[1] + 1)))
        printing.apply(ws, last_row, last_col, printed, title_rows, (0, 0) if header else None, landscape)

    def _move(self, sheet: str, c, col: int) -> None:
        """Move the text cell of fit record *c* to column *col* of its row (same style, same registry entry)."""
        ws = self.ws[sheet]
        cell = ws.table[c.row].pop(c.col)
        ws.write_string(c.row, col, c.text, cell.format)
        reg = self.book.cells.cells
        i = next(i for i, r in enumerate(reg) if (r.sheet, r.row, r.col) == (sheet, c.row, c.col))
        reg[i] = dataclasses.replace(reg[i], col=col)
        c.col = col

    def close(self) -> None:
        self.wb.close()


def _literal_chart_names(add_chart):
    """*add_chart* whose charts keep every title, axis and series name as literal text. xlsxwriter reads a name
    that looks like ``Sheet!A1`` (``^=?[^!]+!$?[A-Z]+$?\\d+``) as a cell reference and writes it into a formula
    element; a scenario name such as ``plan!B2 rev`` is text, never a reference (a [sheet, row, col] list still
    is one)."""
    from xlsxwriter.chart import Chart

    def literal(chart, name, name_formula):
        if isinstance(name, list):
            return Chart._process_names(chart, name, name_formula)
        return name, name_formula

    def add(options):
        chart = add_chart(options)
        if chart is not None:
            chart._process_names = types.MethodType(literal, chart)
        return chart

    return add


#: a memory-backed folder for xlsxwriter's part files (it writes each sheet's XML to a temporary file, then zips
#: them): on disk, writing and deleting them is a fifth of the build's wall time
RAM_DIR = Path("/dev/shm")
#: room the memory-backed folder must have free to be used (the tenfold workbook's parts are 21 MB)
RAM_DIR_MIN_FREE = 512 << 20


def scratch_dir() -> str | None:
    """RAM_DIR when it is a writable folder with RAM_DIR_MIN_FREE bytes free, else None (the system's temporary
    folder). The file is the same either way: xlsxwriter stamps every part with one date and the mode mkstemp
    gives it."""
    try:
        st = os.statvfs(RAM_DIR)
    except OSError:
        return None
    if st.f_bavail * st.f_frsize < RAM_DIR_MIN_FREE or not os.access(RAM_DIR, os.W_OK | os.X_OK):
        return None
    return str(RAM_DIR)


def _width(ws, col: int) -> float:
    """A column's width in characters (xlsxwriter keeps pixels: 7 per character plus 5 padding)."""
    info = ws.col_info.get(col)
    if info is None or info.width is None:
        return DEFAULT_WIDTH
    px = info.width
    return (px - 5) / 7 if px > 12 else px / 12


def _past_print_area(fit: SheetFit, ws, last_col: int, style: str, wide: bool = False) -> list:
    """Cells of *style* whose text, run over the cells to its right, would reach past *last_col* (the print area's
    last column: the printed page cuts it there) and that their own column holds in SUBTITLE_MAX_LINES lines; on
    a sheet printed more than one page wide (*wide*), one in column A wider than it that it holds in as many
    lines (a page right of the first prints column A alone, and cuts the text at its edge)."""
    out = []
    for c in fit.cells:
        if c.style != style or c.wrap:
            continue
        if wide and c.col == 0:
            if text_width(c.text, c.size, c.bold) > _width(ws, 0) and \
                    wrap_lines(c.text, _width(ws, 0), c.size, c.bold) <= SUBTITLE_MAX_LINES:
                out.append(c)
            continue
        printed = sum(_width(ws, col) for col in range(c.col, max(last_col, 1) + 1))
        if text_width(c.text, c.size, c.bold) > printed and \
                wrap_lines(c.text, _width(ws, c.col), c.size, c.bold) <= SUBTITLE_MAX_LINES:
            out.append(c)
    return out


def _room_for_subtitle(fit: SheetFit, ws, last_col: int) -> int:
    """The print area's last column, moved right until a one-line subtitle (one its narrow column would wrap onto
    more than SUBTITLE_MAX_LINES lines) ends inside it."""
    for c in fit.cells:
        if c.style == "subtitle" and not c.wrap:
            while sum(_width(ws, col) for col in range(c.col, last_col + 1)) < text_width(c.text, c.size, c.bold):
                last_col += 1
    return last_col


def _subtables(fit: SheetFit) -> list[tuple[int, int, int]]:
    """(first row, header row, last row) of every table below the sheet's first one that has its own header row
    (the serving plans compared, a TCO by year, a second catalogue): first is its title row, or the header when
    the title shares its row; last is the row before the next empty one."""
    heads = sorted({c.row for c in fit.cells if c.style == HEADER_STYLE})
    titles = {c.row for c in fit.cells if c.col == 0 and c.style in ("block", "block_wrap")}
    filled = {c.row for c in fit.cells}
    later = [r for r, prev in zip(heads[1:], heads) if r > prev + 1]  # a header of several rows counts once
    out = []
    for r in later:
        last = r
        while last + 1 in filled:
            last += 1
        out.append((r - 1 if r - 1 in titles else r, r, last))
    return out


def _keep_subtables(ws, fit: SheetFit, heights: dict[int, float], last_row: int, body: float,
                    repeated: float) -> None:
    """A page break before every table of :func:`_subtables` that would otherwise start on one page and go on over
    the next, its rows under the sheet's repeated header instead of its own: the whole table prints on one page
    when it fits one, else its title, header and first two rows do (pages modelled by printing.page_starts; *body*
    0: no model, a break before each, as on a sheet printed more than one page wide, which LibreOffice zooms
    past the model)."""
    breaks = set(ws.hbreaks)
    rows = [heights.get(r, DEFAULT_ROW_PT) for r in range(last_row + 1)]
    for first, head, last in _subtables(fit):
        whole = sum(rows[first:last + 1]) <= body - repeated
        end = min(last if whole else head + 2, last_row)
        starts = printing.page_starts(rows, body, repeated, sorted(breaks)) if body else []
        page = lambda r: sum(1 for s in starts if s <= r)  # noqa: E731
        if not body or (page(first) != page(end) and first not in starts):
            breaks.add(first)
    if breaks != set(ws.hbreaks):
        ws.set_h_pagebreaks(sorted(breaks))


def _hidden(ws, col: int) -> bool:
    info = ws.col_info.get(col)
    return bool(info is not None and info.hidden)


def _px(ws, col: int) -> int:
    """A column's width in pixels as xlsxwriter places drawings over it (hidden: 0)."""
    info = ws.col_info.get(col)
    if info is None or info.width is None:
        return ws.default_col_width
    return 0 if info.hidden else info.width


def _fit_charts(ws, last_col: int) -> int:
    """Make every chart end inside the print area (the printed page cuts a chart at the print area's last
    column); a chart that would be narrower than MIN_CHART_PX keeps that width and the print area widens to
    hold it. Returns the print area's last column."""
    for row, col, chart, x_offset, *_ in ws.charts:
        room = sum(_px(ws, c) for c in range(col, last_col + 1)) - x_offset - CHART_EDGE_PX
        if chart.width > room:
            chart.width = max(room, MIN_CHART_PX)
        while sum(_px(ws, c) for c in range(col, last_col + 1)) - x_offset - CHART_EDGE_PX < chart.width:
            last_col += 1
    return last_col


def _file_width(ws, col: int) -> float:
    """A column's width as the file stores it (pixels / 7; 0 when hidden), for the print scale."""
    info = ws.col_info.get(col)
    if info is None or info.width is None:
        return printing.DEFAULT_FILE_WIDTH
    return 0.0 if info.hidden else info.width / 7


def _set_width(ws, col: int, width: float) -> None:
    """Set a column's width and keep its other options (outline level, hidden, collapsed)."""
    info = ws.col_info.get(col)
    options = {} if info is None else {"hidden": info.hidden, "level": info.level, "collapsed": info.collapsed}
    ws.set_column(col, col, width, None if info is None else info.column_format, options)


__all__ = ["Book", "Writer"]
