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
