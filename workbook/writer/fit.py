"""Column widths and row heights from the text a sheet holds (the file format has no autofit).

The estimates are for Calibri (LibreOffice: the metric-compatible Carlito) and err on the wide
side: a cell a little roomy reads better than a clipped one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat

DEFAULT_WIDTH = 8.43  # Excel's default column width (characters of the default font)
DEFAULT_ROW_PT = 15.0
PX_PER_UNIT, PAD_PX = 7, 5  # a column w characters wide is 7*w + 5 pixels (Calibri 11 digit width)
TEXT_MARGIN_PX = 6  # room a cell leaves around its text
BOLD = 1.07  # bold text is this much wider
#: advance widths of Calibri (em) by character; others take AVERAGE_EM
_EM = {**dict.fromkeys("il.,:;!|'", 0.24), **dict.fromkeys("jftrI()[]-/ ", 0.32), **dict.fromkeys("sczJ", 0.41),
       **dict.fromkeys("0123456789$+=#<>_aegkvxyEFLSTYZ?", 0.50), **dict.fromkeys("bdhnopquABCKPRVX", 0.55),
       **dict.fromkeys("DGHNOQU&", 0.64), **dict.fromkeys("mw%", 0.76), **dict.fromkeys("MW@", 0.88)}
AVERAGE_EM = 0.55
#: row height per line of text, by font size (points)
_LINE_PT = {9: 12.0, 10: 13.0, 11: 14.5, 14: 19.0}
#: the style of table headers: their words never break inside (a key such as hbm_device_MiB reads whole)
HEADER_STYLE = "header"
_BREAK = re.compile(r"(?<=[ \-/])")  # where Excel and LibreOffice may wrap: after a space, hyphen, slash


@lru_cache(maxsize=200_000)  # a sheet is sized from the same texts many times (a build measures ~150,000)
def text_px(text: str, size: int = 10, bold: bool = False) -> float:
    """Pixels *text* takes on one line (Calibri at 96 dpi)."""
    em = sum(map(_EM.get, text, repeat(AVERAGE_EM, len(text))))  # the characters' widths, in order
    return em * size * 96 / 72 * (BOLD if bold else 1.0)


def line_pt(size: int) -> float:
    return _LINE_PT.get(size, size * 1.35)


def text_width(text: str, size: int = 10, bold: bool = False) -> float:
    """Column width (characters) that shows *text* on one line."""
    return (text_px(text, size, bold) + TEXT_MARGIN_PX - PAD_PX) / PX_PER_UNIT + 0.3


def wrap_lines(text: str, width: float, size: int = 10, bold: bool = False) -> int:
    """Lines *text* takes when wrapped in a column *width* wide (words longer than a line break)."""
    room = max(1.0, width * PX_PER_UNIT + PAD_PX - TEXT_MARGIN_PX)
    lines = 0
    for para in str(text).split("\n"):
        used, n = 0.0, 1
        for word in _BREAK.split(para):
            w = text_px(word.rstrip(" "), size, bold)  # a trailing space may hang past the edge
            if used and used + w > room:
                n, used = n + 1, 0.0
            while w > room:  # a word longer than the line breaks inside
                n, w, used = n + 1, w - room, 0.0
            used += text_px(word, size, bold)
        lines += n
    return max(1, lines)


@dataclass
class Cell:
    row: int
    col: int
    text: str
    size: int
    bold: bool
    wrap: bool
    sizes: bool = True  # counts toward its column's width (text that overflows does not)
    lines: int = 1  # lines the text may wrap onto before it widens its column
    style: str = ""
    plain: bool = False  # a typed text (not a number or a formula's result): it may be rewritten to wrap

    def word(self) -> float:
        """Width of the text's longest word (a run without a break point): narrower, the word breaks inside."""
        return max(text_width(w.rstrip(" "), self.size, self.bold) for w in _BREAK.split(self.text))

    def need(self) -> float:
        """Narrowest width that shows the text on at most ``lines`` lines."""
        full = text_width(self.text, self.size, self.bold)
        if not self.wrap or self.lines <= 1:
            return full
        width = 2.0
        while width < full and wrap_lines(self.text, width, self.size, self.bold) > self.lines:
            width += 0.5
        return width


@dataclass
class SheetFit:
    """What a sheet holds, to size it when it is finished."""

    cells: list[Cell] = field(default_factory=list)
    bounds: dict[int, tuple[float, float]] = field(default_factory=dict)  # col -> (min, max) width

    def add(self, row: int, col: int, text: str, size: int, bold: bool, wrap: bool, sizes: bool = True,
            lines: int = 1, style: str = "", plain: bool = False) -> None:
        if text:
            self.cells.append(Cell(row, col, text, size, bold, wrap, sizes, lines, style, plain))

    def taken(self) -> set[tuple[int, int]]:
        """(row, col) of every cell with text."""
        return {(c.row, c.col) for c in self.cells}

    def boxed_in(self, style: str) -> list[Cell]:
        """Cells of *style* with text in the cell to their right (they cannot run over: they wrap)."""
        taken = {(c.row, c.col) for c in self.cells}
        return [c for c in self.cells if c.style == style and (c.row, c.col + 1) in taken]

    def cut(self, width_of, last_col: int, keep: tuple[str, ...]) -> list[Cell]:
        """One-line cells (styles not in *keep*) whose text is wider than its column and the empty cells it may
        run over, up to the next filled cell or *last_col* (the print area's edge): that edge cuts the text."""
        taken = {(c.row, c.col) for c in self.cells}
        out = []
        for c in self.cells:
            if c.wrap or c.style in keep:
                continue
            room, col = width_of(c.col), c.col + 1
            while col <= last_col and (c.row, col) not in taken:
                room, col = room + width_of(col), col + 1
            if text_width(c.text, c.size, c.bold) > room:
                out.append(c)
        return out

    def bound(self, first: int, last: int, lo: float, hi: float) -> None:
        """Columns first..last take the width of their content, between lo and hi."""
        for c in range(first, last + 1):
            old = self.bounds.get(c, (lo, hi))
            self.bounds[c] = (max(lo, old[0]), max(hi, old[1]))

    def widths(self) -> dict[int, float]:
        """Width of every bounded column: its widest content, within the column's bounds."""
        need: dict[int, float] = {}
        floor: dict[int, float] = {}  # a header's words stay whole, whatever the column's bound
        for c in self.cells:
            if c.col in self.bounds and c.sizes:
                need[c.col] = max(need.get(c.col, 0.0), c.need())
                if c.style == HEADER_STYLE:
                    floor[c.col] = max(floor.get(c.col, 0.0), c.word())
        out = {}
        for col, (lo, hi) in self.bounds.items():
            width = max(min(hi, max(lo, need.get(col, lo))), floor.get(col, 0.0))
            out[col] = math.ceil(round(width, 6) * 10) / 10  # rounded up: never narrower than its content
        return out

    def heights(self, width_of) -> dict[int, float]:
        """Row heights (points) of the rows whose text needs more than the default height."""
        out: dict[int, float] = {}
        for c in self.cells:
            lines = wrap_lines(c.text, width_of(c.col), c.size, c.bold) if c.wrap else 1
            pt = math.ceil(lines * line_pt(c.size) + 2.0)
            if pt > DEFAULT_ROW_PT and pt > out.get(c.row, 0):
                out[c.row] = pt
        return out
