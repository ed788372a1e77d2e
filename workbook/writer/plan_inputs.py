"""The Plan sheet's input block: one row per scenario input, one column per scenario."""

from __future__ import annotations

from typing import Any

from workbook.writer.inputs import InputRow, input_rows
from workbook.writer.layout import COL_KEY, COL_LABEL, COL_SOURCE, COL_UNIT, value_col
from workbook.writer.xlsx import Writer

SHEET = "Plan"
SOURCE = {
    "Scenario": "scenario file",
    "Training inputs": "scenario file",
    "Inference inputs": "scenario file",
    "Network inputs": "scenario / defaults",
    "Storage inputs": "scenario / defaults",
    "Cost inputs": "scenario / defaults",
}


def _validation(r: InputRow) -> dict:
    if r.kind == "enum":
        return {"validate": "list", "source": list(r.choices)}
    if r.kind == "gpu":
        return {"validate": "list", "source": "=cat_gpu_id"}
    if r.kind == "model":
        return {"validate": "list", "source": "=cat_model_id"}
    if r.kind == "name":
        return {"validate": "length", "criteria": "between", "minimum": 1, "maximum": 64}
    lo = r.lo if r.lo is not None else -1e300
    hi = r.hi if r.hi is not None else 1e300
    return {"validate": "integer" if r.kind == "int" else "decimal", "criteria": "between", "minimum": lo, "maximum": hi}


def _message(r: InputRow) -> str:
    if r.choices:
        return f"{r.key}: one of " + ", ".join(r.choices)
    if r.kind in ("gpu", "model"):
        return f"{r.key}: an id from the {'Hardware' if r.kind == 'gpu' else 'Models'} sheet"
    if r.kind == "name":
        return f"{r.key}: text of 1 to 64 characters"
    return f"{r.key}: {'a whole number' if r.kind == 'int' else 'a number'} from {r.lo:g} to {r.hi:g}"


def write_inputs(w: Writer, values: list[dict[str, Any]]) -> None:
    """Write the input rows; their positions go into the layout under their dotted keys."""
    ws = w.ws[SHEET]
    block = None
    n = len(values)
    for r in input_rows():
        if r.block != block:
            block = r.block
            row = w.book.layout.place(SHEET, skip=0 if r.key == "name" else 1)
            w.text(SHEET, row, COL_LABEL, block, "block", "label")
        row = w.book.layout.place(SHEET, r.key)
        w.text(SHEET, row, COL_LABEL, r.label, "label", "label")
        w.text(SHEET, row, COL_UNIT, r.unit, "unit", "unit")
        w.text(SHEET, row, COL_SOURCE, SOURCE[r.block], "source", "source")
        w.text(SHEET, row, COL_KEY, r.key, "key", "key")
        for i, vals in enumerate(values):
            v = vals[r.key]
            col = value_col(i)
            if v is None:  # optional input left empty: the formulas test ISBLANK
                ws.write_blank(row, col, None, w.fmt("input"))
                w.book.cells.add(SHEET, row, col, "input", r.key, i)
            elif isinstance(v, str):
                ws.write_string(row, col, v, w.fmt("input_text"))
                w.book.cells.add(SHEET, row, col, "input", r.key, i)
            else:
                w.number(SHEET, row, col, v, "input", "input", key=r.key, num_format="General", scenario=i)
        dv = _validation(r)
        dv.update({"error_title": "Invalid input", "error_message": _message(r)[:255],
                   "input_title": r.label[:32], "input_message": _message(r)[:255]})
        ws.data_validation(row, value_col(0), row, value_col(n - 1), dv)
