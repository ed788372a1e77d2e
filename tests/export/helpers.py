"""Reading a PDF back for the export tests (poppler-utils)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from workbook.writer.printing import MARGINS_IN

_PAGE = re.compile(r'<page width="([\d.]+)"')
#: a word box of ``pdftotext -bbox``: left, top, right, text
_WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>')
#: glyph bounding boxes and rounding: the right-aligned footer ends within a tenth of a point of the margin
EDGE_PT = 1.0


def words_past_right_margin(pdf: Path) -> list[tuple[int, str, float]]:
    """(page, word, right edge in pt) of every word that ends past the right margin: text the page clips."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    out, page, limit = [], 0, 0.0
    for line in xml.splitlines():
        m = _PAGE.search(line)
        if m:
            page, limit = page + 1, float(m.group(1)) - MARGINS_IN["right"] * 72 + EDGE_PT
        w = _WORD.search(line)
        if w and float(w.group(3)) > limit:
            out.append((page, w.group(5), float(w.group(3))))
    return out


def page_footers(pdf: Path) -> list[list[str]]:
    """The words of each page's footer line (those on the baseline of its "Page x of y"), left to right; a chart
    clipped at a page's foot may leave text near the footer in the text layer, but not on its baseline."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    pages = []
    for page in xml.split("<page ")[1:]:
        words = [(float(m.group(1)), float(m.group(2)), m.group(5)) for m in _WORD.finditer(page)]
        marks = [y for (_, y, t), nxt in zip(words, words[1:]) if t == "Page" and nxt[2].isdigit()]
        y = max(marks)
        pages.append([t for _, wy, t in sorted(w for w in words if abs(w[1] - y) < 0.5)])
    return pages


_SHEET_TAG = re.compile(r'<sheet name="([^"]*)" sheetId="\d+"(?: state="\w+")? r:id="(rId\d+)"')
_REL = re.compile(r'<Relationship Id="(rId\d+)" Type="[^"]*" Target="([^"]*)"')
_ANCHOR_TO = re.compile(r"<xdr:to><xdr:col>(\d+)</xdr:col><xdr:colOff>(\d+)</xdr:colOff>")
_AREA = re.compile(r'<definedName name="_xlnm\.Print_Area" localSheetId="(\d+)">[^<]*?\$([A-Z]+)\$\d+</definedName>')


def _col_index(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def charts_past_print_area(xlsx: Path) -> list[tuple[str, int, int]]:
    """(sheet, chart's last column, print area's last column; 0-based) of every chart that ends to the right of
    its sheet's print area: the printed page cuts it there."""
    import zipfile

    with zipfile.ZipFile(xlsx) as z:
        book = z.read("xl/workbook.xml").decode()
        rels = dict(_REL.findall(z.read("xl/_rels/workbook.xml.rels").decode()))
        last = {int(i): _col_index(c) for i, c in _AREA.findall(book)}
        out = []
        for i, (name, rid) in enumerate(_SHEET_TAG.findall(book)):
            sheet = "xl/" + rels[rid]
            sheet_rels = sheet.replace("worksheets/", "worksheets/_rels/") + ".rels"
            if sheet_rels not in z.namelist():
                continue
            for target in dict(_REL.findall(z.read(sheet_rels).decode())).values():
                if "drawings/" not in target:
                    continue
                drawing = z.read("xl/drawings/" + target.rsplit("/", 1)[1]).decode()
                for col, off in _ANCHOR_TO.findall(drawing):
                    end = int(col) - (1 if int(off) == 0 else 0)  # ends at the left edge of col: inside col - 1
                    if end > last[i]:
                        out.append((name, end, last[i]))
        return out


#: where a cell's text may wrap: at a space, after a hyphen or slash
_TOKEN = re.compile(r"\s+|(?<=[\-/])")
_XML_ESC = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'"}


def _tokens(text: str) -> list[str]:
    for esc, ch in _XML_ESC.items():
        text = text.replace(esc, ch)
    return [t for t in _TOKEN.split(text) if t]


def _pieced(word: str, pieces: set[str]) -> bool:
    """True when *word* is a run of printed words (a word too long for its line breaks inside it)."""
    ok = [True] + [False] * len(word)
    for i in range(len(word)):
        if ok[i]:
            for j in range(i + 1, len(word) + 1):
                if word[i:j] in pieces:
                    ok[j] = True
    return ok[-1]


def texts_cut(xlsx: Path, pdf: Path) -> list[tuple[str, str, str, str]]:
    """(sheet, cell, text, first word missing) of every visible text cell of the printed sheets some word of which
    the PDF does not show: the cell's edge cut it (a neighbour's text or the print area's edge). The PDF holds
    the recalculated values; the workbook's cached texts are the same (``workbook verify``)."""
    import openpyxl
    from openpyxl.utils import range_boundaries

    wb = openpyxl.load_workbook(xlsx, data_only=True)
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    printed: dict[str, set[str]] = {}
    for page, footer in zip(xml.split("<page ")[1:], page_footers(pdf)):
        line = f" {' '.join(footer)} "  # the footer names the sheet
        sheet = max((t for t in wb.sheetnames if f" {t} " in line), key=len)
        printed.setdefault(sheet, set()).update(t for m in _WORD.finditer(page) for t in _tokens(m.group(5)))
    out = []
    for ws in wb.worksheets:
        if ws.title not in printed:
            continue
        got = printed[ws.title]
        hidden_cols = {c for d in ws.column_dimensions.values() if d.hidden for c in range(d.min, d.max + 1)}
        hidden_rows = {r for r, d in ws.row_dimensions.items() if d.hidden}
        area = ws.print_area if isinstance(ws.print_area, str) else ws.print_area[0]
        c0, r0, c1, r1 = range_boundaries(area.split("!")[-1])
        for row in ws.iter_rows(min_row=r0, max_row=r1, min_col=c0, max_col=c1):
            for c in row:
                if not isinstance(c.value, str) or c.column in hidden_cols or c.row in hidden_rows:
                    continue
                missing = [t for t in _tokens(c.value) if t not in got and not _pieced(t, got)]
                if missing:
                    out.append((ws.title, c.coordinate, c.value, missing[0]))
    return out


#: a table of at most this many rows prints on one page
SHORT_TABLE_ROWS = 15


def tables_split(xlsx: Path, pdf: Path) -> list[tuple[str, str, str]]:
    """(sheet, table title, first row) of every table below a sheet's first (a row of header cells further down,
    the title above it or beside it) whose title and first two rows (and last row, for a short table) print on
    different pages: its rows then go on under the sheet's repeated header, not their own."""
    import openpyxl
    from openpyxl.utils import range_boundaries

    from workbook.writer.styles import HEADER_FILL

    wb = openpyxl.load_workbook(xlsx)
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    pages: list[tuple[str, str]] = []  # (sheet, the page's words joined)
    for page, footer in zip(xml.split("<page ")[1:], page_footers(pdf)):
        line = f" {' '.join(footer)} "
        sheet = max((t for t in wb.sheetnames if f" {t} " in line), key=len)
        pages.append((sheet, " ".join(m.group(5) for m in _WORD.finditer(page))))
    out = []
    for ws in wb.worksheets:
        mine = [text for sheet, text in pages if sheet == ws.title]
        if not mine:
            continue
        def head(c) -> bool:
            return c.value is not None and str(c.fill.fgColor.rgb or "").endswith(HEADER_FILL[1:])

        # only what prints: a plan Cover's rows below its one-page ask are on screen only
        area = ws.print_area if isinstance(ws.print_area, str) else (ws.print_area or [None])[0]
        last_printed = range_boundaries(area.split(",")[-1].split("!")[-1])[3] if area else ws.max_row
        heads = [r for r in range(1, min(ws.max_row, last_printed) + 1) if any(head(c) for c in ws[r])]
        for r, prev in zip(heads[1:], heads):
            if r == prev + 1:
                continue
            title = ws.cell(r - 1 if head(ws.cell(r, 1)) else r, 1).value
            last = r
            while isinstance(ws.cell(last + 1, 1).value, str):
                last += 1
            body = [ws.cell(r + i, 1).value for i in (1, 2)]  # its first two rows, and its last if it is short
            body += [ws.cell(last, 1).value] if last - r <= SHORT_TABLE_ROWS else []
            if not isinstance(title, str) or not all(isinstance(b, str) for b in body):
                continue
            words = lambda t: " ".join(t.split()[:3])  # noqa: E731
            if not any(words(title) in text and all(words(b) in text.split(words(title), 1)[1] for b in body)
                       for text in mine):
                out.append((ws.title, title, body[0]))
    return out


def words_overlapping(pdf: Path) -> list[tuple[int, str, str]]:
    """(page, word, word) of every two words on a line whose boxes overlap: text printed over text (a chart's
    data labels over each other or over its axis labels)."""
    xml = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    out = []
    for n, page in enumerate(xml.split("<page ")[1:], 1):
        words = sorted((float(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)), m.group(5))
                       for m in _WORD.finditer(page))
        for i, a in enumerate(words):
            for b in words[i + 1:]:
                if b[0] >= a[2] - 0.5:  # sorted by left edge: no later word reaches back over a
                    break
                if min(a[3], b[3]) - max(a[1], b[1]) > 0.5 * min(a[3] - a[1], b[3] - b[1]):
                    out.append((n, a[4], b[4]))
    return out


def sheet_of_each_page(pdf: Path, sheets) -> list[str]:
    """The sheet each page of *pdf* prints (the one of *sheets* its footer names), page by page."""
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")
    out = []
    for page in pages:
        foot = [ln for ln in page.splitlines() if "Page " in ln and " of " in ln][-1]
        out.append(max((s for s in sheets if f" {s} " in foot), key=len))
    return out
