"""The checkable rules of workbook-rules.md, each a function ``(wb) -> [violation, ...]``.

``wb`` is an openpyxl workbook loaded with formulas (data_only=False). An empty list means the
rule holds. Tests run them over the built file and over files broken on purpose.
"""

from __future__ import annotations

import re

from openpyxl.formula import Tokenizer
from openpyxl.utils.cell import range_boundaries
from openpyxl.formula.tokenizer import Token
from openpyxl.formula.translate import Translator

from workbook.writer.layout import (CALC_SHEETS, OUTPUT_SHEETS, COL_KEY, COL_LABEL, COL_SOURCE, COL_UNIT, FIRST_VALUE_COL, FIXED_HEADERS, HEADER_ROW,
                                    SHEET_ORDER)
from workbook.writer import printing
from workbook.writer.input_guard import GUARD_PATTERN

ALLOWED_FUNCTIONS = {
    "SUM", "AVERAGE", "MAX", "MIN", "ROUND", "ROUNDUP", "ROUNDDOWN", "CEILING", "FLOOR", "INT", "TRUNC",
    "MOD", "ABS", "SQRT", "POWER", "EXP", "LN", "LOG", "LOG10", "SUMPRODUCT", "SUMIF", "SUMIFS", "COUNTIF",
    "COUNTIFS", "AVERAGEIF", "COUNT", "LARGE", "SMALL", "PRODUCT", "MROUND", "COUNTA", "COUNTBLANK", "MEDIAN",
    "IF", "AND", "OR", "NOT", "IFERROR", "CHOOSE", "ISNUMBER", "ISBLANK", "ISERROR", "ISNA", "ISTEXT", "NA",
    "INDEX", "MATCH", "VLOOKUP", "HLOOKUP", "LOOKUP", "ROW", "COLUMN", "ROWS", "COLUMNS",
    "CONCATENATE", "LEFT", "RIGHT", "MID", "LEN", "UPPER", "SUBSTITUTE", "VALUE", "FIND", "SEARCH", "REPT",
    "EXACT", "FIXED",
    "DATE", "YEAR", "MONTH",  # the Cash Flow sheet's months (Excel, LibreOffice, Gnumeric and formulas alike)
}
MAX_FORMULA_LEN = 300
_REF = re.compile(r"^(?:(?P<sheet>'[^']+'|[A-Za-z0-9_]+)!)?\$?(?P<col>[A-Z]{1,3})\$?(?P<row>\d+)(?::\$?[A-Z]{1,3}\$?\d+)?$")


def formula_cells(wb):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("="):
                    yield ws, c


def _tokens(formula: str):
    return Tokenizer(formula).items


def no_literals(wb) -> list[str]:
    """Rule 1: no numbers in formulas except 0, 1 (and -1)."""
    out = []
    for ws, c in formula_cells(wb):
        for t in _tokens(c.value):
            if t.type == Token.OPERAND and t.subtype == Token.NUMBER and t.value not in ("0", "1"):
                out.append(f"{ws.title}!{c.coordinate}: literal {t.value} in {c.value}")
    return out


def _guard_closes_last(tokens) -> bool:
    """The formula's first function (the input-error guard's IF) closes at its last token: the guard wraps it all."""
    depth = 0
    for k, t in enumerate(tokens):
        if t.type == Token.FUNC and t.subtype == Token.OPEN:
            depth += 1
        elif t.type == Token.FUNC and t.subtype == Token.CLOSE:
            depth -= 1
            if depth == 0:
                return k == len(tokens) - 1
    return False


def allowed_functions(wb) -> list[str]:
    """Rule 7: only the cross-engine allow-list; no nested IF. Exempt: exactly the input-error guard,
    ``=IF(<flag cell>>0,"input error",<formula>)`` around a whole formula (workbook/writer/input_guard.py): its IF
    is not counted, an IF inside <formula> still is, and an IF in <formula> nested in another is a violation."""
    out = []
    for ws, c in formula_cells(wb):
        tokens = _tokens(c.value)
        guarded = GUARD_PATTERN.match(c.value) is not None and _guard_closes_last(tokens)
        depth_if = -1 if guarded else 0
        stack = []
        for t in tokens:
            if t.type == Token.FUNC and t.subtype == Token.OPEN:
                name = t.value[:-1].upper()
                if name not in ALLOWED_FUNCTIONS:
                    out.append(f"{ws.title}!{c.coordinate}: function {name} not allowed")
                if name == "IF":
                    depth_if += 1
                    if depth_if > 1:
                        out.append(f"{ws.title}!{c.coordinate}: nested IF")
                stack.append(name)
            elif t.type == Token.FUNC and t.subtype == Token.CLOSE:
                if stack and stack.pop() == "IF":
                    depth_if -= 1
            elif t.type == Token.OPERAND and t.subtype == Token.RANGE and "[" in t.value:
                out.append(f"{ws.title}!{c.coordinate}: structured/external reference {t.value}")
    return out


def short_formulas(wb) -> list[str]:
    """Rule 8: formulas stay short."""
    return [f"{ws.title}!{c.coordinate}: {len(c.value)} characters" for ws, c in formula_cells(wb)
            if len(c.value) > MAX_FORMULA_LEN]


def formulas_locked_sheets_protected(wb) -> list[str]:
    """Rule 4."""
    out = [f"{ws.title}: not protected" for ws in wb.worksheets if not ws.protection.sheet]
    out += [f"{ws.title}!{c.coordinate}: formula not locked" for ws, c in formula_cells(wb) if not c.protection.locked]
    return out


def one_formula_per_row(wb) -> list[str]:
    """Rule 5: each scenario cell is the first scenario cell's formula shifted."""
    out = []
    for title in CALC_SHEETS:
        ws = wb[title]
        for row in ws.iter_rows(min_row=HEADER_ROW + 2, min_col=FIRST_VALUE_COL + 1):
            first = row[0]
            if not (isinstance(first.value, str) and first.value.startswith("=")):
                continue
            for c in row[1:]:
                if c.value is None:
                    continue
                want = Translator(first.value, origin=first.coordinate).translate_formula(c.coordinate)
                if c.value != want:
                    out.append(f"{title}!{c.coordinate}: {c.value} is not {first.coordinate} shifted ({want})")
    return out


def labels_units_sources(wb) -> list[str]:
    """Rules 6 and 14: same columns everywhere; every line item has a unique label, a unit, a source."""
    out = []
    for title in CALC_SHEETS:
        ws = wb[title]
        heads = tuple(ws.cell(HEADER_ROW + 1, i + 1).value for i in range(len(FIXED_HEADERS)))
        if heads != FIXED_HEADERS:
            out.append(f"{title}: header {heads}")
        labels = set()
        for r in range(HEADER_ROW + 2, ws.max_row + 1):
            v = ws.cell(r, FIRST_VALUE_COL + 1).value
            if v is None or ws.cell(r, COL_KEY + 1).value is None:
                continue
            label, unit, source = (ws.cell(r, i + 1).value for i in (COL_LABEL, COL_UNIT, COL_SOURCE))
            if not label or not unit or not source:
                out.append(f"{title}!A{r}: label/unit/source missing")
            if label in labels:
                out.append(f"{title}!A{r}: label {label!r} repeated")
            labels.add(label)
    return out


def references_flow_forward(wb) -> list[str]:
    """Rule 9: references point to earlier sheets, or up on the same sheet (no circularity)."""
    out = []
    order = {t: i for i, t in enumerate(SHEET_ORDER)}
    for ws, c in formula_cells(wb):
        if ws.title in OUTPUT_SHEETS:
            continue  # output sheets show results of every sheet
        for t in _tokens(c.value):
            if t.type != Token.OPERAND or t.subtype != Token.RANGE:
                continue
            m = _REF.match(t.value)
            if not m:
                continue  # a defined name
            sheet = (m.group("sheet") or ws.title).strip("'")
            row = int(m.group("row"))
            if order.get(sheet, 99) > order[ws.title]:
                out.append(f"{ws.title}!{c.coordinate}: refers forward to {t.value}")
            elif sheet == ws.title and row >= c.row and ":" not in t.value:
                out.append(f"{ws.title}!{c.coordinate}: refers down to {t.value}")
    return out


def nothing_hidden(wb) -> list[str]:
    """Rule 10: no hidden sheets, rows or columns (outline groups aside), no merged cells, no external links."""
    out = [f"{ws.title}: {ws.sheet_state}" for ws in wb.worksheets if ws.sheet_state != "visible"]
    for ws in wb.worksheets:
        out += [f"{ws.title}: row {r} hidden" for r, d in ws.row_dimensions.items() if d.hidden]
        # a collapsed outline group (the Key column) is folded, not hidden: one click opens it
        out += [f"{ws.title}: column {k} hidden" for k, d in ws.column_dimensions.items()
                if d.hidden and not d.outline_level]
        out += [f"{ws.title}: merged {m}" for m in ws.merged_cells.ranges]
    if getattr(wb, "_external_links", None):
        out.append("external links present")
    return out


def defined_names_are_cells(wb) -> list[str]:
    """Rule 13: workbook-scoped names pointing at real cells (no constants, no formulas)."""
    out = []
    for ws in wb.worksheets:
        out += [f"{ws.title}: sheet-scoped name {n}" for n in ws.defined_names]
    for name, dn in wb.defined_names.items():
        dests = list(dn.destinations)
        if not dests:
            out.append(f"{name}: not a cell reference ({dn.attr_text})")
        for sheet, ref in dests:
            if sheet not in wb.sheetnames:
                out.append(f"{name}: sheet {sheet} missing")
    return out


def inputs_styled_validated(wb, inputs: list[tuple[str, str]]) -> list[str]:
    """Rule 3: every input is blue on pale yellow, unlocked and inside a data validation."""
    out = []
    validated: dict[str, set[str]] = {}
    for ws in wb.worksheets:
        cells = set()
        for dv in ws.data_validations.dataValidation:
            for rng in dv.sqref.ranges:
                for row in ws.iter_rows(min_row=rng.min_row, max_row=rng.max_row, min_col=rng.min_col, max_col=rng.max_col):
                    cells.update(c.coordinate for c in row)
        validated[ws.title] = cells
    for sheet, coord in inputs:
        c = wb[sheet][coord]
        if c.protection.locked:
            out.append(f"{sheet}!{coord}: input locked")
        if coord not in validated[sheet]:
            out.append(f"{sheet}!{coord}: input not validated")
        color = (c.font.color.rgb or "") if c.font and c.font.color else ""
        if not str(color).upper().endswith("0000FF"):
            out.append(f"{sheet}!{coord}: input font {color}")
        if not str(c.fill.fgColor.rgb).upper().endswith("FFFFCC"):
            out.append(f"{sheet}!{coord}: input fill {c.fill.fgColor.rgb}")
        if isinstance(c.value, str) and c.value.startswith("="):
            out.append(f"{sheet}!{coord}: input holds a formula")
    return out


def _file_widths(ws, last_col: int) -> list[float]:
    """Width of columns 1..last_col as the file stores them (hidden: 0)."""
    widths = [printing.DEFAULT_FILE_WIDTH] * last_col
    for d in ws.column_dimensions.values():
        for c in range(d.min or 1, min(d.max or 0, last_col) + 1):
            widths[c - 1] = 0.0 if d.hidden else (d.width if d.customWidth and d.width else printing.DEFAULT_FILE_WIDTH)
    return widths


def _table_header_row(ws) -> int | None:
    """1-based header row of a sheet's table: the calculation header, or the row under a catalogue title."""
    if ws.title in CALC_SHEETS:
        return HEADER_ROW + 1
    for row in ws.iter_rows(min_col=1, max_col=1):
        v = row[0].value
        if isinstance(v, str) and v.endswith(" catalogue"):
            return row[0].row + 1
    return None


def print_setup(wb) -> list[str]:
    """Rule 16 (layout part): every sheet prints legibly (see workbook.writer.printing).

    Print area; A4, landscape (the Cover may be portrait); fit to the page width, as many pages
    tall as it takes, and no narrower than MIN_SCALE (so wide tables print more pages across);
    title rows (title through the table header) and the label column repeated; margins; a footer
    with the file name, sheet and page fields, never a typed file name; a page header naming the currency.
    """
    out = []
    for ws in wb.worksheets:
        t = ws.title
        if not ws.print_area:
            out.append(f"{t}: no print area")
            continue
        landscape = ws.page_setup.orientation == "landscape"
        if not landscape and t != "Cover":
            out.append(f"{t}: not landscape")
        if str(ws.page_setup.paperSize) != str(printing.PAPER_A4):
            out.append(f"{t}: paper {ws.page_setup.paperSize}, not A4")
        area = ws.print_area if isinstance(ws.print_area, str) else ws.print_area[0]
        last_col = max(range_boundaries(area.split(",")[0].split("!")[-1])[2], 1)
        want = printing.pages_wide(_file_widths(ws, last_col), landscape)
        wide = int(ws.page_setup.fitToWidth if ws.page_setup.fitToWidth is not None else 1)
        if not ws.sheet_properties.pageSetUpPr or not ws.sheet_properties.pageSetUpPr.fitToPage:
            out.append(f"{t}: not fit to the page width")
        elif wide != want or int(ws.page_setup.fitToHeight if ws.page_setup.fitToHeight is not None else 1) != 0:
            out.append(f"{t}: fit to {wide} x {ws.page_setup.fitToHeight} pages, not {want} wide x any tall")
        footer = "".join(p.text or "" for p in (ws.oddFooter.left, ws.oddFooter.center, ws.oddFooter.right))
        missing = [f for f in printing.FOOTER_FIELDS if f not in footer]
        if missing:
            out.append(f"{t}: footer {footer!r} lacks {' '.join(missing)}")
        if re.search(r"\.xls[xmb]?", footer, re.I):
            out.append(f"{t}: footer types a file name ({footer!r}); use &F")
        header_text = "".join(p.text or "" for p in (ws.oddHeader.left, ws.oddHeader.center, ws.oddHeader.right))
        if printing.CURRENCY_TEXT not in header_text:
            out.append(f"{t}: page header {header_text!r} does not say {printing.CURRENCY_TEXT!r}")
        m = ws.page_margins
        if not (0.25 <= m.left <= 1.0 and 0.25 <= m.right <= 1.0 and 0.3 <= m.top <= 1.2 and 0.3 <= m.bottom <= 1.2):
            out.append(f"{t}: margins {m.left}/{m.right}/{m.top}/{m.bottom} in")
        header = _table_header_row(ws)
        rows = ws.print_title_rows or ""
        if header is not None and header <= printing.MAX_FROZEN_ROWS and rows != f"$1:${header}":
            out.append(f"{t}: repeated rows {rows!r}, not the title through the header $1:${header}")
        elif header is not None and not rows.startswith("$1:"):
            out.append(f"{t}: title rows not repeated ({rows!r})")
        if header is not None and ws.print_title_cols != "$A:$A":
            out.append(f"{t}: label column not repeated ({ws.print_title_cols!r})")
    return out


def freeze_panes(wb) -> list[str]:
    """The header row and the label (or id) column stay in view, and nothing more than a few rows is frozen.

    Calculation sheets freeze at F5 (header row and the fixed columns A-E); a catalogue table freezes
    its header row and id column when the header is near the top, else only the id column.
    """
    out = []
    for ws in wb.worksheets:
        pane = ws.sheet_view.pane
        frozen = pane is not None and (pane.state or "").startswith("frozen")
        rows = int(pane.ySplit or 0) if frozen else 0
        cols = int(pane.xSplit or 0) if frozen else 0
        if rows > printing.MAX_FROZEN_ROWS:
            out.append(f"{ws.title}: {rows} rows frozen (at most {printing.MAX_FROZEN_ROWS})")
        if ws.sheet_view.topLeftCell not in (None, "A1"):
            out.append(f"{ws.title}: opens scrolled to {ws.sheet_view.topLeftCell} (rows above are out of reach)")
        header = _table_header_row(ws)
        if header is None:
            continue
        want_cols = FIRST_VALUE_COL if ws.title in CALC_SHEETS else 1
        want_rows = header if header <= printing.MAX_FROZEN_ROWS else 0
        if (rows, cols) != (want_rows, want_cols):
            out.append(f"{ws.title}: frozen {rows} rows x {cols} columns, not {want_rows} x {want_cols}")
    return out


def no_typed_catalogue_copies(wb, set_by_scenario: set[tuple[int, str]] | None = None) -> list[str]:
    """Live links: a Plan input that the catalogue backs (Source "scenario / Defaults" or
    "scenario / Hardware") is blank unless the scenario sets it, so a number there equal to the
    catalogue value it would take is a typed copy. *set_by_scenario* ({(scenario index, key)}, from
    the scenario files) names the cells the scenario itself sets. Calculation sheets hold no typed
    numbers at all."""
    set_by_scenario = set_by_scenario or set()
    out = []
    plan = wb["Plan"]
    rows = {}
    for r in range(HEADER_ROW + 2, plan.max_row + 1):
        key, source = plan.cell(r, COL_KEY + 1).value, plan.cell(r, COL_SOURCE + 1).value
        if isinstance(key, str) and source in ("scenario / Defaults", "scenario / Hardware"):
            rows[key] = (r, source)
    defaults = _defaults(wb)
    gpus = _gpu_prices(wb)
    keys = {k: r for k, r in ((plan.cell(r, COL_KEY + 1).value, r) for r in range(1, plan.max_row + 1))
            if isinstance(k, str)}
    col = FIRST_VALUE_COL + 1
    while plan.cell(HEADER_ROW + 1, col).value not in (None, ""):
        gpu = plan.cell(keys["gpu"], col).value
        basis = plan.cell(keys["cost.price_basis"], col).value
        for key, (r, source) in rows.items():
            v = plan.cell(r, col).value
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                continue
            field = key.split(".", 1)[1]
            cat = defaults.get(field) if source == "scenario / Defaults" else gpus.get((gpu, basis))
            if cat is not None and float(v) == float(cat) and (col - FIRST_VALUE_COL - 1, key) not in set_by_scenario:
                out.append(f"Plan!{plan.cell(r, col).coordinate}: {v} typed where the catalogue gives it ({key})")
        col += 1
    for title in CALC_SHEETS[1:]:
        ws = wb[title]
        for row in ws.iter_rows(min_row=HEADER_ROW + 2, min_col=FIRST_VALUE_COL + 1):
            out += [f"{title}!{c.coordinate}: typed number {c.value}" for c in row
                    if isinstance(c.value, (int, float)) and not isinstance(c.value, bool)]
    return out


def _defaults(wb) -> dict[str, float]:
    ws = wb["Defaults"]
    return {ws.cell(r, 4).value: ws.cell(r, 5).value for r in range(1, ws.max_row + 1)
            if isinstance(ws.cell(r, 4).value, str) and isinstance(ws.cell(r, 5).value, (int, float))}


def _gpu_prices(wb) -> dict[tuple[str, str], float]:
    ws = wb["Hardware"]
    head = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "id")
    cols = {ws.cell(head, c).value: c for c in range(1, ws.max_column + 1)}
    out = {}
    for r in range(head + 1, ws.max_row + 1):
        gid = ws.cell(r, cols["id"]).value
        for basis in ("on_demand", "reserved", "spot"):
            v = ws.cell(r, cols[f"price_{basis}_usd_per_gpu_hour"]).value
            if gid and isinstance(v, (int, float)):
                out[(gid, basis)] = v
    return out


ALL_RULES = [no_literals, allowed_functions, short_formulas, formulas_locked_sheets_protected,
             one_formula_per_row, labels_units_sources, references_flow_forward, nothing_hidden,
             defined_names_are_cells, print_setup, freeze_panes]
