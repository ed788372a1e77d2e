"""The reference route through ``formulas.ExcelModel`` (slow; kept as a fallback and for tests).

``formulas.ExcelModel().loads(path).finish().calculate()`` returns a solution
keyed like ``"'[book.xlsx]PLAN SUMMARY'!A1"`` (sheet names upper-cased, quotes
doubled inside), plus range keys (``...!A1:B3``) and defined names
(``"'[book.xlsx]'!RATE"``). This module maps single-cell keys back to the
original sheet titles and returns values for the workbook's formula cells only.

It loads a 2,300-formula workbook in about 10 s (85 s for 23,000): the
everyday route is ``formulas_eval``, which uses ExcelModel's building blocks
directly. Known limits (see /work/shared/toolchain.md): sheet-scoped names give
``#REF!``; a sheet whose name contains an apostrophe gives ``#REF!``.
"""

from __future__ import annotations

import re
from pathlib import Path

from .values import EngineError, Values, formula_cells, normalize

_REF_RE = re.compile(r"^\$?[A-Z]{1,3}\$?[0-9]+(?::\$?[A-Z]{1,3}\$?[0-9]+)?$")


def parse_key(key: str) -> tuple[str, str] | None:
    """Split a solution key into (sheet name as formulas wrote it, "A1" or "A1:B2"), or None.

    formulas 1.3.4 writes ``'[book.xlsx]SHEET'!A1``, upper-casing the sheet and
    NOT doubling apostrophes inside it. Keys that are not on a sheet (defined
    names such as ``'[book.xlsx]'!RATE``, bare errors such as ``#REF!``) give None.
    """
    key = key.strip()
    if "!" not in key:
        return None
    sheet, ref = key.rsplit("!", 1)  # sheet names may contain "!", cell refs cannot
    if not _REF_RE.match(ref):
        return None
    if len(sheet) >= 2 and sheet[0] == "'" and sheet[-1] == "'":
        sheet = sheet[1:-1]
    if sheet.startswith("["):  # "[book.xlsx]SHEET": sheet names cannot contain "]"
        sheet = sheet.rsplit("]", 1)[1] if "]" in sheet else sheet
    if not sheet:
        return None
    return sheet, ref.replace("$", "")


def cell_value(raw: object) -> object:
    """Value of a ``Ranges`` (or array) holding one cell, normalised."""
    import numpy as np
    import schedula as sh
    from formulas.tokens.operand import XlError

    v = getattr(raw, "value", raw)
    if isinstance(v, np.ndarray):
        if v.size == 0:
            return None
        v = v.ravel()[0]
    if v is sh.EMPTY:
        # A formula that yields a blank (e.g. INDEX into an empty cell):
        # Excel and LibreOffice show 0.
        return 0.0
    if isinstance(v, XlError):
        return str(v)
    return normalize(v)


def _range_values(raw: object, ref: str) -> dict[str, object]:
    """Expand a range result into {coord: value}."""
    import numpy as np
    from openpyxl.utils.cell import get_column_letter, range_boundaries

    v = getattr(raw, "value", raw)
    arr = np.asarray(v, dtype=object)
    if arr.ndim != 2:
        return {}
    min_col, min_row, max_col, max_row = range_boundaries(ref)
    out: dict[str, object] = {}
    for i in range(min(arr.shape[0], max_row - min_row + 1)):
        for j in range(min(arr.shape[1], max_col - min_col + 1)):
            out[f"{get_column_letter(min_col + j)}{min_row + i}"] = cell_value(arr[i, j])
    return out


def recalculate_model(path: Path | str, *, circular: bool = False) -> Values:
    """Recalculate ``path`` with ExcelModel; {(sheet, coord): value} for formula cells.

    A formula cell the solution does not contain is reported as None.
    """
    path = Path(path)
    wanted = formula_cells(path)
    if not any(wanted.values()):
        return {}
    import formulas

    try:
        model = formulas.ExcelModel().loads(str(path)).finish(circular=circular)
        solution = model.calculate()
    except Exception as exc:  # formulas raises many kinds (FormulaError, KeyError, ...)
        raise EngineError(
            f"formulas could not evaluate {path}: {type(exc).__name__}: {exc}"
        ) from exc

    upper_to_title = {title.upper(): title for title in wanted}
    cells: dict[tuple[str, str], object] = {}
    ranges: list[tuple[str, str, object]] = []
    for key, raw in solution.items():
        parsed = parse_key(str(key))
        if parsed is None:
            continue
        sheet_u, ref = parsed
        title = upper_to_title.get(sheet_u.upper())
        if title is None and "''" in sheet_u:  # in case a version doubles quotes
            title = upper_to_title.get(sheet_u.replace("''", "'").upper())
        if title is None:
            continue
        if ":" in ref:
            ranges.append((title, ref, raw))
        else:
            cells[(title, ref)] = raw

    out: Values = {}
    missing: dict[str, set[str]] = {}
    for title, coords in wanted.items():
        for coord in coords:
            if (title, coord) in cells:
                out[(title, coord)] = cell_value(cells[(title, coord)])
            else:
                out[(title, coord)] = None
                missing.setdefault(title, set()).add(coord)
    if missing:
        # Cells of a multi-cell array formula appear only inside a range key.
        for title, ref, raw in ranges:
            if title not in missing:
                continue
            for coord, value in _range_values(raw, ref).items():
                if coord in missing[title]:
                    out[(title, coord)] = value
    return out
