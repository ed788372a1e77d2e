"""Print setup shared by every sheet: A4 landscape, fit to the page width, repeated titles, a header naming the
currency, footer.

A sheet prints one page wide unless that would shrink it below MIN_SCALE (a catalogue table with
thirty columns); then it prints as many pages wide as keep it legible, with the label (or id)
column repeated on each. workbook.audit.rules.print_setup checks the same settings.
"""

from __future__ import annotations

import math

PAPER_A4 = 9
A4_IN = (11.69, 8.27)  # landscape width, height (inches)
MARGINS_IN = {"left": 0.4, "right": 0.4, "top": 0.55, "bottom": 0.65}
HEADER_FOOTER_MARGIN_IN = 0.3
MIN_SCALE = 0.7
#: a table header further down than this is not frozen (the frozen rows would fill the window)
MAX_FROZEN_ROWS = 8
DEFAULT_FILE_WIDTH = 64 / 7  # a column without a width: Excel's 8.43 characters, 64 pixels
#: file name, sheet name and page: Excel/LibreOffice fill the fields in when printing
FOOTER = "&L&8&F&C&8&A&R&8Page &P of &N"
FOOTER_FIELDS = ("&F", "&A", "&P", "&N")
#: the currency of every figure, at the top of every printed page (issue 23)
CURRENCY_TEXT = "All money in US dollars (USD)"
HEADER = f"&C&8{CURRENCY_TEXT}"


def column_px(width: float) -> float:
    """Pixels of a column whose width in the file is *width* (Calibri 11 digits of 7 pixels)."""
    return max(0.0, width * 7)


def printable_in(landscape: bool = True) -> float:
    paper = A4_IN[0] if landscape else A4_IN[1]
    return paper - MARGINS_IN["left"] - MARGINS_IN["right"]


def pages_wide(widths: list[float], landscape: bool = True) -> int:
    """Pages across that print columns of *widths* (as in the file; hidden: 0) at MIN_SCALE or larger."""
    need_in = sum(column_px(w) for w in widths) / 96.0
    return max(1, math.ceil(need_in * MIN_SCALE / printable_in(landscape) - 1e-9))


def apply(ws, last_row: int, last_col: int, widths: list[float], title_rows: tuple[int, int] | None,
          title_cols: tuple[int, int] | None, landscape: bool = True) -> None:
    """Print area, paper, orientation, scaling, repeated titles, margins and footer of *ws*."""
    ws.print_area(0, 0, max(last_row, 1), max(last_col, 1))
    if landscape:
        ws.set_landscape()
    else:
        ws.set_portrait()
    ws.set_paper(PAPER_A4)
    ws.fit_to_pages(pages_wide(widths, landscape), 0)
    if title_rows is not None:
        ws.repeat_rows(*title_rows)
    if title_cols is not None:
        ws.repeat_columns(*title_cols)
    ws.set_margins(**MARGINS_IN)
    ws.set_header(HEADER, {"margin": HEADER_FOOTER_MARGIN_IN})
    ws.set_footer(FOOTER, {"margin": HEADER_FOOTER_MARGIN_IN})


#: LibreOffice's page model, measured on its PDF export: a column of width w (characters, as the file stores it)
#: takes 7 points of the unscaled sheet per character, and fit to width zooms to this share of the exact fit
LO_PT_PER_CHAR = 7.0
LO_ZOOM_SHARE = 0.95


def body_pt(printed_widths: list[float], landscape: bool = True) -> float:
    """Height (points, in the sheet's own scale) of the rows one printed page holds: the paper less the top and
    bottom margins, divided by the zoom that fits the columns of *printed_widths* to the pages across."""
    wide = pages_wide(printed_widths, landscape)
    need_pt = sum(printed_widths) * LO_PT_PER_CHAR
    zoom = min(1.0, LO_ZOOM_SHARE * wide * printable_in(landscape) * 72 / need_pt) if need_pt else 1.0
    paper = A4_IN[1] if landscape else A4_IN[0]
    return (paper - MARGINS_IN["top"] - MARGINS_IN["bottom"]) * 72 / zoom


def page_starts(heights: list[float], body: float, repeated: float, breaks: list[int]) -> list[int]:
    """First row (0-based) of each printed page of rows of *heights* (points): a page holds *body* points,
    *repeated* of them the repeated title rows from the second page on; *breaks*: manual breaks (a row that
    starts a page)."""
    starts, used = [0], 0.0
    for row, h in enumerate(heights):
        if row and (row in breaks or used + h > body):
            starts.append(row)
            used = repeated
        used += h
    return starts
