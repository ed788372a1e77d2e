"""The Changelog sheet: what changed in the catalogue since the previous build in the same folder (GPUs, models,
efficiency records and defaults added or removed, values and sources changed, old -> new), and the edits a
``--keep-edits`` build carried over from a person's workbook. The sheet exists only when there is something to
say, so that the same inputs still give a byte-identical file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbook.writer.catalog_sheets import DEFAULTS_SHEET, EFFICIENCY_SHEET, GPU_SHEET, MODEL_SHEET, table_fields
from workbook.writer.catalog_sheets import _cell_value
from workbook.writer.layout import HEADER_ROW

CHANGELOG_SHEET = "Changelog"
TABLES = (GPU_SHEET, EFFICIENCY_SHEET, MODEL_SHEET)
HEADERS = ("Change", "Sheet", "Record", "Field", "Old", "New")
WIDTHS = (16, 12, 22, 30, 30, 30)
DEFAULT_FIELDS = {2: "unit", 3: "source", 5: "value", 6: "as_of"}  # 1-based columns; the key is in 4

View = dict[tuple[str, str], dict[str, str]]


@dataclass(frozen=True)
class LogRow:
    change: str  # added | removed | changed | kept edit
    sheet: str
    record: str
    field: str = ""
    old: str = ""
    new: str = ""


def _content(v: Any) -> str:
    v = _cell_value(v)
    if v is None:
        return ""
    if isinstance(v, (int, float)):
        return repr(float(v))
    return str(v)


def catalogue_view(catalog, models: list) -> View:
    """{(sheet, record id): {field: content as the build writes it}} of a catalogue (and the models it shows)."""
    view: View = {}
    for sheet, records in ((GPU_SHEET, list(catalog.gpus.values())), (EFFICIENCY_SHEET, list(catalog.efficiency.values())),
                           (MODEL_SHEET, models)):
        fields = table_fields(records)
        for rec in records:
            values = {f: _content(getattr(rec, f)) for f in fields}
            view[(sheet, values[fields[0]])] = {f: v for f, v in values.items() if f != fields[0]}
    for key, rec in catalog.defaults.records.items():
        view[(DEFAULTS_SHEET, key)] = {"value": _content(rec.value), "unit": rec.unit, "source": rec.source,
                                       "as_of": rec.as_of.isoformat()}
    return view


def record_view(record: dict) -> View:
    """The same view read from a workbook's Manifest record (what that build wrote)."""
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string  # not imported by a first build

    headers: dict[tuple[str, int], tuple[int, str]] = {}
    cells: dict[tuple[str, int], dict[int, str]] = {}
    for sheet, coord, role, _key, content, _ in record["cells"]:
        if sheet not in TABLES + (DEFAULTS_SHEET,):
            continue
        letters, row = coordinate_from_string(coord)
        col = column_index_from_string(letters)
        if role == "header":
            headers.setdefault((sheet, col), (row, content))
        else:
            cells.setdefault((sheet, row), {})[col] = content
    view: View = {}
    for (sheet, row), by_col in sorted(cells.items()):
        if sheet == DEFAULTS_SHEET:
            key = by_col.get(4, "")
            if key and headers.get((sheet, 4), (row,))[0] < row:
                view[(sheet, key)] = {name: by_col.get(col, "") for col, name in DEFAULT_FIELDS.items()}
            continue
        rid = by_col.get(1, "")
        if not rid or headers.get((sheet, 1), (row,))[0] >= row:
            continue
        view[(sheet, rid)] = {headers[(sheet, c)][1]: v for c, v in by_col.items() if c != 1 and (sheet, c) in headers}
    return view


def diff(old: View, new: View) -> list[LogRow]:
    out = []
    for sheet, rid in sorted(set(old) | set(new), key=lambda k: (TABLES + (DEFAULTS_SHEET,)).index(k[0])):
        if (sheet, rid) not in old:
            out.append(LogRow("added", sheet, rid))
        elif (sheet, rid) not in new:
            out.append(LogRow("removed", sheet, rid))
        else:
            a, b = old[(sheet, rid)], new[(sheet, rid)]
            for field in [f for f in b if f in a] + [f for f in a if f not in b]:
                if a.get(field, "") != b.get(field, ""):
                    out.append(LogRow("changed", sheet, rid, field, _short(a.get(field, "")), _short(b.get(field, ""))))
            out += [LogRow("changed", sheet, rid, f, "", _short(b[f])) for f in b if f not in a and b[f]]
    return out


def _short(text: str) -> str:
    try:
        v = float(text)
    except ValueError:
        return text
    return f"{v:g}"


def write_changelog(w, rows: list[LogRow], against: str) -> int:
    """Write the Changelog sheet; return its last row (0-based)."""
    sheet = CHANGELOG_SHEET
    w.title(sheet, "Changelog", f"Catalogue changes since the previous build ({against}), and edits kept from a "
            "person's workbook (--keep-edits).")
    for col, (head, width) in enumerate(zip(HEADERS, WIDTHS)):
        w.text(sheet, HEADER_ROW, col, head, "header", "header")
        w.ws[sheet].set_column(col, col, width)
    w.set_table_header(sheet, HEADER_ROW, 0)
    row = HEADER_ROW
    for r in rows:
        row += 1
        for col, value in enumerate((r.change, r.sheet, r.record, r.field, r.old, r.new)):
            if value:
                w.text(sheet, row, col, value, "text", "text")
    return row
