"""Read a built (and possibly edited) workbook back: its scenarios, catalogue and calculation rows.

``workbook verify`` runs the reference on what the file's own input cells say, so a workbook
edited in Excel is verified against its edits. Bad edits raise InputError naming sheet and cell.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl
from pydantic import ValidationError

from workbook.writer.layout import CALC_SHEETS, COL_KEY, FIRST_VALUE_COL, HEADER_ROW
from workbook.errors import InputError

INPUT_SHEET = "Plan"


@dataclass
class ReadBack:
    """What a workbook file says."""

    scenarios: list[Any]
    catalog: Any
    columns: list[int]  # 0-based value column of each scenario
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # sheet -> {key: 0-based row}


def _find_block(ws, title_prefix: str) -> int:
    for row in ws.iter_rows(min_col=1, max_col=1):
        v = row[0].value
        if isinstance(v, str) and v.startswith(title_prefix):
            return row[0].row  # 1-based row of the title; the header is the next row
    raise InputError(f"block {title_prefix!r} not found", file=ws.title)


def _table(ws, title_prefix: str) -> list[dict[str, Any]]:
    title_row = _find_block(ws, title_prefix)
    header = [c.value for c in ws[title_row + 1]]
    out = []
    r = title_row + 2
    while ws.cell(r, 1).value not in (None, ""):
        rec = {}
        for c, name in enumerate(header, start=1):
            if name:
                rec[name] = ws.cell(r, c).value
        rec["_row"] = r
        out.append(rec)
        r += 1
    return out


def _records(ws, title: str, cls, sheet: str, id_field: str = "id") -> dict[str, Any]:
    out = {}
    for rec in _table(ws, title):
        row = rec.pop("_row")
        data = {k: v for k, v in rec.items() if v is not None}
        if "as_of" in data and isinstance(data["as_of"], dt.datetime):
            data["as_of"] = data["as_of"].date()
        try:
            obj = cls(**data)
        except ValidationError as err:
            e = err.errors()[0]
            fld = ".".join(str(x) for x in e["loc"])
            raise InputError(e["msg"], file=f"{sheet}!row {row}", field=fld) from None
        out[getattr(obj, id_field)] = obj
    return out


def read_catalog(wb):
    from workbook.catalog.models import Catalog, DefaultValue, Defaults, Gpu, GpuEfficiency, Model
    from workbook.writer.catalog_sheets import EFFICIENCY_SHEET, EFFICIENCY_TITLE

    hw = wb["Hardware"]
    gpus = _records(hw, "GPU catalogue", Gpu, "Hardware")
    efficiency = _records(wb[EFFICIENCY_SHEET], EFFICIENCY_TITLE, GpuEfficiency, EFFICIENCY_SHEET, id_field="gpu")
    models = _records(wb["Models"], "Model catalogue", Model, "Models")
    engines = read_engines(wb)
    hw = wb["Defaults"]
    defaults = {}
    title_row = _find_block(hw, "Defaults (")
    r = title_row + 2
    while hw.cell(r, 4).value not in (None, ""):
        key = hw.cell(r, 4).value
        value = hw.cell(r, 5).value
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise InputError(f"default must be a number, got {value!r}", file=f"Defaults!E{r}", field=key)
        defaults[key] = DefaultValue(key=key, value=value, unit=str(hw.cell(r, 2).value),
                                     source=str(hw.cell(r, 3).value), as_of=hw.cell(r, 6).value)
        r += 1
    return Catalog(gpus=gpus, models=models, defaults=Defaults(records=defaults), efficiency=efficiency,
                   engines=engines)


def read_engines(wb):
    """The Engines sheet's profiles and devices (the file's own, edits included)."""
    from workbook.catalog.engines import DeviceMemory, EngineProfile, EnginesCatalog
    from workbook.writer.catalog_sheets import ENGINE_DEVICES_TITLE, ENGINE_PROFILES_TITLE, ENGINES_SHEET

    ws = wb[ENGINES_SHEET]
    profiles = _records(ws, ENGINE_PROFILES_TITLE, EngineProfile, ENGINES_SHEET)
    devices = _records(ws, ENGINE_DEVICES_TITLE, DeviceMemory, ENGINES_SHEET, id_field="gpu")
    return EnginesCatalog(profiles=list(profiles.values()), devices=list(devices.values()))


def key_rows(ws) -> dict[str, int]:
    """{key in column D: 0-based row} of a calculation sheet."""
    out = {}
    for row in ws.iter_rows(min_row=HEADER_ROW + 2, min_col=COL_KEY + 1, max_col=COL_KEY + 1):
        v = row[0].value
        if isinstance(v, str) and v:
            out[v] = row[0].row - 1
    return out


def _set(d: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for p in parts[:-1]:
        d = d.setdefault(p, {})
    d[parts[-1]] = value


def read_workbook(path: Path | str) -> ReadBack:
    """Scenarios (from the Plan inputs) and catalogue (Hardware, Models sheets) of a workbook."""
    from workbook.writer.inputs import input_rows
    from workbook.scenario.model import Scenario

    from workbook.safe_xlsx import check_xlsx, load_checked

    check_xlsx(path)
    wb = load_checked(path, data_only=False)
    catalog = read_catalog(wb)
    plan = wb[INPUT_SHEET]
    rows = key_rows(plan)
    columns = []
    col = FIRST_VALUE_COL
    while plan.cell(HEADER_ROW + 1, col + 1).value not in (None, ""):
        columns.append(col)
        col += 1
    scenarios = []
    for col in columns:
        data: dict[str, Any] = {}
        for r in input_rows():
            row = HEADER_ROW if r.key == "name" else rows[r.key]
            v = plan.cell(row + 1, col + 1).value
            if isinstance(v, str) and v.startswith("="):
                raise InputError("an input cell holds a formula", file=f"Plan!{plan.cell(row + 1, col + 1).coordinate}",
                                 field=r.key)
            _set(data, r.key, v)
        try:
            scenarios.append(Scenario(**data))
        except ValidationError as err:
            e = err.errors()[0]
            loc = ".".join(str(x) for x in e["loc"])
            where = ""
            if loc == "name" or loc in rows:
                where = plan.cell((HEADER_ROW if loc == "name" else rows[loc]) + 1, col + 1).coordinate
            expected = next((r.expectation() for r in input_rows() if r.key == loc), None)
            msg = "required input left blank" if e.get("input") is None and e["type"] != "value_error" else e["msg"]
            raise InputError(msg, file=f"Plan!{where}" if where else "Plan", field=loc, expected=expected) from None
    sheet_rows = {ws.title: key_rows(ws) for ws in wb.worksheets if ws.title in CALC_SHEETS + ("Summary",)}
    return ReadBack(scenarios=scenarios, catalog=catalog, columns=columns, rows=sheet_rows)
