"""``workbook build``: the live-formula workbook from a catalogue and a scenario set."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbook.writer.catalog_sheets import GPU_SHEET, MODEL_SHEET, write_constants, write_defaults, write_table
from workbook.writer.charts import add_charts
from workbook.writer.cover import write_cover
from workbook.writer.layout import COL_KEY, COL_SOURCE, COL_UNIT, HEADER_ROW, MODULE_SHEET, SHEET_ORDER, quote_sheet, value_col
from workbook.writer.line_items import write_module
from workbook.writer.inputs import input_values
from workbook.writer.plan_inputs import write_inputs
from workbook import __version__
from workbook.writer.xlsx import Book, Writer, atomic_output

DEFAULT_OUTPUT = Path("out/ai-infra-workbook.xlsx")


@dataclass
class Planned:
    """One scenario column: the resolved scenario, its catalogue records and reference results."""

    scenario: Any
    gpu: Any
    model: Any
    results: dict[str, float]


def files_hash(paths: list[Path]) -> str:
    """sha256 over the files' names and bytes (sorted), short form."""
    h = hashlib.sha256()
    for p in sorted(paths, key=lambda p: p.name):
        h.update(p.name.encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def plan_scenarios(scenarios: list, catalog) -> list[Planned]:
    from workbook.calc import compute_resolved
    from workbook.scenario.resolve import resolve

    out = []
    for sc in scenarios:
        s, gpu, model = resolve(sc, catalog)
        out.append(Planned(s, gpu, model, compute_resolved(s, gpu, model, catalog.defaults.as_dict())))
    return out


def _collect_constants():
    from workbook.calc import SHEETS
    import importlib
    import importlib.util

    from workbook.sheets import constants as base

    consts = list(base.CONSTANTS)
    tables = dict(base.TABLES)
    for module in SHEETS:
        if importlib.util.find_spec(f"workbook.sheets.{module}") is None:
            continue  # write_module reports the missing line items
        mod = importlib.import_module(f"workbook.sheets.{module}")
        for c in getattr(mod, "CONSTANTS", []):
            if any(c[0] == k[0] for k in consts):
                raise ValueError(f"constant c_{c[0]} declared twice")
            consts.append(c)
        for name, t in getattr(mod, "TABLES", {}).items():
            if name in tables:
                raise ValueError(f"table t_{name} declared twice")
            tables[name] = t
    return consts, tables


def build(output: Path, scenarios: list, catalog, provenance: list[tuple[str, str]]) -> Book:
    """Write the workbook for *scenarios* (Scenario objects) to *output*; return what was written."""
    from workbook.calc import SHEETS, modules

    planned = plan_scenarios(scenarios, catalog)
    names = [p.scenario.name for p in planned]
    if len(set(names)) != len(names):
        from workbook.errors import InputError

        raise InputError("scenario names must be unique", field="name", expected=", ".join(names))
    output = Path(output)
    tmp, commit, abort = atomic_output(output)
    book = Book(path=output, scenario_names=names)
    try:
        w = Writer(tmp, book)
        models = list(catalog.models.values())
        models += [p.model for p in planned if p.model.id not in catalog.models]
        # Hardware: constants, lookup tables, GPU catalogue
        w.title(GPU_SHEET, "Hardware", "Constants, spec lookup tables and the GPU catalogue (inputs: blue).")
        consts, tables = _collect_constants()
        row = write_constants(w, consts, tables, 3)
        row = write_defaults(w, catalog.defaults, row)
        gpu_last, gpu_fields = write_table(w, GPU_SHEET, "gpu", "GPU catalogue", list(catalog.gpus.values()), row)
        w.finish_sheet(GPU_SHEET, max(len(gpu_fields), 5), gpu_last)
        # Models: model catalogue
        w.title(MODEL_SHEET, "Models", "Model architectures (inputs: blue). Parameter counts are computed on Plan.")
        model_last, model_fields = write_table(w, MODEL_SHEET, "model", "Model catalogue", models, 3)
        w.finish_sheet(MODEL_SHEET, len(model_fields), model_last)
        # Plan inputs, then every calculation module in data-flow order
        w.title("Plan", "Plan", "Scenario inputs (blue) and the selected hardware, model and training plan.")
        for sheet in SHEET_ORDER[3:]:
            w.calc_header(sheet, names)
        write_inputs(w, [input_values(p.scenario, p.model.id) for p in planned])
        results = [p.results for p in planned]
        for module, mod in modules():
            write_module(w, module, mod.QUANTITIES, results)
        for sheet in SHEET_ORDER[4:]:
            w.title(sheet, sheet, f"One row per quantity, one column per scenario (spec section in column C).")
        master_ok = _write_master(w, results)
        add_charts(w, names)
        w.wb.set_custom_property("tool_version", __version__)
        for key, value in provenance:
            w.wb.set_custom_property(key, value)
        for sheet in SHEET_ORDER[3:]:
            w.finish_sheet(sheet, value_col(len(names) - 1), w.book.layout.next_row.get(sheet, 5))
        write_cover(w, provenance, "master_check_cell", master_ok, names)
        w.close()
        commit()
    except BaseException:
        abort()
        raise
    return book


def _write_master(w: Writer, results: list[dict[str, float]]) -> bool:
    """Master check on the Checks sheet: the sum of every check of every scenario (0 = pass)."""
    from workbook.calc import registry
    from workbook.writer.layout import LayoutError

    check_names = [n for n, e in registry().items() if e.module == "checks"]
    if not check_names:
        raise LayoutError("no checks declared")
    lay = w.book.layout
    rows = [lay.rows[n][1] for n in check_names]
    first, last = min(rows), max(rows)
    n = len(results)
    from xlsxwriter.utility import xl_rowcol_to_cell

    rng = f"{xl_rowcol_to_cell(first, value_col(0))}:{xl_rowcol_to_cell(last, value_col(n - 1))}"
    row = lay.place("Checks", "master_check", skip=1)
    total = sum(r[c] for r in results for c in check_names)
    w.text("Checks", row, 0, "Master check: failed checks over all scenarios (0 = all pass)", "block", "label")
    w.text("Checks", row, COL_UNIT, "count", "unit", "unit")
    w.text("Checks", row, COL_SOURCE, "rules §11", "source", "source")
    w.text("Checks", row, COL_KEY, "master_check", "key", "key")
    w.formula("Checks", row, value_col(0), f"=SUM({rng})", total, "check", key="master_check", num_format="0")
    w.define("master_check_cell", "Checks", row, value_col(0))
    _check_formats(w, first, last, row, n)
    return total == 0


def _check_formats(w: Writer, first: int, last: int, master_row: int, n: int) -> None:
    from workbook.writer import styles

    ws = w.ws["Checks"]
    ok = w.wb.add_format({"bg_color": styles.PASS_FILL, "font_color": styles.PASS_FONT})
    bad = w.wb.add_format({"bg_color": styles.FAIL_FILL, "font_color": styles.FAIL_FONT})
    for r0, r1, c1 in ((first, last, value_col(n - 1)), (master_row, master_row, value_col(0))):
        ws.conditional_format(r0, value_col(0), r1, c1, {"type": "cell", "criteria": "==", "value": 0, "format": ok})
        ws.conditional_format(r0, value_col(0), r1, c1, {"type": "cell", "criteria": "!=", "value": 0, "format": bad})
