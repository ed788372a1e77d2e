"""The plan's Scenarios sheet (issue 23): Base / Low / High beside the real alternatives, with identical rows.

Base is the recommended plan (links to its scenario column). Low (the downside) and High (the upside) move three
named drivers of it by the sensitivity step (Plan input ``cost.sensitivity_frac``; the Low/High rule is an
assumption, stated on the sheet): the MFU achieved (efficiency), the wall-clock overhead factor and the GPU-hour
price. Their days and cost follow the closed forms of the Sensitivity sheet: days scale with the overhead and
inversely with the MFU (throughput per GPU), the rent with the days and the price; the GPUs stay the plan's. The
other scenario columns (the best plan of every other priced GPU, the runner-up, the early estimate) follow as links
to their own rows, and every column carries the owned alternative (buy: the TCO over the horizon) beside the rent.
"""

from __future__ import annotations

from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer.xlsx import Writer

SHEET = "Scenarios"
HEAD = 3
FIRST = 2  # the first value column (Base)
#: (row key, label, unit) of the rows, identical in every column
ROWS = [("gpus", "GPUs rented (billed)", "GPUs"), ("mfu", "MFU achieved (efficiency)", "%"),
        ("overhead", "Wall-clock overhead factor", "x"), ("price", "GPU-hour price", "USD/GPU-h"),
        ("days", "Training days", "days"), ("target", "Deadline (target days)", "days"),
        ("run", "Rent for the run", "USD"), ("committed", "Rent committed (the larger of the run and the target window)",
                                             "USD"),
        ("budget", "Budget (0 = none given)", "USD"), ("headroom", "Budget headroom", "USD"),
        ("deadline_ok", "Deadline", "text"), ("budget_ok", "Budget", "text"),
        ("buy", "Buy instead: owned TCO over the horizon", "USD")]
#: the Base column's links: row key -> calculated row (or Plan input) of the scenario column
LINKS = {"gpus": "train_gpus_billed", "mfu": "train_mfu", "overhead": "training.overhead_factor",
         "price": "gpu_hour_usd", "days": "train_days", "target": "training.target_days", "run": "train_cost_usd",
         "budget": "sens_budget_usd", "headroom": "budget_headroom_usd", "buy": "tco_total_usd"}
#: (label, Low rule, High rule) of the named drivers; s = the sensitivity step
DRIVERS = [("MFU achieved (efficiency)", "base x (1 - s)", "base x (1 + s)"),
           ("Wall-clock overhead factor", "base x (1 + s)", "max(1, base x (1 - s))"),
           ("GPU-hour price", "base x (1 + s)", "base x (1 - s)")]
FORMATS = {"GPUs": "#,##0", "%": "0.0%", "x": "0.00", "USD/GPU-h": "$#,##0.00", "days": "#,##0.0", "USD": "$#,##0"}


def case_values(base: dict[str, float], s: float, low: bool) -> dict[str, Any]:
    """Python twin of a Low (*low*) or High column from the Base column's values *base* (keys of ROWS)."""
    sign = 1.0 if low else -1.0
    v = dict(base)
    v["mfu"] = base["mfu"] * (1 - sign * s)
    v["overhead"] = base["overhead"] * (1 + sign * s) if low else max(1.0, base["overhead"] * (1 - s))
    v["price"] = base["price"] * (1 + sign * s)
    v["days"] = base["days"] * (base["mfu"] / v["mfu"]) * (v["overhead"] / base["overhead"])
    v["run"] = v["gpus"] * v["days"] * 24.0 * v["price"]
    return _verdicts(v)


def _verdicts(v: dict[str, Any]) -> dict[str, Any]:
    from workbook.writer.cover_ask import fixed

    v["committed"] = max(v["run"], v["gpus"] * v["target"] * 24.0 * v["price"])
    v["headroom"] = v["budget"] - v["committed"] if v["budget"] > 0 else 0.0
    v["deadline_ok"] = ("meets it" if v["days"] <= v["target"] else
                        f"misses it by {fixed(v['days'] - v['target'], 1)} days")
    v["budget_ok"] = "within it" if v["headroom"] >= 0 else f"over by ${fixed(-v['headroom'], 0)}"
    return v


def column_values(results: dict, inputs: dict) -> dict[str, Any]:
    """The values of a linked column (the Base or an alternative) from its scenario column's results."""
    v = {k: float(results[name]) if name in results else float(inputs.get(name) or 0.0) for k, name in LINKS.items()}
    v["overhead"] = float(inputs.get("training.overhead_factor") or 1.0)
    return _verdicts(v)


def _linked(w: Writer, i: int) -> dict[str, str]:
    from workbook.writer.planbook import _ref

    return {k: "=" + _ref(w, name, i) for k, name in LINKS.items()}


def _case(cells: dict[str, str], step: str, low: bool) -> dict[str, str]:
    """A Low / High column's driver and result formulas; *cells*: the Base column's cells by row key."""
    up, down = f"(1+{step})", f"(1-{step})"
    b = cells
    return {"gpus": f"={b['gpus']}", "target": f"={b['target']}", "budget": f"={b['budget']}",
            "buy": f"={b['buy']}", "mfu": f"={b['mfu']}*{down if low else up}",
            "overhead": f"={b['overhead']}*{up}" if low else f"=MAX(1,{b['overhead']}*{down})",
            "price": f"={b['price']}*{up if low else down}"}


def _results(me: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    """The days and rent of a Low / High column from its drivers (*me*) and the Base's (*b*): cells by row key."""
    return {"days": f"={b['days']}*({b['mfu']}/{me['mfu']})*({me['overhead']}/{b['overhead']})",
            "run": f"={me['gpus']}*{me['days']}*c_hours_per_day*{me['price']}"}


def _verdict_formulas(me: dict[str, str], linked: bool) -> dict[str, str]:
    """The rent committed, the verdicts and (a Low / High column: *linked* False) the headroom of a column."""
    out = {"committed": f"=MAX({me['run']},{me['gpus']}*{me['target']}*c_hours_per_day*{me['price']})",
           "deadline_ok": f'=IF({me["days"]}<={me["target"]},"meets it","misses it by "&FIXED({me["days"]}-'
                          f'{me["target"]},1)&" days")',
           "budget_ok": f'=IF({me["headroom"]}>=0,"within it","over by $"&FIXED(-{me["headroom"]},0))'}
    if not linked:
        out["headroom"] = f"=IF({me['budget']}>0,{me['budget']}-{me['committed']},0)"
    return out


def write_scenarios(w: Writer, names: list[str], results: list[dict], plan) -> None:
    """The Scenarios sheet: a training plan's (a serving-only plan's: planbook_scenarios_serving)."""
    from workbook.writer.cover_ask import readable_name, readable_name_formula
    from workbook.writer.planbook import _header, _ref
    from workbook.writer.planbook_serving import trains

    w.title(SHEET, "Scenarios: Base / Low / High and the real alternatives",
            "Identical rows in every column. Low and High: the plan's named drivers moved by the sensitivity step "
            "(Sensitivity's closed forms); the alternatives: the other scenario columns, live.")
    if not trains(plan):
        from workbook.writer.planbook_scenarios_serving import write_serving_scenarios

        write_serving_scenarios(w, names, results, plan, SHEET, HEAD, FIRST)
        return
    heads = ("Line item", "Unit", "Base: the plan", "Low case (downside)", "High case (upside)")
    _header(w, SHEET, heads, (54, 10, 22, 20, 20))
    name_f, name_v = readable_name_formula(w, 0), readable_name(plan.inputs[0], results[0]["train_gpus_billed"])
    w.formula(SHEET, HEAD, FIRST, f'="Base: "&{name_f}', f"Base: {name_v}", "link", key="readable_name",
              style="header")
    alts = list(range(1, len(names)))
    for j, i in enumerate(alts):
        col = FIRST + 3 + j
        w.formula(SHEET, HEAD, col, "=" + readable_name_formula(w, i), readable_name(
            plan.inputs[i], results[i]["train_gpus_billed"]), "link", key="readable_name", style="header")
        w.ws[SHEET].set_column(col, col, 20)
    rows = {key: HEAD + 1 + n for n, (key, _, _) in enumerate(ROWS)}
    for key, label, unit in ROWS:
        w.text(SHEET, rows[key], 0, label, "label", "label")
        w.text(SHEET, rows[key], 1, "" if unit == "text" else unit, "unit", "unit")
    s_ref = _ref(w, "sens_step_frac")
    base = column_values(results[0], plan.inputs[0])
    step = float(results[0]["sens_step_frac"])
    columns = [(FIRST, _linked(w, 0), base, True)]
    for k, low in ((1, True), (2, False)):
        columns.append((FIRST + k, None, case_values(base, step, low), False))
    for j, i in enumerate(alts):
        columns.append((FIRST + 3 + j, _linked(w, i), column_values(results[i], plan.inputs[i]), True))
    base_cells = {key: xl_rowcol_to_cell(r, FIRST) for key, r in rows.items()}
    for col, links, values, linked in columns:
        me = {key: xl_rowcol_to_cell(r, col) for key, r in rows.items()}
        if linked:
            formulas = {**links, **_verdict_formulas(me, True)}
        else:
            formulas = {**_case(base_cells, s_ref, col == FIRST + 1), **_results(me, base_cells),
                        **_verdict_formulas(me, False)}
        for key, _, unit in ROWS:
            v = values[key]
            w.formula(SHEET, rows[key], col, formulas[key], v if isinstance(v, str) else float(v), "link" if linked
                      else "calc", key=f"scn_{key}", num_format=FORMATS.get(unit))
    last = write_drivers(w, rows[ROWS[-1][0]] + 2, s_ref, step, DRIVERS)
    w.finish_sheet(SHEET, FIRST + 2 + len(alts), last)


def write_drivers(w: Writer, row: int, s_ref: str, step: float, drivers: list[tuple[str, str, str]]) -> int:
    """The named *drivers* (label, Low rule, High rule) with the step in use, from ``row`` down; returns the last
    row written."""
    w.text(SHEET, row, 0, "The named drivers: Low and High (assumed: -/+ the sensitivity step of the plan)", "block",
           "label")
    row += 1
    w.text(SHEET, row, 0, "Sensitivity step in use (Plan input cost.sensitivity_frac)", "label", "label")
    w.text(SHEET, row, 1, "%", "unit", "unit")
    w.formula(SHEET, row, FIRST, f"={s_ref}", step, "link", key="scn_step", num_format="0.0%")
    for label, low, high in drivers:
        row += 1
        w.text(SHEET, row, 0, label, "label", "label")
        w.text(SHEET, row, FIRST + 1, f"Low: {low}", "source", "source")
        w.text(SHEET, row, FIRST + 2, f"High: {high}", "source", "source")
    return row
