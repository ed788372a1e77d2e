"""Read a workbook for the formulas engine: cell values, formula cells and defined names.

The file is read with the reader ``formulas`` itself uses (``formulas.excel.
xlreader``, openpyxl underneath, dates kept as serial numbers), and values are
prepared the way ``formulas.ExcelModel`` prepares them: floats rounded to 15
decimals, error cells turned into ``XlError`` values, text never parsed as a
formula. Cached values of formula cells are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from openpyxl.worksheet.formula import ArrayFormula, DataTableFormula

from .formulas_refs import Rect, col_index

_A1 = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]+)(?::\$?([A-Za-z]{1,3})\$?([0-9]+))?$")


@dataclass
class FormulaCell:
    """A formula anchored at (row, col); ``out`` is the range it fills (array formulas)."""

    sheet: int
    row: int
    col: int
    text: str
    out: Rect


@dataclass
class Book:
    titles: list[str]
    values: list[dict[tuple[int, int], object]]  # per sheet: (row, col) -> constant value
    formulas: list[FormulaCell]
    wanted: dict[str, list[str]]  # sheet title -> formula cell coordinates, in file order
    names: dict[str, str] = field(default_factory=dict)  # NAME -> definition (global)
    local_names: dict[tuple[int, str], str] = field(default_factory=dict)  # (sheet, NAME) -> definition
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def sheet_index(self, title: str) -> int | None:
        """Index of the sheet called ``title`` (case-insensitive), or None."""
        if len(self._index) != len(self.titles):
            self._index = {t.upper(): i for i, t in enumerate(self.titles)}
        return self._index.get(title.upper())


def parse_rect(ref: str) -> Rect:
    """``"B1:B3"`` / ``"$A$1"`` -> (r1, c1, r2, c2)."""
    m = _A1.match(ref)
    if m is None:
        raise ValueError(f"not an A1 reference: {ref!r}")
    c1, r1 = col_index(m.group(1)), int(m.group(2))
    c2, r2 = (col_index(m.group(3)), int(m.group(4))) if m.group(3) else (c1, r1)
    return min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)


def _constant(cell) -> object:
    from formulas.tokens.operand import Error

    v = cell.value
    if cell.data_type == "n" and isinstance(v, float):
        return round(v, 15)
    if cell.data_type == "e" and isinstance(v, str):
        return Error.errors.get(v.strip().upper(), v)
    return v


def load_book(path: Path | str) -> Book:
    """Read ``path``; raises whatever openpyxl raises for an unreadable file."""
    from formulas.excel.xlreader import load_workbook
    from openpyxl.utils.cell import get_column_letter

    wb = load_workbook(str(path), data_only=False)
    book = Book(titles=[ws.title for ws in wb.worksheets], values=[], formulas=[], wanted={})
    for i, ws in enumerate(wb.worksheets):
        values: dict[tuple[int, int], object] = {}
        array_cells: set[tuple[int, int]] = set()
        coords: list[str] = []
        for (row, col), cell in sorted(ws._cells.items()):
            v = cell.value
            if isinstance(v, ArrayFormula):
                out = parse_rect(v.ref or cell.coordinate)
                text = v.text or ""
                book.formulas.append(FormulaCell(i, row, col, text[1:] if text.startswith("==") else text, out))
                for r in range(out[0], out[2] + 1):
                    for c in range(out[1], out[3] + 1):
                        array_cells.add((r, c))
                        coords.append(f"{get_column_letter(c)}{r}")
            elif isinstance(v, DataTableFormula):
                coords.append(cell.coordinate)  # not evaluated: reported as None
            elif cell.data_type == "f" and isinstance(v, str) and len(v) > 1:
                text = v[1:] if v.startswith("==") else v
                book.formulas.append(FormulaCell(i, row, col, text, (row, col, row, col)))
                coords.append(cell.coordinate)
            elif v is not None:
                if isinstance(v, str) and v.startswith("=") and len(v) > 1:
                    coords.append(cell.coordinate)  # text that looks like a formula
                values[(row, col)] = _constant(cell)
        for rc in array_cells:
            values.pop(rc, None)  # cached values inside an array formula's range
        seen: set[str] = set()
        book.wanted[ws.title] = [c for c in coords if not (c in seen or seen.add(c))]
        book.values.append(values)
        for name, dn in ws.defined_names.items():
            book.local_names[(i, name.upper())] = dn.attr_text
    for name, dn in wb.defined_names.items():
        if dn.localSheetId is None:
            book.names[name.upper()] = dn.attr_text
        else:
            book.local_names[(int(dn.localSheetId), name.upper())] = dn.attr_text
    return book
