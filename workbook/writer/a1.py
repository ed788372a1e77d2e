"""A1 cell names without xlsxwriter's per-call column arithmetic: the build names about 100,000 cells.

:func:`cell` returns what ``xlsxwriter.utility.xl_rowcol_to_cell`` returns for a row and column >= 0 (the
column letters are worked out once per column and kept); :func:`quote_sheet` is ``layout.quote_sheet``, kept
per sheet title.
"""

from __future__ import annotations

import re

from xlsxwriter.utility import xl_col_to_name, xl_rowcol_to_cell

_COLS: dict[int, str] = {}
_QUOTED: dict[str, str] = {}
_NEEDS_QUOTES = re.compile(r"[^A-Za-z0-9_]")


def col_name(col: int) -> str:
    """Column letters of 0-based *col* (``xl_col_to_name``)."""
    name = _COLS.get(col)
    if name is None:
        name = xl_col_to_name(col)
        if col >= 0:
            _COLS[col] = name
    return name


def cell(row: int, col: int, row_abs: bool = False, col_abs: bool = False) -> str:
    """``xl_rowcol_to_cell(row, col, row_abs, col_abs)``."""
    if row < 0 or col < 0:
        return xl_rowcol_to_cell(row, col, row_abs, col_abs)  # its warning and ""
    name = _COLS.get(col)
    if name is None:
        name = col_name(col)
    if row_abs or col_abs:
        return ("$" if col_abs else "") + name + ("$" if row_abs else "") + str(row + 1)
    return name + str(row + 1)


def quote_sheet(title: str) -> str:
    """A sheet title as a formula refers to it: in single quotes when it has anything but letters, digits, _."""
    quoted = _QUOTED.get(title)
    if quoted is None:
        quoted = _QUOTED[title] = f"'{title}'" if _NEEDS_QUOTES.search(title) else title
    return quoted
