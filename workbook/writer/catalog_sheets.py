"""Hardware and Models sheets: the Constants block, the spec lookup tables, and the catalogue
tables (one row per GPU or model, one column per field, with source and as-of columns).

Every table column gets a workbook-scoped defined name (``gpu_<field>``, ``model_<field>``,
``c_<constant>``, ``t_<table>_<column>``) that the line items look up with INDEX/MATCH.
"""

from __future__ import annotations

from typing import Any

from workbook.units import field_unit
from workbook.writer.styles import number_format
from workbook.writer.xlsx import Writer

GPU_SHEET = "Hardware"
EFFICIENCY_SHEET = "Efficiency"
#: title of the efficiency table (readback finds the block by it)
EFFICIENCY_TITLE = "Efficiency catalogue"
ENGINES_SHEET = "Engines"
#: titles of the two engine tables (readback finds the blocks by them)
ENGINE_PROFILES_TITLE = "Engine profiles"
ENGINE_DEVICES_TITLE = "Engine devices"
MODEL_SHEET = "Models"
DEFAULTS_SHEET = "Defaults"
CONSTANTS_SHEET = "Constants"
#: empty input rows under each catalogue table: a GPU or model typed there joins the dropdowns and lookups
SPARE_ROWS = 20
#: provenance, and efficiency.yaml's compute_as (a catalogue-review tie checked at load; each GPU's row stays its own input)
META_FIELDS = ("notes", "source", "as_of", "field_sources", "compute_as")
#: catalogue text columns that wrap (long names, notes and sources)
WRAP_FIELDS = ("name", "notes", "source")
#: (min, max) width of a catalogue column by kind; numbers are narrow, their headers wrap
TABLE_WIDTHS = {"id": (6, 16), "name": (14, 24), "notes": (24, 48), "source": (24, 48), "as_of": (10, 11),
                "text": (6, 22), "number": (7, 11), "bool": (6, 9)}

#: (min, max) width of the Defaults columns: default (its note), unit, source, key, value, as of
DEFAULTS_WIDTHS = ((24, 50), (6, 14), (14, 44), (10, 30), (8, 14), (10, 11))


def table_fields(records: list[Any]) -> list[str]:
    """Field names of a catalogue table: id and name first, notes and provenance last."""
    fields = list(type(records[0]).model_fields)
    head = [f for f in ("id", "name") if f in fields]
    body = [f for f in fields if f not in head and f not in META_FIELDS]
    tail = [f for f in ("notes", "source", "as_of") if f in fields]
    return head + body + tail


def column_format(records: list[Any], f: str) -> str:
    """Number format of a catalogue column: the unit its name carries, the decimals its values need."""
    info = type(records[0]).model_fields[f]
    values = [_cell_value(getattr(r, f)) for r in records]
    return number_format(field_unit(f, info.annotation), [v for v in values if isinstance(v, (int, float))])


def _cell_value(v: Any) -> Any:
    if isinstance(v, bool):
        return 1 if v else 0
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def write_constants(w: Writer, constants: list[tuple], tables: dict, start_row: int) -> int:
    """The Constants block (label, unit, source, key, value), then the lookup tables. Returns next row."""
    sheet = CONSTANTS_SHEET
    row = start_row
    w.text(sheet, row, 0, "Constants (unit factors and spec factors; locked)", "block", "label")
    row += 1
    for col, head in enumerate(("Constant", "Unit", "Source", "Key", "Value")):
        w.text(sheet, row, col, head, "header", "header")
    row += 1
    for name, value, unit, label, source in constants:
        w.text(sheet, row, 0, label, "label", "label")
        w.text(sheet, row, 1, unit, "unit", "unit")
        w.text(sheet, row, 2, source, "source", "source")
        w.text(sheet, row, 3, f"c_{name}", "key", "key")
        w.number(sheet, row, 4, value, "constant", "constant", key=f"c_{name}", num_format=number_format(unit, [value]))
        w.define(f"c_{name}", sheet, row, 4)
        row += 1
    for tname, (key_col, rows, source) in tables.items():
        row += 1
        columns = list(rows[0][1])
        w.text(sheet, row, 0, f"Table {tname} ({source})", "block", "label")
        row += 1
        w.text(sheet, row, 3, key_col, "header", "header")
        for j, c in enumerate(columns):
            w.text(sheet, row, 4 + j, c, "header", "header")
        first = row + 1
        formats = {c: number_format("", [vals[c] for _, vals in rows]) for c in columns}
        for k, vals in rows:
            row += 1
            w.text(sheet, row, 3, k, "key", "constant", key=f"t_{tname}_{key_col}")
            for j, c in enumerate(columns):
                w.number(sheet, row, 4 + j, vals[c], "constant", "constant", key=f"t_{tname}_{c}", num_format=formats[c])
        w.define(f"t_{tname}_{key_col}", sheet, first, 3, row)
        for j, c in enumerate(columns):
            w.define(f"t_{tname}_{c}", sheet, first, 4 + j, row)
        row += 1
    for col, (lo, hi) in enumerate(((20, 40), (6, 12), (10, 22), (10, 42), (8, 20))):  # keys whole
        w.fit_columns(sheet, col, col, lo, hi)
    return row + 1


def write_table(w: Writer, sheet: str, prefix: str, title: str, records: list[Any], start_row: int) -> tuple[int, list[str]]:
    """A catalogue table of input cells. Returns the next free row and the field order."""
    fields = table_fields(records)
    ws = w.ws[sheet]
    row = start_row
    w.text(sheet, row, 0, title, "block", "label")
    row += 1
    for col, f in enumerate(fields):
        w.text(sheet, row, col, f, "header", "header")
    w.set_table_header(sheet, row, 1)
    first = row + 1
    kinds = {f: _column_kind(records, f) for f in fields}
    formats = {f: column_format(records, f) for f in fields if kinds[f] in ("number", "bool")}
    for rec in records:
        row += 1
        for col, f in enumerate(fields):
            v = _cell_value(getattr(rec, f))
            if f in ("id", "source", "as_of") or isinstance(v, str):
                if f == "id":
                    w.text(sheet, row, col, v, "text", "text", key=f"{prefix}_{f}")
                else:
                    style = "input_wrap" if f in WRAP_FIELDS else "input_text"
                    w.text(sheet, row, col, v, style, "input", key=f"{prefix}_{f}")
            elif v is None:
                style = "input_flag" if kinds[f] == "bool" else "input"
                w.blank(sheet, row, col, style, "input", key=f"{prefix}_{f}", num_format=formats.get(f))
            else:
                style = "input_flag" if kinds[f] == "bool" else "input"
                w.number(sheet, row, col, v, style, "input", key=f"{prefix}_{f}", num_format=formats.get(f))
    for _ in range(SPARE_ROWS):  # room to grow: unlocked, validated, inside every defined name
        row += 1
        for col, f in enumerate(fields):
            style = "input_wrap" if f in WRAP_FIELDS else ("input_text" if kinds[f] == "text" or f in ("id", "as_of")
                                                         else "input")
            w.blank(sheet, row, col, style, "input", key=f"{prefix}_{f}", num_format=formats.get(f))
    last = row
    for col, f in enumerate(fields):
        w.fit_columns(sheet, col, col, *TABLE_WIDTHS.get(f, TABLE_WIDTHS[kinds[f]]))
        w.define(f"cat_{prefix}_{f}", sheet, first, col, last)
        kind = kinds[f]
        if kind == "number":
            ws.data_validation(first, col, last, col, _number_validation(type(records[0]), f))
        elif kind == "bool":
            ws.data_validation(first, col, last, col, {
                "validate": "integer", "criteria": "between", "minimum": 0, "maximum": 1,
                "error_title": "Catalogue flag", "error_message": f"{f}: 1 (yes) or 0 (no)",
            })
        else:
            ws.data_validation(first, col, last, col, {"validate": "length", "criteria": "<=", "value": 500})
    return last + 2, fields


def _number_validation(cls, f: str) -> dict:
    """Data validation of a numeric catalogue column from the pydantic bounds (gt 0: strictly positive)."""
    import annotated_types as at

    lo, hi, strict = 0.0, None, False
    for meta in cls.model_fields[f].metadata:
        if isinstance(meta, at.Gt):
            lo, strict = float(meta.gt), True
        elif isinstance(meta, at.Ge):
            lo = float(meta.ge)
        elif isinstance(meta, (at.Le, at.Lt)):
            hi = float(getattr(meta, "le", getattr(meta, "lt", None)))
    if strict or hi is None:
        words = f"a number {'above' if strict else 'at least'} {lo:g}"
        return {"validate": "decimal", "criteria": ">" if strict else ">=", "value": lo,
                "error_title": "Catalogue value", "error_message": f"{f}: {words}"}
    return {"validate": "decimal", "criteria": "between", "minimum": lo, "maximum": hi,
            "error_title": "Catalogue value", "error_message": f"{f}: a number from {lo:g} to {hi:g}"}


def _column_kind(records: list[Any], f: str) -> str:
    values = [getattr(r, f) for r in records if getattr(r, f) is not None]
    if values and all(isinstance(v, bool) for v in values):
        return "bool"
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "number"
    return "text"


def write_defaults(w: Writer, defaults, start_row: int) -> int:
    """The catalogue defaults (inputs), each a defined name ``d_<key>``. Returns the next free row."""
    sheet = DEFAULTS_SHEET
    row = start_row
    w.text(sheet, row, 0, "Defaults (catalog/defaults.yaml; scenario inputs left empty take these)", "block", "label")
    row += 1
    for col, head in enumerate(("Default", "Unit", "Source", "Key", "Value", "As of")):
        w.text(sheet, row, col, head, "header", "header")
    w.set_table_header(sheet, row, 1)  # in view and on every printed page
    first = row + 1
    for key, rec in sorted(defaults.records.items()):
        row += 1
        w.text(sheet, row, 0, rec.notes or key.replace("_", " "), "label", "label")  # whole: it wraps
        w.text(sheet, row, 1, rec.unit, "unit", "unit")
        w.text(sheet, row, 2, rec.source, "source", "source")
        w.text(sheet, row, 3, key, "key", "key")
        w.number(sheet, row, 4, rec.value, "input", "input", key=f"d_{key}", num_format=number_format(rec.unit, [rec.value]))
        w.text(sheet, row, 5, rec.as_of.isoformat(), "source", "source")
        w.define(f"d_{key}", sheet, row, 4)
    for col, (lo, hi) in enumerate(DEFAULTS_WIDTHS):
        w.fit_columns(sheet, col, col, lo, hi)
    w.ws[sheet].data_validation(first, 4, row, 4, {
        "validate": "decimal", "criteria": ">=", "value": 0,
        "error_title": "Default value", "error_message": "a number >= 0",
    })
    return row + 2
