"""The plan workbook's own sheets (issue 9): Recommendation, Assumptions, Cost Breakdown and Rejected,
written only when ``build`` gets a plan (layout.OPTIONAL_SHEETS). Every number is a live link to the
recommended scenario column (the first) or to another column; nothing is typed (rule no_typed_catalogue_copies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer import styles
from workbook.writer.inputs import input_rows
from workbook.writer.layout import HEADER_ROW, quote_sheet, value_col
from workbook.writer.xlsx import Writer

RECOMMENDATION, ASSUMPTIONS, BREAKDOWN, REJECTED = "Recommendation", "Assumptions", "Cost Breakdown", "Rejected"
GLOSSARY = "Glossary"
SCENARIOS = "Scenarios"
PLAN_SHEETS = (RECOMMENDATION, ASSUMPTIONS, SCENARIOS, BREAKDOWN, REJECTED, GLOSSARY)
CHANGES = "Changes"
CASH_FLOW = "Cash Flow"
#: the PDF's sheets, in order (workbook.export.pdf prints them in this order): the ask, the plan, its assumptions,
#: what moves it (Base / Low / High beside the alternatives), the money by period, the cost lines, the owned
#: alternative, the checks, what was rejected, the words
PDF_SHEETS = ("Cover", RECOMMENDATION, ASSUMPTIONS, "Sensitivity", SCENARIOS, CASH_FLOW, BREAKDOWN, "TCO", "Checks",
              REJECTED, GLOSSARY)
HEAD = 3  # 0-based header row of each plan sheet


def pdf_sheets(present) -> list[str]:
    """The PDF's sheets of a workbook whose sheets are *present*, in PDF_SHEETS order (a workbook without a Cash
    Flow sheet prints the others)."""
    return [s for s in PDF_SHEETS if s in set(present)]


@dataclass
class PlanBook:
    """What the plan sheets need besides the scenario columns: the request and the planner's outcome."""

    request_id: str
    data: dict[str, Any]  # Outcome.data
    set_by_request: list[set[str]] = field(default_factory=list)  # per column: dotted input keys set
    inputs: list[dict[str, Any]] = field(default_factory=list)  # per column: the Plan inputs as written
    flags: list = field(default_factory=list)  # catalog.provenance flags of the recommended column

    @property
    def version(self) -> int:
        """This plan's version (workbook.planner.versions): 1, or one more than the plan it replaced."""
        return int(self.data.get("version") or 1)

    @property
    def changes(self) -> list:
        """(what, item, before, after) since the plan this one replaced."""
        return list(self.data.get("changes") or [])


def _ref(w: Writer, name: str, i: int = 0) -> str:
    sheet, row = w.book.layout.rows[name]
    return f"{quote_sheet(sheet)}!{xl_rowcol_to_cell(row, value_col(i))}"


def _link(w: Writer, sheet: str, row: int, col: int, name: str, results: list[dict], i: int = 0,
          unit: str = "", cached: Any = None) -> None:
    """A link to row *name* of scenario column *i*. A calculated figure reads "input error" while an input of the
    column is in error (as on the Summary): a blank input would otherwise show an error value or a plausible 0.
    Links to the Plan inputs themselves stay plain."""
    value = results[i].get(name) if cached is None else cached
    fmt = plan_format(unit, value)
    ref = _ref(w, name, i)
    formula = "=" + ref if w.book.layout.rows[name][0] == "Plan" else guarded(w, ref, i)
    w.formula(sheet, row, col, formula, value if value is not None else "", "link", key=name, num_format=fmt)


#: the plan sheets' one format per unit: days to one decimal, money in whole dollars (cents below $100 a unit:
#: a GPU-hour price), shares as percentages
DAYS_FORMAT, USD_FORMAT = "#,##0.0", "$#,##0"


def plan_format(unit: str, value: Any) -> str | None:
    """The number format of a plan sheet's figure of *unit* (None for text)."""
    if not isinstance(value, float):
        return None
    if unit == "days":
        return DAYS_FORMAT
    if unit in ("USD", "USD/year", "USD/month", "USD/day"):
        return USD_FORMAT
    return styles.number_format(unit, [value])


def unit_text(unit: str) -> str:
    """The unit as a plan sheet prints it: a fraction shows as a percentage (49.1%), so its unit is left blank
    rather than read "49.1% %"."""
    return "" if unit == "fraction" else unit


def guarded(w: Writer, expr: str, i: int) -> str:
    """A formula that shows *expr* (a calculated figure of scenario column *i*), or "input error" while an input
    of the column is in error (as on the Summary)."""
    from workbook.writer.input_guard import INPUT_ERROR_TEXT

    return f'=IF(MIN(1,{_ref(w, "input_errors_count", i)})=1,"{INPUT_ERROR_TEXT}",{expr})'


def _header(w: Writer, sheet: str, heads: tuple[str, ...], widths: tuple[int, ...]) -> None:
    for col, (h, wd) in enumerate(zip(heads, widths)):
        w.text(sheet, HEAD, col, h, "header", "header")
        w.ws[sheet].set_column(col, col, wd)
    w.set_table_header(sheet, HEAD, 1)


_REC = [
    ("The ask: rent (opex over the run)", [
        ("Training cost, rented GPUs (opex, the run)", "train_cost_usd", "USD"),
        ("Contingency (apart from the cost)", "sens_contingency_usd", "USD"),
        ("Rent with contingency", "sens_cost_with_contingency_usd", "USD"),
        ("Budget", "sens_budget_usd", "USD"),
        ("Budget headroom (budget - rent committed: the larger of the run and the target window)",
         "budget_headroom_usd", "USD"),
        ("GPU-hour price", "gpu_hour_usd", "USD/GPU-h")]),
    ("The ask: buy (capex in year 1, opex every year; by year on TCO)", [
        ("Servers (capex, one-off, year 1)", "tco_server_capex_usd", "USD"),
        ("Network: switches, optics and cables (capex, one-off, year 1)", "tco_network_capex_usd", "USD"),
        ("Hardware capex (one-off, year 1)", "tco_capex_usd", "USD"),
        ("Opex per year: power with PUE, storage, space, staff, support", "tco_opex_per_year_usd", "USD/year"),
        ("Depreciation per year", "tco_depreciation_per_year_usd", "USD/year"),
        ("Years (TCO horizon = depreciation period)", "tco_years", "years"),
        ("TCO over the horizon (capex + opex x years)", "tco_total_usd", "USD"),
        ("All-in TCO per GPU-hour", "tco_all_in_usd_per_gpu_hour", "USD/GPU-h"),
        ("Contingency on the TCO (apart from it)", "tco_contingency_usd", "USD"),
        ("Rent of the same GPUs 24/7 over the horizon (alternative)", "tco_rent_total_usd", "USD"),
        ("NPV of buying (net of the residual value)", "tco_npv_owned_usd", "USD"),
        ("NPV of renting the same GPUs over the same horizon", "tco_npv_rent_usd", "USD"),
        ("Buying saves, by NPV (below 0: renting is cheaper)", "tco_npv_buy_saving_usd", "USD"),
        ("Owned cost of this run (power + depreciation over its days)", "self_build_total_usd", "USD"),
        ("Months of 24/7 use to break even on buying (0 = never)", "break_even_months_24x7", "months")]),
    ("What it buys", [
        ("GPUs procured (billed)", "train_gpus_billed", "GPUs"),
        ("GPUs in the job", "training.num_gpus", "GPUs"),
        ("Nodes", "plan_nodes", "nodes"),
        ("Network: NICs per node", "net_nics_per_node", "count"),
        ("Network: NIC line rate", "net_nic_Gbps", "Gbit/s"),
        ("Network: switches", "tco_switches", "count"),
        ("Storage: dataset, checkpoints and logs", "storage_total_TB", "TB")]),
    ("What it delivers", [
        ("Training days (time model in use)", "train_days", "days"),
        ("Target days", "training.target_days", "days"),
        ("Tokens per day", "train_tokens_per_day", "tokens"),
        ("MFU in use", "train_mfu", "fraction"),
        ("Memory per GPU", "zero_total_per_gpu_GB", "GB"),
        ("Memory headroom per GPU", "zero_hbm_headroom_GB", "GB")]),
]
_WHY = [("GPU", "gpu", "id"), ("GPUs procured", "train_gpus_billed", "GPUs"), ("Training days", "train_days", "days"),
        ("Training cost (rent)", "train_cost_usd", "USD"), ("Owned cost of the run", "self_build_total_usd", "USD"),
        ("Hard checks failed", "hard_failures_count", "count")]


def write_recommendation(w: Writer, names: list[str], results: list[dict], plan: PlanBook) -> None:
    from workbook.writer import planbook_serving as srv

    if not srv.trains(plan):
        return srv.write_serving_recommendation(w, names, results, plan)
    sheet = RECOMMENDATION
    from workbook.writer.cover_ask import live_title

    live_title(w, sheet, results, plan)
    w.text(sheet, 1, 0, f"Request {plan.request_id}: the recommended plan (the first scenario column, layout "
           f"{names[0]}), live from its sheets; the alternatives beside it.", "subtitle", "label")
    _header(w, sheet, ("Line item", "Value", "Unit", "Sheet"), (58, 18, 12, 16))
    row = HEAD
    for title, rows in _REC:
        row += 2
        w.text(sheet, row, 0, title, "block", "label")
        row = line_rows(w, sheet, row, rows, results, plan)
    last = row  # the years are the TCO sheet's and the Cost Breakdown's: the Recommendation prints on one page
    # beside the plan: the alternatives (every scenario column), so the page holds both
    row, col0 = HEAD, 5  # the names share the table's header row
    w.text(sheet, row, col0, "Why this option: the alternatives", "header", "header")
    from workbook.writer.cover_ask import readable_name, readable_name_formula

    for i, n in enumerate(names):
        w.formula(sheet, row, col0 + 1 + i, "=" + readable_name_formula(w, i), readable_name(
            plan.inputs[i], results[i]["train_gpus_billed"]), "link", key="readable_name", style="header")
    row += 1
    w.text(sheet, row, col0, "Layout (scenario name)", "label", "label")
    for i, n in enumerate(names):
        w.formula(sheet, row, col0 + 1 + i, f"=Plan!{xl_rowcol_to_cell(HEADER_ROW, value_col(i))}", n, "link",
                  key="name", style="source")
    for label, name, unit in _WHY:
        row += 1
        w.text(sheet, row, col0, f"{label} ({unit})" if unit not in ("id", "count") else label, "label", "label")
        for i in range(len(names)):
            _link(w, sheet, row, col0 + 1 + i, name, results, i, unit, cached=_cached(name, results, plan, i))
    w.ws[sheet].set_column(4, 4, 3)
    w.ws[sheet].set_column(col0, col0, 26)
    w.ws[sheet].set_column(col0 + 1, col0 + len(names), 20)
    row = srv.write_serving_block(w, names, results, plan, max(row, last) + 2)
    w.finish_sheet(sheet, 5 + len(names), row)


def line_rows(w: Writer, sheet: str, row: int, rows: list[tuple[str, str, str]], results: list[dict], plan: PlanBook,
              i: int = 0) -> int:
    """One line per (label, row key, unit) below ``row``: label, link to column ``i``, unit, source sheet.
    Returns the last row written."""
    for label, name, unit in rows:
        row += 1
        w.text(sheet, row, 0, label, "label", "label")
        _link(w, sheet, row, 1, name, results, i, unit=unit, cached=_cached(name, results, plan, i))
        w.text(sheet, row, 2, unit_text(unit), "unit", "unit")
        w.text(sheet, row, 3, w.book.layout.rows[name][0], "source", "source")
    return row


#: the year-by-year table (Cost Breakdown)
_BY_YEAR = (("Share in service", "frac"), ("Capex", "capex"), ("Power with PUE", "power"), ("Storage", "storage"),
            ("Staff", "staff"), ("Support", "support"), ("Opex", "opex"), ("Depreciation", "depreciation"),
            ("Cash out", "cash"), ("Cumulative", "cumulative"), ("Rent 24/7", "rent"),
            ("Rent cumulative", "rent_cumulative"))


def _year_table(w: Writer, sheet: str, row: int, title: str, columns: tuple, results: list[dict], i: int = 0) -> int:
    """Years 1..TCO_MAX_YEARS as rows, one column per series: links to the TCO sheet's per-year rows of scenario
    column ``i`` (the recommended one; capex: the one-off in year 1, blank after). Returns the last row written."""
    from workbook.calc.tco_years import YEARS, key

    row += 2
    w.text(sheet, row, 0, title, "block", "label")
    row += 1
    w.text(sheet, row, 0, "Year", "header", "header")
    for col, (head, _) in enumerate(columns, start=1):
        w.text(sheet, row, col, head, "header", "header")
    names = {s: [("tco_capex_usd" if k == 1 else None) if s == "capex" else key(k, s) for k in YEARS]
             for _, s in columns}
    # one number format per column, from all its years (whole dollars down the column, not $0.00 past the horizon)
    fmts = {s: ("0.0%" if s == "frac" else USD_FORMAT) for s in names}
    for j, k in enumerate(YEARS):
        row += 1
        w.text(sheet, row, 0, f"Year {k}", "label", "label")
        for col, (_, series) in enumerate(columns, start=1):
            name = names[series][j]
            if name is not None:  # capex: the one-off in year 1 only
                w.formula(sheet, row, col, guarded(w, _ref(w, name, i), i), results[i][name], "link", key=name,
                          num_format=fmts[series])
    w.fit_columns(sheet, 1, len(columns), 12, 18)
    return row


def _cached(name: str, results: list[dict], plan: PlanBook, i: int = 0) -> Any:
    """Cached value of a calculation row, else of a Plan input cell (inputs are not in the results)."""
    if name in results[i]:
        return results[i][name]
    v = plan.inputs[i].get(name)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


#: Plan inputs the planner's layout search chooses (within the request's constraints), not the request itself
PLANNER_KEYS = frozenset({
    "gpu", "training.num_gpus", "training.tp", "training.pp", "training.cp", "training.ep", "training.etp",
    "training.micro_batch", "training.grad_accum", "training.zero_stage", "training.recompute",
    "training.precision", "training.virtual_stages", "training.pipeline_schedule", "training.last_stage_layers",
    "inference.tp", "inference.ep", "inference.replicas", "inference.disaggregated", "inference.prefill_ep",
    "inference.batch"})


def _source(key: str, plan: PlanBook, catalog, gpu, model, note: str = "") -> tuple[str, str]:
    """(source, as-of) of one input of the recommended plan: the catalogue record, the request, the planner's
    search, a catalogue default, or the tool's default (with the input's own note: the publication it follows)."""
    field_ = key.split(".")[-1]
    date = plan.data.get("request", {}).get("date") or "-"
    if key == "gpu":
        return f"chosen by the planner's search among the request's GPUs; record: {gpu.name}: {gpu.source}", \
            str(gpu.as_of)
    if key == "model":
        return f"request {plan.request_id}; record: {model.name}: {model.source}", str(model.as_of)
    if key in PLANNER_KEYS and key in plan.set_by_request[0]:
        return f"chosen by the planner's layout search within the constraints of request {plan.request_id}", date
    if key in plan.set_by_request[0]:
        return f"request {plan.request_id}", date
    rec = catalog.defaults.records.get(field_)
    if rec is not None:
        return f"catalogue default ({field_}): {rec.source}", str(rec.as_of)
    return "tool default" + (f" ({note})" if note else " (not in the catalogue; set it in the request)"), "-"


def price_source(gpu, basis: str) -> tuple[str, str]:
    """(source, as-of) of the GPU-hour price of *basis*: the GPU record's field source (the price page)."""
    from workbook.catalog.provenance import PRICE_FIELD_BY_BASIS

    field_ = PRICE_FIELD_BY_BASIS.get(basis, "")
    text = gpu.field_sources.get(field_) or gpu.source
    return f"{gpu.name}, {basis} price: {text}", str(gpu.as_of)


#: Plan inputs that only a training run reads (its layout, storage IO, the budget against the training cost)
TRAINING_INPUTS = ("training.", "storage.", "cost.budget_usd")
#: Plan inputs that only serving reads
SERVING_INPUTS = ("inference.",)


def applies(key: str, trains: bool, serves: bool) -> bool:
    """Whether the Assumptions sheet lists input *key* of a plan that trains and/or serves: a serving-only plan
    leaves the training inputs out (its column computes them from defaults nobody asked for), a training-only
    plan the serving inputs; a plan of both lists every input."""
    if key.startswith(TRAINING_INPUTS):
        return trains
    if key.startswith(SERVING_INPUTS):
        return serves
    return True


def write_assumptions(w: Writer, results: list[dict], plan: PlanBook, catalog, gpu, model) -> None:
    """Every Plan input of the recommended plan that its purpose reads: value (link to Plan, or the Defaults value
    in use), unit, source."""
    from workbook.writer.planbook_serving import serves, trains

    sheet = ASSUMPTIONS
    t, s = trains(plan), serves(plan)
    what = "" if t and s else (" (serving: the training inputs left out)" if s else
                               " (training: the serving inputs left out)")
    w.title(sheet, "Assumptions", f"Every input of the recommended plan{what} (request {plan.request_id}): the value "
            "in use (a link to Plan, or to the Defaults value a blank input takes), unit, source and as-of date.")
    _header(w, sheet, ("Input", "Value", "Unit", "Source", "As of", "Key", "Flag"), (46, 16, 12, 70, 11, 30, 12))
    row = HEAD
    d_names = set(catalog.defaults.records)
    basis = str(plan.inputs[0].get("cost.price_basis") or "on_demand")
    flags = plan.flags  # the recommended column's, set by the build (the Cover reads them too)
    flagged = {"gpu": [f for f in flags if not f.record.startswith("models.yaml")],
               "model": [f for f in flags if f.record.startswith("models.yaml")]}
    for r in input_rows():
        if r.key == "name" or r.key not in w.book.layout.rows or not applies(r.key, t, s):
            continue
        row += 1
        value = plan.inputs[0].get(r.key)
        w.text(sheet, row, 0, r.label, "label", "label")
        field_ = r.key.split(".")[-1]
        if value is None and field_ in d_names:
            v = float(catalog.defaults.value(field_))
            w.formula(sheet, row, 1, f"=d_{field_}", v, "link", key=r.key, num_format=plan_format(r.unit, v))
        elif value is None:
            w.text(sheet, row, 1, "blank (none)" if r.optional else "blank", "text", "text")
        else:
            _link(w, sheet, row, 1, r.key, results, unit=r.unit, cached=_cached(r.key, results, plan))
        src, as_of = _source(r.key, plan, catalog, gpu, model, r.note)
        w.text(sheet, row, 2, unit_text(r.unit), "unit", "unit")
        w.text(sheet, row, 3, src, "text", "text")
        w.text(sheet, row, 4, as_of, "text", "text")
        w.text(sheet, row, 5, r.key, "key", "key")
        if flagged.get(r.key):
            w.text(sheet, row, 6, "/".join(sorted({f.status for f in flagged[r.key]})), "check", "text")
    row += 1  # the price in use: the catalogue's price of the basis, or the request's
    w.text(sheet, row, 0, "GPU-hour price in use", "label", "label")
    _link(w, sheet, row, 1, "gpu_hour_usd", results, unit="USD/GPU-h")
    src, as_of = (_source("cost.gpu_hour_usd", plan, catalog, gpu, model) if plan.inputs[0].get("cost.gpu_hour_usd")
                  is not None else price_source(gpu, basis))
    w.text(sheet, row, 2, "USD/GPU-h", "unit", "unit")
    w.text(sheet, row, 3, src, "text", "text")
    w.text(sheet, row, 4, as_of, "text", "text")
    w.text(sheet, row, 5, "gpu_hour_usd", "key", "key")
    price_flags = [f for f in flags if f.field.startswith("price_")]
    if price_flags:
        w.text(sheet, row, 6, price_flags[0].status, "check", "text")
    row += 2
    w.text(sheet, row, 0, "Estimated or assumed catalogue values this plan rests on", "block", "label")
    for f in flags:
        row += 1
        w.text(sheet, row, 0, f.text, "label", "label")
        w.text(sheet, row, 3, f"{f.record} {f.field}: {f.source}", "text", "text")
        w.text(sheet, row, 6, f.status, "check", "text")
    if not flags:
        row += 1
        w.text(sheet, row, 0, "none: every value of the GPU, its step-time factors, price and model is published "
               "or measured", "label", "label")
    w.finish_sheet(sheet, 6, row)


_BREAKDOWN = [
    ("One-off (buy)", [("Servers for the GPUs procured", "tco_server_capex_usd", "USD"),
                       ("Capex per GPU (server price / GPUs per server)", "capex_per_gpu_usd", "USD/GPU"),
                       ("Server price (one server of the GPU: the scenario's, else the default)",
                        "cost_server_capex_usd", "USD/server"),
                       ("Network: NIC ports (nodes x NICs per node)", "tco_nic_ports", "count"),
                       ("Network: ports per switch", "tco_switch_ports", "count"),
                       ("Network: leaf switches", "tco_leaf_switches", "count"),
                       ("Network: spine switches (0 = one leaf)", "tco_spine_switches", "count"),
                       ("Network: switch price", "tco_switch_usd", "USD/switch"),
                       ("Network: links (two transceivers and a cable each)", "tco_links", "count"),
                       ("Network: optics and cables", "tco_optics_capex_usd", "USD"),
                       ("Network: switches, optics and cables", "tco_network_capex_usd", "USD"),
                       ("Hardware capex (servers + network)", "tco_capex_usd", "USD")]),
    ("Recurring per year (buy)", [("IT load: GPUs + hosts + switches", "tco_it_power_kW", "kW"),
                                  ("Power with PUE for the IT load, 24/7", "tco_power_per_year_usd", "USD/year"),
                                  ("Data-centre space", "tco_space_per_year_usd", "USD/year"),
                                  ("Storage kept (dataset, checkpoints, logs)", "tco_storage_TB", "TB"),
                                  ("Storage price", "tco_storage_usd_per_TB_month", "USD/TB-month"),
                                  ("Storage", "tco_storage_per_year_usd", "USD/year"),
                                  ("Staff", "tco_staff_per_year_usd", "USD/year"),
                                  ("Support", "tco_support_per_year_usd", "USD/year"),
                                  ("Opex per year", "tco_opex_per_year_usd", "USD/year")]),
    ("Recurring over the run (buy)", [("Power with PUE", "self_build_power_usd", "USD"),
                                      ("Depreciation", "self_build_depreciation_usd", "USD"),
                                      ("Owned cost of the run (power + depreciation)", "self_build_total_usd", "USD"),
                                      ("Power per GPU-hour (TDP x PUE x price)", "power_usd_per_gpu_hour", "USD/GPU-h"),
                                      ("PUE in use", "cost_pue", "x"),
                                      ("Electricity price in use", "cost_electricity_usd_per_kWh", "USD/kWh")]),
    ("Multi-year TCO (buy)", [("TCO horizon (depreciation period)", "tco_years", "years"),
                              ("Depreciation per year (hardware capex / years)", "tco_depreciation_per_year_usd",
                               "USD/year"),
                              ("TCO over the horizon (capex + opex x years)", "tco_total_usd", "USD"),
                              ("All-in TCO per GPU-hour", "tco_all_in_usd_per_gpu_hour", "USD/GPU-h"),
                              ("Rent of the same GPUs 24/7 over the horizon", "tco_rent_total_usd", "USD"),
                              ("Owned TCO as a share of that rent", "tco_vs_rent_frac", "fraction"),
                              ("Discount rate per year (assumed)", "tco_discount_rate_frac", "fraction"),
                              ("Residual value at the horizon (estimated)", "tco_residual_usd", "USD"),
                              ("NPV of buying (net of the residual value)", "tco_npv_owned_usd", "USD"),
                              ("NPV of renting the same GPUs over the same horizon", "tco_npv_rent_usd", "USD"),
                              ("Buying saves, by NPV (below 0: renting is cheaper)", "tco_npv_buy_saving_usd",
                               "USD"),
                              ("Servers and power only, per GPU-hour (book T8)", "tco_usd_per_gpu_hour",
                               "USD/GPU-h"),
                              ("Break-even GPU-hours per GPU (0 = never)", "break_even_gpu_hours", "GPU-h"),
                              ("Break-even months of 24/7 use (0 = never)", "break_even_months_24x7", "months")]),
    ("Rent (recurring, opex)", [("GPU-hour price", "gpu_hour_usd", "USD/GPU-h"),
                                ("GPU-hours billed over the run", "train_gpu_hours", "GPU-h"),
                                ("Training cost at the actual duration", "train_cost_usd", "USD"),
                                ("Cost of the GPUs reserved for the target window", "train_cost_target_usd", "USD"),
                                ("Owned cost of the run as a share of the rent", "self_build_vs_cloud_frac",
                                 "fraction")]),
    ("Contingency (separate)", [("Contingency share", "sens_contingency_frac", "fraction"),
                                ("Contingency", "sens_contingency_usd", "USD"),
                                ("Training cost plus contingency", "sens_cost_with_contingency_usd", "USD"),
                                ("Contingency on the owned TCO", "tco_contingency_usd", "USD"),
                                ("Owned TCO plus contingency", "tco_total_with_contingency_usd", "USD")]),
]
#: rows about the training run: a plan without one (a serving-only request) leaves them out, since the
#: column computes them from the training defaults, not from anything the request asked for
_TRAINING_RUN = {"self_build_power_usd", "self_build_depreciation_usd", "self_build_total_usd", "train_gpu_hours",
                 "train_cost_usd", "train_cost_target_usd", "self_build_vs_cloud_frac", "sens_contingency_usd",
                 "sens_cost_with_contingency_usd"}
#: what a serving-only plan shows instead: its block titles, and the rent of the serving fleet
_SERVING_TITLES = {"Recurring over the run (buy)": "Power (buy)"}
#: and its labels that differ: a serving fleet keeps the weights it serves (TCO sheet, tco_storage_TB by purpose)
_SERVING_LABELS = {"tco_storage_TB": "Storage kept (the model weights served, one copy)"}
_SERVING_RENT = [("Serving fleet rented, per hour", "infer_hourly_cost_usd", "USD/h"),
                 ("Serving fleet rented, per day", "infer_daily_cost_usd", "USD/day"),
                 ("Serving cost per 1M output tokens", "infer_usd_per_1M_tokens", "USD/1M tokens")]


def breakdown_blocks(trains: bool) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The Cost Breakdown's blocks: all of them for a plan with a training run; for a serving-only plan
    the same without the training run's rows, the storage labelled as the weights served, and the serving fleet's
    rent in the rent block."""
    if trains:
        return _BREAKDOWN
    out = []
    for title, rows in _BREAKDOWN:
        kept = [(_SERVING_LABELS.get(r[1], r[0]),) + r[1:] for r in rows if r[1] not in _TRAINING_RUN]
        if title.startswith("Rent"):
            kept += _SERVING_RENT
        out.append((_SERVING_TITLES.get(title, title), kept))
    return out


def write_breakdown(w: Writer, results: list[dict], plan: PlanBook) -> None:
    sheet = BREAKDOWN
    w.title(sheet, "Cost breakdown", "One-off vs recurring, owned TCO beside the rental price, contingency apart, "
            "and the TCO year by year: links to the Cost, Sensitivity and TCO rows of the recommended plan.")
    _header(w, sheet, ("Line item", "Value", "Unit", "Sheet"), (58, 18, 12, 16))
    from workbook.writer.planbook_serving import trains

    row = HEAD
    for title, rows in breakdown_blocks(trains(plan)):
        row += 2
        w.text(sheet, row, 0, title, "block", "label")
        for label, name, unit in rows:
            row += 1
            w.text(sheet, row, 0, label, "label", "label")
            _link(w, sheet, row, 1, name, results, unit=unit)
            w.text(sheet, row, 2, unit_text(unit), "unit", "unit")
            w.text(sheet, row, 3, w.book.layout.rows[name][0], "source", "source")
    row = _year_table(w, sheet, row, "TCO by year (buy; rent beside; years past the horizon 0)", _BY_YEAR, results)
    w.finish_sheet(sheet, len(_BY_YEAR), row)


def write_rejected(w: Writer, plan: PlanBook) -> None:
    """The planner's rejections by check: how many, and the closest miss (value, limit, excess) as text."""
    sheet = REJECTED
    w.title(sheet, "Rejected alternatives", "Layouts the search rejected, by the check that failed, with the "
            "closest miss (planner outcome; text, not live).")
    _header(w, sheet, ("Check", "Layouts", "Closest GPU", "Closest layout", "Value", "Limit", "Unit", "Excess"),
            (40, 9, 10, 44, 14, 14, 10, 10))
    row = HEAD
    for r in plan.data.get("training", {}).get("rejected", []):
        row += 1
        rejected_row(w, sheet, row, r["label"], r)
    from workbook.writer.planbook_serving import write_serving_rejected

    row = write_serving_rejected(w, plan, row)
    w.finish_sheet(sheet, 7, max(row, HEAD + 1))


def rejected_row(w: Writer, sheet: str, row: int, label: str, r: dict) -> None:
    """One check's rejections: label, count, closest GPU and layout as text; value, limit, excess as numbers."""
    c = r["closest"]
    w.text(sheet, row, 0, label, "text", "text")
    w.number(sheet, row, 1, float(r["count"]), "calc", "calc", num_format="#,##0")
    w.text(sheet, row, 2, c["gpu"], "text", "text")
    w.text(sheet, row, 3, c["layout"], "text", "text")
    for col, key in ((4, "value"), (5, "limit")):
        w.number(sheet, row, col, float(c[key]), "calc", "calc",
                 num_format=plan_format(c["unit"], float(c[key])) or "General")
    w.text(sheet, row, 6, unit_text(c["unit"]), "unit", "unit")
    w.number(sheet, row, 7, float(c["excess_frac"]), "calc", "calc", num_format="+0.0%;-0.0%")


def footer(plan: PlanBook) -> str:
    """The printed sheets' footer: file, tool version, request date; sheet; page x of y."""
    from workbook import __version__
    from workbook.writer.printing import FOOTER

    date = plan.data.get("request", {}).get("date") or "undated"
    return FOOTER.replace("&L&8&F", f"&L&8&F, workbook {__version__}, {date}")


def plan_sheet_names(plan: PlanBook) -> tuple[str, ...]:
    """The plan sheets of this plan: a re-plan (version 2 on) adds the Changes sheet."""
    return PLAN_SHEETS + ((CHANGES,) if plan.version > 1 else ())


def write_changes(w: Writer, plan: PlanBook) -> None:
    """What changed since the plan this one replaced: request fields, catalogue files, results (text)."""
    sheet = CHANGES
    w.title(sheet, f"Changes: version {plan.version} against version {plan.version - 1}", "The request's fields, the "
            "catalogue files (hashes) and the results that differ from the plan this one replaced (its files are kept "
            "as <request id>.backup-N.*).")
    _header(w, sheet, ("What", "Item", "Before", "After"), (12, 50, 40, 40))
    row = HEAD
    for what, item, before, after in plan.changes or [("-", "nothing changed", "-", "-")]:
        row += 1
        for col, text in enumerate((what, item, before, after)):
            w.text(sheet, row, col, text, "text", "text")
    w.finish_sheet(sheet, 3, row)


def write_plan_sheets(w: Writer, names: list[str], results: list[dict], plan: PlanBook, catalog, planned) -> None:
    write_recommendation(w, names, results, plan)
    write_assumptions(w, results, plan, catalog, planned[0].gpu, planned[0].model)
    from workbook.writer.planbook_scenarios import write_scenarios

    write_scenarios(w, names, results, plan)
    write_breakdown(w, results, plan)
    write_rejected(w, plan)
    from workbook.writer.planbook_glossary import write_glossary
    from workbook.writer.printing import HEADER_FOOTER_MARGIN_IN

    write_glossary(w)
    if plan.version > 1:
        write_changes(w, plan)
    purpose_print_area(w, plan)
    cash_flow_print_area(w)

    for sheet in pdf_sheets(w.ws):
        w.ws[sheet].set_footer(footer(plan), {"margin": HEADER_FOOTER_MARGIN_IN})


def purpose_print_area(w: Writer, plan: PlanBook) -> None:
    """A plan of one purpose prints only its own Sensitivity block (and the charts below the rows): the block of the
    other purpose (computed from defaults nobody asked for) stays on screen, out of the print area and the PDF."""
    import re

    from workbook.calc import sensitivity, serving_sensitivity
    from workbook.writer.planbook_serving import serves, trains

    t, s = trains(plan), serves(plan)
    if t == s:
        return
    ws = w.ws["Sensitivity"]
    m = re.search(r"\$([A-Z]+)\$(\d+)$", ws.print_area_range or "")
    if not m:
        return
    rows = w.book.layout.rows

    def span(mod) -> tuple[int, int]:
        got = [rows[q.name][1] for q in mod.QUANTITIES if q.name in rows and rows[q.name][0] == "Sensitivity"]
        return min(got), max(got)

    asked, other = (span(sensitivity), span(serving_sensitivity)) if t else (span(serving_sensitivity),
                                                                             span(sensitivity))
    col, last = m.group(1), int(m.group(2))
    sheet = quote_sheet("Sensitivity")
    first_end = asked[1] + 1 if asked[1] < other[0] else other[0] - 1  # 1-based last row before the other block
    areas = [f"{sheet}!$A$1:${col}${first_end}"]
    if other[1] + 2 <= last:  # what follows the other block: the asked block (serving first) or the charts
        areas.append(f"{sheet}!$A${other[1] + 2}:${col}${last}")
    ws.print_area_range = ",".join(areas)


def cash_flow_print_area(w: Writer) -> None:
    """The plan's Cash Flow prints its inputs and rent and buy figures, the window's totals and the fiscal quarter and
    year subtotals (a few pages); the month-by-month rows stay on screen, out of the print area and the PDF."""
    import re

    ws = w.ws.get(CASH_FLOW)
    m = re.search(r"\$([A-Z]+)\$(\d+)$", ws.print_area_range or "") if ws is not None else None
    if not m:
        return
    rows = w.book.layout.rows
    col, last, sheet = m.group(1), int(m.group(2)), quote_sheet(CASH_FLOW)
    head_end = rows["cf_horizon_months"][1] + 1  # 1-based: the title, the header and the inputs through this row
    periods = rows["cf_rent_total_usd"][1]  # 1-based row of the periods' block title: the totals, quarters, years
    ws.print_area_range = f"{sheet}!$A$1:${col}${head_end},{sheet}!$A${periods}:${col}${last}"
