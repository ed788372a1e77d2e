"""Compare a workbook with its Manifest record: inputs changed, formulas overwritten, altered or deleted, cells
typed into calculation areas, rows or columns moved, sheets renamed, removed or added, catalogue rows added,
error values. (Values against the reference: workbook/audit/stored.py.)"""

from __future__ import annotations

import math
import re
from collections import defaultdict

from openpyxl.utils.cell import coordinate_from_string, column_index_from_string

from workbook.audit.findings import Finding
from workbook.writer.layout import DATA_SHEETS, MANIFEST_SHEET
from workbook.writer.manifest import decode

ERROR_VALUES = ("#NAME?", "#VALUE!", "#REF!", "#DIV/0!", "#N/A", "#NUM!", "#NULL!", "Err:")
#: catalogue tables: a new row there is an addition to the catalogue, not a stray cell
TABLE_SHEETS = tuple(s for s in DATA_SHEETS if s not in ("Constants", "Defaults"))
_PREFIX = re.compile(r"_xl(?:fn|ws)\.", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def read_record(wb) -> dict:
    """The Manifest record of an openpyxl workbook (ValueError when it has none)."""
    if MANIFEST_SHEET not in wb.sheetnames:
        raise ValueError("no Manifest sheet: the file was not written by this tool, or the sheet was removed")
    ws = wb[MANIFEST_SHEET]
    parts = [str(row[4] or "") for row in ws.iter_rows(values_only=True)
             if len(row) > 4 and str(row[0] or "").startswith("record ")]
    if not parts:
        raise ValueError("the Manifest sheet holds no record")
    return decode(parts)


def normal_formula(text: str) -> str:
    """A formula as compared: no leading '=', no _xlfn. prefixes, no spaces, upper case."""
    return _SPACE.sub("", _PREFIX.sub("", text.lstrip("="))).upper()


def _shown(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def same_value(written: str, value) -> bool:
    """Is the file's *value* what the build wrote (``repr(float)``, text, or "" for a blank)?"""
    if value is None or value == "":
        return written == ""
    if isinstance(value, bool):
        value = float(value)
    if isinstance(value, (int, float)):
        try:
            w = float(written)
        except ValueError:
            return False
        return math.isclose(w, float(value), rel_tol=1e-12, abs_tol=0.0)
    return str(value) == written


def _labels(record: dict) -> tuple[dict, dict]:
    """{(sheet, row): column-A text} and {(sheet, col): [(row, header text)]} from the record."""
    col_a, headers = {}, defaultdict(list)
    for sheet, coord, role, _key, content, _cached in record["cells"]:
        letters, row = coordinate_from_string(coord)
        col = column_index_from_string(letters)
        if col == 1 and role in ("label", "text", "input"):
            col_a[(sheet, row)] = content
        if role == "header":
            headers[(sheet, col)].append((row, content))
    return col_a, headers


def _label(sheet: str, row: int, col: int, col_a: dict, headers: dict, wb) -> str:
    above = [h for r, h in headers.get((sheet, col), []) if r < row]
    first = wb[sheet].cell(row, 1).value if sheet in wb.sheetnames else None
    if sheet in TABLE_SHEETS and above:
        return f"{above[-1]} of {first}"
    return str(col_a.get((sheet, row)) or first or "")


def _sheets(record: dict, wb) -> tuple[list[Finding], dict[str, str]]:
    """Sheet findings and {recorded name: name in the file} for the sheets still there."""
    want = [s for s in record["sheets"] if s != MANIFEST_SHEET]
    have = [s for s in wb.sheetnames if s != MANIFEST_SHEET]
    out, where = [], {s: s for s in want if s in have}
    gone = [s for s in want if s not in have]
    new = [s for s in have if s not in want]
    for s in list(gone):
        pos = want.index(s)
        cand = [n for n in new if have.index(n) == pos - sum(1 for g in gone if want.index(g) < pos and g != s)]
        if cand:
            out.append(Finding("sheet_renamed", s, "", old=s, new=cand[0]))
            where[s] = cand[0]
            new.remove(cand[0])
            gone.remove(s)
    out += [Finding("sheet_removed", s, "") for s in gone]
    out += [Finding("sheet_added", s, "") for s in new]
    return out, where


def _moved(record: dict, wb, where: dict[str, str]) -> tuple[list[Finding], set[str]]:
    """Rows/columns inserted or deleted, found from the Key column; the sheets where that happened."""
    out, moved = [], set()
    for sheet, coord, role, key, content, _ in record["cells"]:
        if role != "key" or sheet in moved or sheet not in where:
            continue
        ws = wb[where[sheet]]
        letters, row = coordinate_from_string(coord)
        col = column_index_from_string(letters)
        if ws.cell(row, col).value == content:
            continue
        found = next(((r, c) for r in range(max(1, row - 200), row + 201) for c in range(max(1, col - 3), col + 4)
                      if ws.cell(r, c).value == content), None)
        if found is None:
            desc = f"key {content!r} is no longer in column {letters}"
        elif found[1] != col:
            desc = f"columns inserted or deleted: key {content!r} moved from {coord} to column {found[1]}"
        else:
            desc = f"rows inserted or deleted: key {content!r} moved from row {row} to row {found[0]}"
        out.append(Finding("rows_moved", where[sheet], coord, label=desc))
        moved.add(sheet)
    return out, moved


def _spare_rows(record: dict) -> set[tuple[str, int]]:
    """(sheet, row) of the catalogue tables' empty rows: every input the build wrote there was blank."""
    filled: dict[tuple[str, int], bool] = defaultdict(bool)
    for sheet, coord, role, _key, content, _ in record["cells"]:
        if sheet in TABLE_SHEETS and role == "input":
            filled[(sheet, coordinate_from_string(coord)[1])] |= content != ""
    return {k for k, v in filled.items() if not v}


def compare_with_record(wb, values_wb, record: dict) -> list[Finding]:
    """Every edit and problem of *wb* (formulas) and *values_wb* (cached values) against *record*."""
    findings, where = _sheets(record, wb)
    moved_findings, moved = _moved(record, wb, where)
    findings += moved_findings
    col_a, headers = _labels(record)
    spare, added = _spare_rows(record), set()
    written: dict[str, set[str]] = defaultdict(set)
    for sheet, coord, role, key, content, _cached in record["cells"]:
        written[sheet].add(coord)
        if sheet not in where or sheet in moved:
            continue
        cell = wb[where[sheet]][coord]
        value = cell.value
        letters, row = coordinate_from_string(coord)
        label = _label(sheet, row, column_index_from_string(letters), col_a, headers, wb)
        f = dict(sheet=where[sheet], cell=coord, label=label)
        if content.startswith("="):
            if value is None or value == "":
                findings.append(Finding("formula_deleted", old=content, **f))
            elif not (isinstance(value, str) and value.startswith("=")):
                findings.append(Finding("formula_overwritten", old=content, new=_shown(value), **f))
            elif normal_formula(value) != normal_formula(content):
                findings.append(Finding("formula_altered", old=content, new=value, **f))
        elif role in ("input", "constant") and not same_value(content, value):
            if (sheet, row) in spare:  # a row typed into a table's empty rows: one added record
                if (sheet, row) not in added:
                    added.add((sheet, row))
                    findings.append(Finding("catalogue_row_added", where[sheet], f"A{row}", label=f"row {row}",
                                            new=_shown(wb[where[sheet]].cell(row, 1).value)))
                continue
            kind = "input_changed" if role == "input" else "constant_changed"
            findings.append(Finding(kind, old=content if not _is_float(content) else _shown(float(content)),
                                    new=_shown(value), **f))
    findings += _added(wb, record, where, moved, written)
    findings += _errors(values_wb)
    return findings


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _added(wb, record: dict, where: dict[str, str], moved: set[str], written: dict[str, set[str]]) -> list[Finding]:
    out, rows_added = [], set()
    for sheet, name in where.items():
        if sheet in moved:
            continue
        for row in wb[name].iter_rows():
            for c in row:
                if c.value is None or c.value == "" or c.coordinate in written[sheet]:
                    continue
                if sheet in TABLE_SHEETS:
                    if (sheet, c.row) not in rows_added:
                        rows_added.add((sheet, c.row))
                        out.append(Finding("catalogue_row_added", name, f"A{c.row}",
                                           label=f"row {c.row}", new=_shown(wb[name].cell(c.row, 1).value)))
                else:
                    out.append(Finding("cell_added", name, c.coordinate, label=_shown(wb[name].cell(c.row, 1).value),
                                       new=_shown(c.value)))
    return out


def _errors(values_wb) -> list[Finding]:
    out = []
    for ws in values_wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith(ERROR_VALUES):
                    out.append(Finding("error_value", ws.title, c.coordinate,
                                       label=_shown(ws.cell(c.row, 1).value), new=c.value))
    return out
