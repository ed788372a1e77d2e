"""A1 references inside formula text, and the *template key* of a formula.

Each row of a calculation sheet holds one formula copied across the scenario
columns (``=Plan!F21*Plan!F22`` in F, ``=Plan!G21*Plan!G22`` in G, ...).
:func:`scan` rewrites every relative row/column as an offset from the formula's
own cell, so the copies of one formula get the same key and can share one
compiled function. It also returns the references themselves, in text order,
so that each copy can be fed with its own cells.

The scan only *proposes* sharing: ``formulas_compile`` accepts a template only
if every reference found here matches an input of the function ``formulas``
compiled, and the other way round. Anything this regex misreads therefore
costs speed (a separate compile), never correctness.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<str>"(?:[^"]|"")*")                              # a string literal: skipped
  | (?<![\w.$!'\]\#])                                     # not inside a name / number
    (?P<sheet>(?:'(?:[^']|'')+'|(?:[^\W\d]|\\)[\w.]*)!)?  # Sheet! or 'My Sheet'!
    (?P<ref>\$?[A-Za-z]{1,3}\$?[0-9]+(?::\$?[A-Za-z]{1,3}\$?[0-9]+)?)
    (?![\w(!.:\[])                                        # not a function, name or longer range
    """,
    re.VERBOSE,
)
_CORNER = re.compile(r"(\$?)([A-Za-z]{1,3})(\$?)([0-9]+)")

Rect = tuple[int, int, int, int]  # (first row, first col, last row, last col), 1-based


@dataclass(frozen=True)
class Occurrence:
    """One reference as written in a formula."""

    text: str  # as written, e.g. "'Training Memory'!$F$10" or "F8:G9"
    sheet: str | None  # the sheet title (unquoted), None when unqualified
    rect: Rect


def col_index(letters: str) -> int:
    """Column letters -> 1-based index ("A" -> 1, "AA" -> 27)."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


def unquote_sheet(text: str) -> str:
    """``'Bob''s Sheet'`` -> ``Bob's Sheet``; unquoted names are returned as they are."""
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def scan(formula: str, row: int, col: int) -> tuple[str, list[Occurrence]]:
    """Template key of ``formula`` written in cell (row, col), and its references in order.

    In the key a relative column/row becomes ``c<offset>``/``r<offset>`` and an
    absolute one keeps its ``$`` and value: ``=F8*$B$2`` in F9 and ``=G8*$B$2``
    in G9 both give ``=\\x00c0r-1\\x00*\\x00$B$2\\x00``.
    """
    parts: list[str] = []
    occs: list[Occurrence] = []
    pos = 0
    for m in _TOKEN.finditer(formula):
        if m.group("str") is not None:
            continue
        sheet, ref = m.group("sheet"), m.group("ref")
        keyed: list[str] = []
        corners: list[tuple[int, int]] = []
        for c_abs, c_txt, r_abs, r_txt in _CORNER.findall(ref):
            c, r = col_index(c_txt), int(r_txt)
            corners.append((r, c))
            keyed.append((f"${c}" if c_abs else f"c{c - col}") + (f"${r}" if r_abs else f"r{r - row}"))
        (r1, c1), (r2, c2) = corners[0], corners[-1]
        rect = (min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2))
        sheet_title = unquote_sheet(sheet[:-1]) if sheet else None
        occs.append(Occurrence(m.group(0), sheet_title, rect))
        parts.append(formula[pos:m.start()])
        parts.append(f"\x00{sheet or ''}{':'.join(keyed)}\x00")
        pos = m.end()
    parts.append(formula[pos:])
    return "".join(parts), occs


def single_reference(text: str) -> Occurrence | None:
    """The reference if ``text`` (a defined name's definition) is exactly one reference."""
    text = text.strip()
    if text.startswith("="):
        text = text[1:]
    m = _TOKEN.fullmatch(text)
    if m is None or m.group("str") is not None:
        return None
    return scan(text, 1, 1)[1][0]


_IDENT = re.compile(r'"(?:[^"]|"")*"|(?<![\w.$!\'\]#])([A-Za-z_\\][\w.]*)(?![\w(!\[])')
#: functions whose value depends on where a reference points, not only on its values
_POSITIONAL = re.compile(r"\b(ROW|COLUMN|ROWS|COLUMNS|OFFSET|INDIRECT|CELL|ADDRESS)\s*\(", re.I)


def structure(formula: str, occs: list[Occurrence], names: set[str]) -> tuple[str, list[str]] | None:
    """The formula with every reference and defined name replaced by a placeholder, and the names
    in the order replaced; None when the formula's value may depend on where its references point.

    Rows whose formulas differ only in what they refer to (``=INDEX(cat_gpu_hbm_GB,MATCH(F6,...))``
    and ``=INDEX(cat_gpu_tdp_W,MATCH(F6,...))``) then share one compiled function: reference *i*
    becomes a cell or range of the same shape in row 1 (side by side), name *j* becomes ``_WBN<j>``.
    """
    if _POSITIONAL.search(formula):
        return None
    parts: list[str] = []
    pos, i, col = 0, 0, 1  # placeholders side by side in row 1, one empty column apart (never overlapping)
    for m in _TOKEN.finditer(formula):
        if m.group("str") is not None:
            continue
        r1, c1, r2, c2 = occs[i].rect
        last = col + c2 - c1
        ref = (f"{_col_letters(col)}1" if (r1, c1) == (r2, c2)
               else f"{_col_letters(col)}1:{_col_letters(last)}{1 + r2 - r1}")
        parts.append(formula[pos:m.start()])
        parts.append(ref)
        pos = m.end()
        i, col = i + 1, last + 2
    parts.append(formula[pos:])
    text = "".join(parts)
    found: list[str] = []

    def _name(m: re.Match) -> str:
        word = m.group(1)
        if word is None or word.upper() not in names:
            return m.group(0)
        found.append(word.upper())
        return f"_WBN{len(found)}"

    return _IDENT.sub(_name, text), found


def _col_letters(n: int) -> str:
    out = ""
    while n:
        n, rem = divmod(n - 1, 26)
        out = chr(65 + rem) + out
    return out
