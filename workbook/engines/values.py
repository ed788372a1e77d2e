"""Shared helpers: which cells hold formulas, and how values are normalised.

Both engines report results in the same shape::

    {(sheet title, "A1"): value}

where ``value`` is a ``float`` for numbers (ints and numpy scalars included),
``bool`` for booleans, ``str`` for text, and an Excel error string such as
``"#DIV/0!"`` for error values. Dates come back from LibreOffice as
``datetime`` (it applies a date format to DATE() results by itself); they are
turned into Excel serial numbers, which is what the formulas engine returns.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from pathlib import Path



class EngineError(RuntimeError):
    """An engine is missing, failed, or could not read a workbook."""


CellKey = tuple[str, str]
Values = dict[CellKey, object]

#: Error values Excel (and LibreOffice's OOXML export) can store in a cell.
ERROR_STRINGS: frozenset[str] = frozenset(
    {
        "#NULL!",
        "#DIV/0!",
        "#VALUE!",
        "#REF!",
        "#NAME?",
        "#NUM!",
        "#N/A",
        "#GETTING_DATA",
        "#SPILL!",
        "#CALC!",
        "#FIELD!",
        "#BLOCKED!",
        "#CONNECT!",
        "#UNKNOWN!",
        "#BUSY!",
        "#PYTHON!",
    }
)


def is_error(value: object) -> bool:
    """True if ``value`` is one of the Excel error strings."""
    return isinstance(value, str) and value in ERROR_STRINGS


def formula_cells(path: Path | str) -> dict[str, list[str]]:
    """Map each sheet title to the coordinates of its formula cells, in file order.

    Reads the file with openpyxl (formulas, not cached values). Plain formulas
    are strings starting with ``=``; array and dynamic-array formulas are
    ``ArrayFormula`` objects, and every cell of their ``ref`` range counts as a
    formula cell (only the anchor carries the ``<f>`` element).
    """
    import openpyxl
    from openpyxl.utils.cell import range_boundaries, get_column_letter
    from openpyxl.worksheet.formula import ArrayFormula, DataTableFormula

    result: dict[str, list[str]] = {}
    wb = openpyxl.load_workbook(Path(path), read_only=True, data_only=False)
    try:
        for ws in wb.worksheets:
            coords: list[str] = []
            seen: set[str] = set()
            for row in ws.iter_rows():
                for cell in row:
                    v = cell.value
                    if isinstance(v, str):
                        if v.startswith("=") and len(v) > 1:
                            if cell.coordinate not in seen:
                                seen.add(cell.coordinate)
                                coords.append(cell.coordinate)
                    elif isinstance(v, ArrayFormula):
                        min_col, min_row, max_col, max_row = range_boundaries(
                            v.ref or cell.coordinate
                        )
                        for r in range(min_row, max_row + 1):
                            for c in range(min_col, max_col + 1):
                                coord = f"{get_column_letter(c)}{r}"
                                if coord not in seen:
                                    seen.add(coord)
                                    coords.append(coord)
                    elif isinstance(v, DataTableFormula):
                        if cell.coordinate not in seen:
                            seen.add(cell.coordinate)
                            coords.append(cell.coordinate)
            result[ws.title] = coords
    finally:
        wb.close()
    return result


def normalize(value: object) -> object:
    """Turn an engine's raw cell value into float / bool / str / error string / None."""
    if value is None:
        return None
    # bool first: bool is a subclass of int, and numpy.bool_ is not.
    if isinstance(value, bool):
        return value
    try:  # numpy scalars, without importing numpy when it is not needed
        import numpy as np
    except ImportError:  # pragma: no cover - numpy comes with formulas/pandas
        np = None
    if np is not None:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.generic):
            value = value.item()
            if isinstance(value, bool):
                return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, _dt.datetime | _dt.date | _dt.time | _dt.timedelta):
        from openpyxl.utils.datetime import to_excel

        return float(to_excel(value))
    if isinstance(value, str):
        return str(value)  # also strips str subclasses (formulas' XlError tokens)
    return value


def read_values(path: Path | str, wanted: Mapping[str, Iterable[str]]) -> Values:
    """Read the stored (cached) values of ``wanted`` cells with openpyxl ``data_only``.

    ``wanted`` maps sheet titles to coordinates. Error cells come back as
    their error strings. A formula cell without a stored value (LibreOffice
    writes an empty-string result that way) is reported as ``""``. A sheet that
    is missing from the file yields ``"#MISSING_SHEET"`` for its cells.
    """
    import openpyxl

    out: Values = {}
    wb = openpyxl.load_workbook(Path(path), read_only=True, data_only=True)
    try:
        titles = set(wb.sheetnames)
        for sheet, coords in wanted.items():
            coords = list(coords)
            if not coords:
                continue
            if sheet not in titles:
                for coord in coords:
                    out[(sheet, coord)] = "#MISSING_SHEET"
                continue
            want = set(coords)
            got: dict[str, object] = {}
            for row in wb[sheet].iter_rows():
                for cell in row:
                    coord = getattr(cell, "coordinate", None)
                    if coord in want:
                        got[coord] = cell.value
            for coord in coords:
                v = normalize(got.get(coord))
                out[(sheet, coord)] = "" if v is None else v
    finally:
        wb.close()
    return out
