"""The Plan sheet's input block: one row per scenario input, one column per scenario.

The scenario name is the Plan header row itself (every other sheet's header is a formula of it).
A field the scenario leaves to the catalogue is written blank: the calculations read the blank as
"use the catalogue" (the Defaults sheet, or the GPU's price for the basis), live.
"""

from __future__ import annotations

from typing import Any

from workbook.writer import styles
from workbook.writer.inputs import InputRow, input_rows
from workbook.writer.layout import COL_KEY, COL_LABEL, COL_NOTES, COL_SOURCE, COL_UNIT, HEADER_ROW, value_col
from workbook.writer.xlsx import Writer

SHEET = "Plan"


def choice_table(r: InputRow) -> str:
    """Defined name of the list of allowed choices of an enum input (Constants sheet)."""
    return f"t_ch_{r.name}_choice"


def bound_name(r: InputRow, which: str) -> str:
    """Defined name of an input's lowest or highest allowed value (Constants sheet)."""
    return f"c_in_{which}_{r.name}"


def _validation(r: InputRow) -> dict:
    if r.kind == "enum":
        return {"validate": "list", "source": "=" + choice_table(r)}
    if r.kind == "gpu":
        return {"validate": "list", "source": "=cat_gpu_id"}
    if r.kind == "model":
        return {"validate": "list", "source": "=cat_model_id"}
    if r.kind == "engine":
        return {"validate": "list", "source": "=cat_engine_id"}
    if r.kind == "name":
        return {"validate": "length", "criteria": "between", "minimum": 1, "maximum": 64}
    return {"validate": "integer" if r.kind == "int" else "decimal", "criteria": "between",
            "minimum": r.lo, "maximum": r.hi}


def _source(r: InputRow) -> str:
    if r.key == "cost.gpu_hour_usd":
        return "scenario / Hardware"
    return "scenario / Defaults" if r.optional and r.note.endswith("blank = default") else "scenario file"


def write_inputs(w: Writer, values: list[dict[str, Any]]) -> None:
    """Write the input rows; their positions go into the layout under their dotted keys."""
    ws = w.ws[SHEET]
    block = None
    n = len(values)
    lay = w.book.layout
    for r in input_rows():
        if r.key == "name":
            row = HEADER_ROW
            lay.rows["name"] = (SHEET, row)
        else:
            if r.block != block:
                row = lay.place(SHEET, skip=0 if block is None else 1)
                w.text(SHEET, row, COL_LABEL, r.block, "block", "label")
                block = r.block
            row = lay.place(SHEET, r.key)
            w.text(SHEET, row, COL_LABEL, r.label, "label", "label")
            w.text(SHEET, row, COL_UNIT, r.unit, "unit", "unit")
            w.text(SHEET, row, COL_NOTES, r.note, "note", "note")
            w.text(SHEET, row, COL_SOURCE, _source(r), "source", "source")
            w.text(SHEET, row, COL_KEY, r.key, "key", "key")
        num_format = styles.number_format(r.unit, [v[r.key] for v in values if isinstance(v[r.key], (int, float))])
        for i, vals in enumerate(values):
            v = vals[r.key]
            col = value_col(i)
            if v is None:  # left to the catalogue: the formulas test ISBLANK
                ws.write_blank(row, col, None, w.fmt("input", num_format))
                w.book.cells.add(SHEET, row, col, "input", r.key, i)
            elif isinstance(v, str):
                style = "input_header" if r.key == "name" else "input_text"
                ws.write_string(row, col, v, w.fmt(style))
                w.book.cells.add(SHEET, row, col, "input", r.key, i, content=v)
                w._track(SHEET, row, col, v, style)
            else:
                w.number(SHEET, row, col, v, "input", "input", key=r.key, num_format=num_format, scenario=i)
        dv = _validation(r)
        dv.update({"ignore_blank": r.optional, "error_title": r.title[:32], "error_message": r.message()[:255],
                   "input_title": r.title[:32], "input_message": r.message()[:255]})
        ws.data_validation(row, value_col(0), row, value_col(n - 1), dv)
