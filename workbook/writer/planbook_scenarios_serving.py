"""The Scenarios sheet of a serving-only plan (issue 23): Base / Low / High beside the other serving plans, with
identical rows. Base is the recommended serving plan; Low (the downside) and High (the upside) move its two money
drivers by the sensitivity step: the GPU-hour price (the rent scales with it) and the utilisation of the fleet (the
cost per 1M output tokens scales inversely with it, at most 1). The fleet, its latencies and checks stay the plan's
(the same GPUs carry the same load). The other serving plans follow as links to their own columns.
"""

from __future__ import annotations

from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer.xlsx import Writer

ROWS = [("gpus", "GPUs in use", "GPUs"), ("price", "GPU-hour price", "USD/GPU-h"),
        ("util", "Utilisation of the fleet (share of its output tokens/s in use)", "%"),
        ("month", "Rent per month", "USD"), ("per_1m", "Cost per 1M output tokens", "USD/1M tokens"),
        ("ttft", "TTFT under the load", "ms"), ("tpot", "TPOT under the load", "ms"),
        ("fails", "Serving checks failed", "count"), ("buy", "Buy instead: owned TCO over the horizon", "USD")]
LINKS = {"gpus": "srv_gpus_in_use", "price": "gpu_hour_usd", "util": "cost.utilisation_frac",
         "per_1m": "infer_usd_per_1M_tokens", "ttft": "srv_ttft_ms_in_use", "tpot": "srv_tpot_ms_in_use",
         "fails": "hard_failures_count", "buy": "tco_total_usd"}
FORMATS = {"GPUs": "#,##0", "%": "0.0%", "USD/GPU-h": "$#,##0.00", "USD": "$#,##0", "USD/1M tokens": "$#,##0.000",
           "ms": "#,##0.0", "count": "0"}
DRIVERS = [("GPU-hour price", "base x (1 + s)", "base x (1 - s)"),
           ("Utilisation of the fleet", "base x (1 - s)", "min(1, base x (1 + s))")]


def column_values(r: dict, inputs: dict) -> dict[str, float]:
    """A linked column's values from its scenario column's results and inputs."""
    from workbook.planner.serving_search import HOURS_PER_MONTH

    v = {k: float(r[name]) if name in r else float(inputs.get(name) or 0.0) for k, name in LINKS.items()}
    v["month"] = r["infer_hourly_cost_usd"] * HOURS_PER_MONTH
    return v


def case_values(base: dict[str, float], s: float, low: bool) -> dict[str, float]:
    """Python twin of a Low (*low*) or High column."""
    v = dict(base)
    v["price"] = base["price"] * (1 + s) if low else base["price"] * (1 - s)
    v["util"] = base["util"] * (1 - s) if low else min(1.0, base["util"] * (1 + s))
    v["month"] = base["month"] * (v["price"] / base["price"])
    v["per_1m"] = base["per_1m"] * (v["price"] / base["price"]) * (base["util"] / v["util"])
    return v


def _formulas(w: Writer, me: dict[str, str], b: dict[str, str] | None, i: int, s: str, low: bool) -> dict[str, str]:
    """A column's formulas: links to scenario column *i* (*b* None), else a Low / High case of the Base cells *b*."""
    from workbook.writer.planbook import _ref

    if b is None:
        out = {k: "=" + _ref(w, name, i) for k, name in LINKS.items()}
        out["month"] = f"={_ref(w, 'infer_hourly_cost_usd', i)}*c_hours_per_year/c_cost_months_per_year"
        return out
    out = {k: f"={b[k]}" for k in ("gpus", "ttft", "tpot", "fails", "buy")}
    out["price"] = f"={b['price']}*(1+{s})" if low else f"={b['price']}*(1-{s})"
    out["util"] = f"={b['util']}*(1-{s})" if low else f"=MIN(1,{b['util']}*(1+{s}))"
    out["month"] = f"={b['month']}*({me['price']}/{b['price']})"
    out["per_1m"] = f"={b['per_1m']}*({me['price']}/{b['price']})*({b['util']}/{me['util']})"
    return out


def write_serving_scenarios(w: Writer, names: list[str], results: list[dict], plan, sheet: str, head: int,
                            first: int) -> int:
    """The serving Base / Low / High and the other serving plans from row ``head`` (header) down, values from
    column ``first``; returns the last row written."""
    from workbook.writer.cover_ask import readable_name, readable_name_formula
    from workbook.writer.planbook import _header, _ref
    from workbook.writer.planbook_serving import serving_columns

    cols = serving_columns(names, plan) or [0]
    i0, alts = cols[0], cols[1:3]
    _header(w, sheet, ("Line item", "Unit", "Base: the plan", "Low case (downside)", "High case (upside)"),
            (54, 14, 22, 20, 20))
    key = "srv_gpus_in_use"
    w.formula(sheet, head, first, f'="Base: "&{readable_name_formula(w, i0, key)}',
              "Base: " + readable_name(plan.inputs[i0], results[i0][key]), "link", key="readable_name", style="header")
    for j, i in enumerate(alts):
        w.formula(sheet, head, first + 3 + j, "=" + readable_name_formula(w, i, key),
                  readable_name(plan.inputs[i], results[i][key]), "link", key="readable_name", style="header")
        w.ws[sheet].set_column(first + 3 + j, first + 3 + j, 20)
    rows = {k: head + 1 + n for n, (k, _, _) in enumerate(ROWS)}
    for k, label, unit in ROWS:
        w.text(sheet, rows[k], 0, label, "label", "label")
        w.text(sheet, rows[k], 1, unit, "unit", "unit")
    s_ref, step = _ref(w, "sens_step_frac", i0), float(results[i0]["sens_step_frac"])
    base = column_values(results[i0], plan.inputs[i0])
    b = {k: xl_rowcol_to_cell(r, first) for k, r in rows.items()}
    specs: list[tuple[int, Any, int, bool, dict]] = [(first, None, i0, False, base)]
    specs += [(first + 1, b, i0, True, case_values(base, step, True)),
              (first + 2, b, i0, False, case_values(base, step, False))]
    specs += [(first + 3 + j, None, i, False, column_values(results[i], plan.inputs[i])) for j, i in enumerate(alts)]
    for col, base_cells, i, low, values in specs:
        me = {k: xl_rowcol_to_cell(r, col) for k, r in rows.items()}
        formulas = _formulas(w, me, base_cells, i, s_ref, low)
        for k, _, unit in ROWS:
            w.formula(sheet, rows[k], col, formulas[k], float(values[k]), "link" if base_cells is None else "calc",
                      key=f"scn_srv_{k}", num_format=FORMATS.get(unit))
    from workbook.writer.planbook_scenarios import write_drivers

    row = write_drivers(w, rows[ROWS[-1][0]] + 2, s_ref, step, DRIVERS)
    w.finish_sheet(sheet, first + 2 + len(alts), row)
    return row
