"""Static Excel-compatibility lint of a written .xlsx: Excel's documented limits and grammar, and the
constructs where Excel and the engines we verify with part ways (docs/excel-compatibility.md).

Each finding names the part, the place and the rule. The rules (``RULES``) are checked on the file as
written, not on the writer's intentions, so a fault injected into a file is found like one the writer
made (tests/lint/test_excel_lint.py injects one of each).
"""

from __future__ import annotations

import math
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

from workbook.engines.formulas_refs import col_index
from workbook.sheets.excel_math import NUDGED_BASE_END, POSITIVE_EXPONENT_STARTS

#: Excel's specifications and limits (support.microsoft.com, "Excel specifications and limits")
MAX_FORMULA_CHARS = 8192
MAX_NESTING = 64
MAX_ARGS = 255
MAX_STRING_LITERAL = 255
MAX_TEXT_CELL = 32767
MAX_SHEET_NAME = 31
MAX_DV_PROMPT, MAX_DV_PROMPT_TITLE, MAX_DV_ERROR, MAX_DV_ERROR_TITLE, MAX_DV_LIST = 255, 32, 255, 32, 255

RULES = {
    "formula-length": f"a formula longer than {MAX_FORMULA_CHARS} characters",
    "nesting": f"functions nested deeper than {MAX_NESTING} levels",
    "arguments": f"a function with more than {MAX_ARGS} arguments",
    "string-literal": f"a string literal longer than {MAX_STRING_LITERAL} characters",
    "power": "a POWER, or a ^ that is neither to an exponent of at least 1 (^MAX(1,e), ^(1/MAX(1,e))) nor of the "
             "writer's nudged base (b+(b<=0))^e (Excel: 0^0 and a negative base with a fractional exponent are #NUM!)",
    "future-function": "a function newer than Excel 2010 without its _xlfn. prefix",
    "index-one-row": "INDEX of a one-row range with a single index (Gnumeric #REF!; write INDEX(r,1,k))",
    "defined-name": "a defined name that looks like a cell reference (A1 or R1C1), is not a valid name, "
                    "or collides with another ignoring case",
    "sheet-name": "a sheet name over 31 characters, with []:*?/\\, starting or ending with ', or 'History'",
    "text-cell": f"a text cell longer than {MAX_TEXT_CELL} characters",
    "data-validation": "a data-validation prompt, title, error or list over Excel's length limits",
    "number-format": "a number-format condition outside MS-OI29500's grammar (a plain or a signed-exponent number)",
    "conditional-format": "a conditional format whose type and operator Excel does not pair",
    "log-chart": "a log-scale chart series over a text, zero or negative cell",
    "non-finite": "a non-finite cached number (inf, nan)",
}

#: functions added after Excel 2010 that need the _xlfn. prefix in the file (MS-XLSX 2.2.2 Future Functions)
FUTURE_FUNCTIONS = frozenset("""
CONCAT TEXTJOIN IFS MAXIFS MINIFS SWITCH XLOOKUP XMATCH LET LAMBDA FILTER SORT SORTBY UNIQUE SEQUENCE RANDARRAY
IFNA XOR DAYS ISOWEEKNUM CEILING.MATH FLOOR.MATH STDEV.S STDEV.P VAR.S VAR.P NORM.DIST NORM.INV PERCENTILE.INC
PERCENTILE.EXC QUARTILE.INC QUARTILE.EXC RANK.EQ RANK.AVG MODE.SNGL AGGREGATE FORMULATEXT ISFORMULA SHEET SHEETS
TEXTBEFORE TEXTAFTER TEXTSPLIT VSTACK HSTACK TAKE DROP CHOOSECOLS CHOOSEROWS TOCOL TOROW WRAPROWS WRAPCOLS
""".split())

_CF_OPERATORS = {
    "cellIs": {"lessThan", "lessThanOrEqual", "equal", "notEqual", "greaterThanOrEqual", "greaterThan",
               "between", "notBetween"},
    "containsText": {"containsText"}, "notContainsText": {"notContains"},
    "beginsWith": {"beginsWith"}, "endsWith": {"endsWith"},
}
_TOKEN = re.compile(r'"(?:[^"]|"")*"|[(),]|(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_.]*)\(|\^')
_A1 = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")
_R1C1 = re.compile(r"^[Rr](\d*)[Cc](\d*)$|^[RrCc]$")
_NAME = re.compile(r"^[A-Za-z_\\][A-Za-z0-9_.\\]*$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([Ee][+-]\d+)?$")
_COND = re.compile(r"\[(?:>=|<=|<>|>|<|=)([^\]]*)\]")
_RANGE = re.compile(r"^(?:(?:'[^']+'|[A-Za-z0-9_ .]+)!)?\$?([A-Z]{1,3})\$?(\d+):\$?([A-Z]{1,3})\$?(\d+)$")
NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
      "c": "http://schemas.openxmlformats.org/drawingml/2006/chart"}


@dataclass(frozen=True)
class Finding:
    rule: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.where}: {self.detail}"


def looks_like_reference(name: str) -> bool:
    """A name Excel reads as a cell: A1 style within XFD1048576, or R1C1 style."""
    m = _A1.match(name)
    if m and col_index(m.group(1)) <= 16384 and 0 < int(m.group(2)) <= 1048576:
        return True
    return bool(_R1C1.match(name))


def lint_formula(text: str, where: str, one_row_names: frozenset[str] = frozenset()) -> list[Finding]:
    """Findings of one formula (with or without its leading '=')."""
    out: list[Finding] = []
    if len(text) > MAX_FORMULA_CHARS:
        out.append(Finding("formula-length", where, f"{len(text)} characters"))
    stack: list[list] = []  # [function name or "", argument count, first-argument text start]
    depth = 0
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith('"'):
            if len(tok) - 2 > MAX_STRING_LITERAL:
                out.append(Finding("string-literal", where, f"{len(tok) - 2} characters"))
        elif tok == "^":
            if not (text[:m.start()].endswith(NUDGED_BASE_END) or text.startswith(POSITIVE_EXPONENT_STARTS, m.end())):
                out.append(Finding("power", where, "^ of a base that can be 0"))
        elif tok == "(" or m.group(1):
            name = (m.group(1) or "").upper()
            if name:
                depth += 1
                if depth > MAX_NESTING:
                    out.append(Finding("nesting", where, f"depth {depth}"))
                if name == "POWER":
                    out.append(Finding("power", where, "POWER()"))
                if name in FUTURE_FUNCTIONS:
                    out.append(Finding("future-function", where, f"{name} without _xlfn."))
            stack.append([name, 1, m.end(), None])
        elif tok == ",":
            if stack:
                top = stack[-1]
                if top[1] == 1:
                    top[3] = text[top[2]:m.start()].strip()
                top[1] += 1
        elif tok == ")":
            if not stack:
                continue
            name, nargs, _start, first = stack.pop()
            if name:
                depth -= 1
                if nargs > MAX_ARGS:
                    out.append(Finding("arguments", where, f"{name} with {nargs} arguments"))
                if name == "INDEX" and nargs == 2 and first is not None and _one_row(first, one_row_names):
                    out.append(Finding("index-one-row", where, f"INDEX({first},...)"))
    return out


def _one_row(ref: str, one_row_names: frozenset[str]) -> bool:
    if ref in one_row_names:
        return True
    m = _RANGE.match(ref)
    return bool(m) and m.group(2) == m.group(4) and m.group(1) != m.group(3)


def lint_number_format(code: str) -> list[str]:
    """The conditions of a format code outside the grammar (e.g. ``[>=1E9]``)."""
    code = re.sub(r'"[^"]*"', "", code)
    return [c for c in _COND.findall(code) if not _NUMBER.match(c.strip())]


def lint_xlsx(path: Path | str) -> list[Finding]:
    """Every finding of the workbook at *path* (openpyxl for cells, names and validations; the raw parts
    for number formats, cached values and charts)."""
    import openpyxl

    path = Path(path)
    out: list[Finding] = []
    wb = openpyxl.load_workbook(path)
    one_row = set()
    seen: dict[str, str] = {}
    for name, dn in wb.defined_names.items():
        if looks_like_reference(name) or not _NAME.match(name):
            out.append(Finding("defined-name", name, "looks like a cell reference or is not a valid name"))
        if name.lower() in seen:
            out.append(Finding("defined-name", name, f"collides with {seen[name.lower()]} ignoring case"))
        seen[name.lower()] = name
        if _one_row(dn.attr_text or "", frozenset()):
            one_row.add(name)
    rows = frozenset(one_row)
    for ws in wb.worksheets:
        t = ws.title
        if len(t) > MAX_SHEET_NAME or re.search(r"[\[\]:*?/\\]", t) or t.startswith("'") or t.endswith("'") \
                or t.lower() == "history":
            out.append(Finding("sheet-name", t, "not a valid Excel sheet name"))
        for row in ws.iter_rows():
            for c in row:
                v = c.value
                if isinstance(v, str):
                    if v.startswith("=") and c.data_type == "f":
                        out.extend(lint_formula(v, f"{t}!{c.coordinate}", rows))
                    elif len(v) > MAX_TEXT_CELL:
                        out.append(Finding("text-cell", f"{t}!{c.coordinate}", f"{len(v)} characters"))
        for dv in ws.data_validations.dataValidation:
            where = f"{t}!{dv.sqref}"
            for text, limit, what in ((dv.prompt, MAX_DV_PROMPT, "prompt"), (dv.promptTitle, MAX_DV_PROMPT_TITLE,
                                      "prompt title"), (dv.error, MAX_DV_ERROR, "error"),
                                      (dv.errorTitle, MAX_DV_ERROR_TITLE, "error title")):
                if text and len(text) > limit:
                    out.append(Finding("data-validation", where, f"{what} of {len(text)} characters (limit {limit})"))
            if dv.type == "list" and dv.formula1 and dv.formula1.startswith('"') and len(dv.formula1) - 2 > MAX_DV_LIST:
                out.append(Finding("data-validation", where, f"list of {len(dv.formula1) - 2} characters"))
        for rng, rules in ws.conditional_formatting._cf_rules.items():
            for r in rules:
                allowed = _CF_OPERATORS.get(r.type)
                if allowed is not None and r.operator is not None and r.operator not in allowed:
                    out.append(Finding("conditional-format", f"{t}!{rng.sqref}", f"type {r.type} with operator {r.operator}"))
    wb.close()
    out.extend(_lint_parts(path))
    return out


def _lint_parts(path: Path) -> list[Finding]:
    out: list[Finding] = []
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        if "xl/styles.xml" in names:
            root = ET.fromstring(z.read("xl/styles.xml"))
            for nf in root.iter(f"{{{NS['m']}}}numFmt"):
                bad = lint_number_format(nf.get("formatCode", ""))
                if bad:
                    out.append(Finding("number-format", f"numFmt {nf.get('numFmtId')}",
                                       f"condition {bad[0]!r} in {nf.get('formatCode')!r}"))
        for name in names:
            if name.startswith("xl/worksheets/sheet") and name.endswith(".xml"):
                for m in re.finditer(rb"<v>([^<]*)</v>", z.read(name)):
                    v = m.group(1).strip().lower()
                    if v in (b"inf", b"-inf", b"nan", b"infinity", b"-infinity"):
                        out.append(Finding("non-finite", name, m.group(1).decode()))
    out.extend(_lint_log_charts(path))
    return out


def _lint_log_charts(path: Path) -> list[Finding]:
    """Series of charts with a logarithmic value axis must read positive numbers only."""
    import openpyxl

    with zipfile.ZipFile(path) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart") and n.endswith(".xml")]
        refs: list[tuple[str, str]] = []
        for name in charts:
            root = ET.fromstring(z.read(name))
            if root.find(".//c:valAx/c:scaling/c:logBase", NS) is None:
                continue
            for f in root.findall(".//c:ser/c:val/c:numRef/c:f", NS):
                refs.append((name, f.text or ""))
    if not refs:
        return []
    out: list[Finding] = []
    wb = openpyxl.load_workbook(path, data_only=True)
    for chart, ref in refs:
        sheet, _, cells = ref.rpartition("!")
        sheet = sheet.strip("'").replace("''", "'")
        if sheet not in wb.sheetnames:
            out.append(Finding("log-chart", chart, f"series {ref} on a missing sheet"))
            continue
        for row in wb[sheet][cells.replace("$", "")]:
            for c in (row if isinstance(row, tuple) else (row,)):
                v = c.value
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                    out.append(Finding("log-chart", chart, f"{sheet}!{c.coordinate} = {v!r} in series {ref}"))
    wb.close()
    return out
