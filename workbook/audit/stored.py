"""Recompute every scenario from the file's own inputs with the reference and compare the stored values: agree,
stale (the file was not recalculated after an edit: the value is missing or still the build's), or disagree."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from workbook.audit.findings import Finding
from workbook.verify import agreement, expected_values


def _agrees(got, want) -> bool:
    """verify's agreement on a stored value; a file stores an empty text as no value."""
    return agreement("" if got is None and isinstance(want, str) else got, want)[0]


def compare_stored(path: Path, values_wb, record: dict) -> tuple[list[Finding], int]:
    """Findings for stored values that are stale or disagree, and how many values were compared."""
    want, info = expected_values(path)
    at_build = {(sheet, coord): cached for sheet, coord, _role, _key, _content, cached in record["cells"]}
    out, n = [], 0
    for (sheet, coord), expected in sorted(want.items()):
        if sheet not in values_wb.sheetnames:
            continue
        got = _serial(values_wb[sheet][coord].value)
        n += 1
        if _agrees(got, expected):
            continue
        label = info.get((sheet, coord), ("", ""))[0] or str(values_wb[sheet].cell(values_wb[sheet][coord].row, 1).value or "")
        built = at_build.get((sheet, coord), "")
        stale = got is None or _agrees(got, _number(built) if not isinstance(expected, str) else built)
        out.append(Finding("stale_value" if stale else "value_disagrees", sheet, coord, label=label,
                           old=_show(got), new=_show(expected)))
    return out, n


def _serial(value):
    """A stored value; a date (openpyxl reads a date-formatted number as one: the Cash Flow sheet's months) as its
    serial, the number the reference computes."""
    if isinstance(value, dt.date):
        from openpyxl.utils.datetime import to_excel

        return float(to_excel(value))
    return value


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def _show(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
