"""The plan Cover's first page (issue 23): the ask a budget holder signs, live from the recommended scenario
column (the first): a title (``Recommendation: H800 x 528, rent`` or ``Not feasible: ...`` in red), one sentence
(what, how many, how long, what it costs against the budget, the slack to the deadline), the decision asked for
(rent at which price basis and term), a traffic light, the key figures, the three largest risks with their
switching values, and the version and date. Every figure and title is a formula over the scenario's sheets, so
picking another GPU on Plan retitles the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer import styles
from workbook.writer.cover_chart import TABLE_ROWS, write_cost_chart
from workbook.writer.cover_fix import LABEL as FIX_LABEL
from workbook.writer.cover_fix import PART_ROWS, fix_text, write_parts
from workbook.writer.input_guard import shown
from workbook.writer.layout import HEADER_ROW, value_col
from workbook.writer.planbook import _ref as ref
from workbook.writer.planbook import plan_format
from workbook.writer.xlsx import Writer

SHEET = "Cover"
#: the price basis a rental is quoted at, and the commitment it stands for (gpus.yaml field_sources)
TERMS = (("on_demand", "on-demand price, no commitment"),
         ("reserved", "reserved price, a 1-year commitment"),
         ("reserved_1y", "1-year reserved price, a 1-year commitment"),
         ("reserved_3y", "3-year reserved price, a 3-year commitment"),
         ("spot", "spot price, interruptible, no commitment"))
#: the days a price basis commits to (a reserved price is a 1- or 3-year contract; the catalogue's price notes)
TERM_DAYS = {"on_demand": 0, "reserved": 365, "reserved_1y": 365, "reserved_3y": 1095, "spot": 0}
#: traffic light texts, index 1 + any amber + 2 x any failure
LIGHTS = ("GREEN: feasible, every check passes with margin",
          "AMBER: feasible, but a warning, a risk within the sensitivity step or a price term longer than the run",
          "RED: not feasible (a hard check fails)", "RED: not feasible (a hard check fails)")
READABLE_SUFFIX = ", rent"
NO_DECISION = ("Decision asked for: none yet: the plan fails a hard check (the title says which); the cheapest change "
               "that fixes it is below")
FIRST_PAGE_ROWS = 46  # the printed Cover ends here (one page: the ask, the risks, the chart)
#: below the printed page: the price bases and their terms, the traffic light texts, the parts of the cheapest fix,
#: then (cover.py) the rest
TERMS_ROW = FIRST_PAGE_ROWS + 2
LIGHTS_ROW = TERMS_ROW + len(TERMS) + 2
FIX_ROW = LIGHTS_ROW + len(LIGHTS) + 2
CHART_ROW = FIX_ROW + PART_ROWS + 2
ABOUT_ROW = CHART_ROW + TABLE_ROWS + 3


@dataclass
class Ask:
    """Where the key figures sit on the Cover (0-based rows of column B) once written."""

    rows: dict[str, int]

    def cell(self, key: str) -> str:
        return xl_rowcol_to_cell(self.rows[key], 1)


_LINE_FORMATS = {"title": {"bold": True, "font_size": 16}, "sentence": {"bold": True, "font_size": 12},
                 "decision": {"font_size": 11}, "light": {"bold": True, "font_size": 11}}


def _line_format(w: Writer, kind: str):
    """The workbook's one format of a line *kind* (made on first use)."""
    fmts = w.__dict__.setdefault("_cover_line_formats", {})
    if kind not in fmts:
        fmts[kind] = w.wb.add_format(_LINE_FORMATS[kind])
    return fmts[kind]


def line(w: Writer, row: int, col: int, formula: str, cached: str, key: str, kind: str, sheet: str = SHEET,
         guard: bool = True) -> None:
    """A one-line text formula that runs over the empty cells to its right (never wrapped, never sizing its
    column): the Cover's title, sentence, decision and traffic light; a plan sheet's live title (*guard* False:
    the title itself names the input in error)."""
    formula = shown(formula) if guard else formula
    w.ws[sheet].write_formula(row, col, formula, _line_format(w, kind), cached)
    w.book.cells.add(sheet, row, col, "output", key, content=formula, cached=cached)


def text_line(w: Writer, row: int, col: int, text: str, kind: str = "decision") -> None:
    """A one-line text that runs over the empty cells to its right (never wrapped, never sizing its column)."""
    w.ws[SHEET].write_string(row, col, text, _line_format(w, kind))
    w.book.cells.add(SHEET, row, col, "text", content=text)


def live_title(w: Writer, sheet: str, results: list[dict], plan, i: int = 0, gpus_key: str = "training.num_gpus",
               gpus_row: str = "train_gpus_billed") -> None:
    """Row 0 of a plan sheet: ``Recommendation: H800 x 528, rent`` or ``Not feasible: ...: <what fails>`` (red),
    live from column *i*."""
    r = results[i]
    name_f = readable_name_formula(w, i, gpus_key)
    name_v = readable_name(plan.inputs[i], r[gpus_row])
    failed = r["hard_failures_count"] > 0
    value = (f"Not feasible: {name_v}: {_status_text(w, results[i:i + 1])}" if failed else
             f"Recommendation: {name_v}")
    line(w, 0, 0, f'=IF({ref(w, "hard_failures_count", i)}>0,"Not feasible: "&{name_f}&": "&'
         f'{ref(w, "scenario_status", i)},"Recommendation: "&{name_f})', value, f"{sheet}_title", "title", sheet,
         guard=False)
    red = w.wb.add_format({"font_color": styles.FAIL_FONT, "bold": True, "font_size": 16})
    w.ws[sheet].conditional_format(0, 0, 0, 0, {"type": "text", "criteria": "begins with", "value": "Not feasible",
                                                "format": red})


def readable_name_formula(w: Writer, i: int, gpus_key: str = "training.num_gpus") -> str:
    """``H800 x 528, rent``: the column's GPU (Plan dropdown) and GPU count, live."""
    return f'UPPER({ref(w, "gpu", i)})&" x "&{ref(w, gpus_key, i)}&"{READABLE_SUFFIX}"'


def readable_name(inputs: dict[str, Any], gpus: float) -> str:
    return f"{str(inputs.get('gpu', '')).upper()} x {int(round(gpus))}{READABLE_SUFFIX}"


def fixed(x: float, d: int) -> str:
    """Python twin of Excel FIXED(x, d): thousands separators, d decimals, half away from zero."""
    from decimal import ROUND_HALF_UP, Decimal

    q = Decimal(1).scaleb(-d)
    return f"{Decimal(repr(float(x))).quantize(q, rounding=ROUND_HALF_UP):,}"


def term_text(basis: str) -> str:
    return dict(TERMS).get(basis, basis)


def _risks(r: dict[str, float], inputs: dict[str, Any]) -> list[tuple[str, str, float, float, str, str]]:
    """(driver, row key of today's value, today, switching value, unit, what flips) of the three risks."""
    over = float(inputs.get("training.overhead_factor") or 1.0)
    return [("MFU achieved", "train_mfu", r["train_mfu"], r["sens_mfu_switch_deadline_frac"], "%",
             "below it the run misses the deadline"),
            ("Wall-clock overhead factor", "training.overhead_factor", over, r["sens_overhead_switch_deadline_x"],
             "x", "above it the run misses the deadline"),
            ("GPU-hour price", "gpu_hour_usd", r["gpu_hour_usd"], r["sens_price_switch_budget_usd_per_gpu_hour"],
             "USD/GPU-h", "above it the cost exceeds the budget")]


def margin(today: float, switch: float) -> float:
    """How far the switching value is from today's value, as a share of today's (positive = room)."""
    return abs(switch - today) / today if today else 0.0


def write_ask(w: Writer, names: list[str], results: list[dict], plan) -> int:
    """The one-page ask from row 0 down; returns the last row written."""
    from workbook.writer.planbook_serving import trains

    if not trains(plan):
        return _write_serving_ask(w, names, results, plan)
    ws = w.ws[SHEET]
    r, inp = results[0], plan.inputs[0]
    ws.set_column(0, 0, 36)
    ws.set_column(1, 1, 20)
    ws.set_column(2, 2, 16)
    ws.set_column(3, 3, 16)
    ws.set_column(4, 4, 44)
    fails = ref(w, "hard_failures_count")
    failed = r["hard_failures_count"] > 0
    live_title(w, SHEET, results, plan)
    ask = Ask({})
    row = 4
    _ask_header(w, row)
    budget_v = r["sens_budget_usd"]
    committed_v = max(r["train_cost_usd"], r["train_cost_target_usd"])
    basis = str(inp.get("cost.price_basis") or "on_demand")
    figures = [
        ("gpus", "GPUs rented", f"={ref(w, 'train_gpus_billed')}", r["train_gpus_billed"], "GPUs",
         f'={ref(w, "plan_nodes")}&" nodes of "&{ref(w, "train_gpus_billed")}/{ref(w, "plan_nodes")}&" GPUs"',
         f"{int(r['plan_nodes'])} nodes of {int(r['train_gpus_billed'] / max(r['plan_nodes'], 1))} GPUs"),
        ("gpu", "GPU", f"=UPPER({ref(w, 'gpu')})", str(inp.get("gpu", "")).upper(), "id",
         f"=INDEX(cat_gpu_name,MATCH({ref(w, 'gpu')},cat_gpu_id,0))", None),
        ("basis", "Price basis (term)", f"={ref(w, 'cost.price_basis')}", basis, "choice",
         "=INDEX({terms},MATCH({b},{bases},0))", term_text(basis)),
        ("price", "GPU-hour price", f"={ref(w, 'gpu_hour_usd')}", r["gpu_hour_usd"], "USD/GPU-h",
         _price_note(plan, inp), None),
        ("days", "Run duration", f"={ref(w, 'train_days')}", r["train_days"], "days",
         "time model in use (Step Time sheet)", None),
        ("target", "Deadline (target duration)", f"={ref(w, 'training.target_days')}",
         float(inp.get("training.target_days") or 0), "days", "", None),
        ("slack", "Slack to the deadline", "={target}-{days}",
         float(inp.get("training.target_days") or 0) - r["train_days"], "days", "", None),
        ("run_cost", "Rent for the run", f"={ref(w, 'train_cost_usd')}", r["train_cost_usd"], "USD",
         "GPUs billed x run hours x price", None),
        ("committed", "Rent committed (the ask): the larger of the run and the target window",
         f"=MAX({ref(w, 'train_cost_usd')},{ref(w, 'train_cost_target_usd')})", committed_v, "USD", "", None),
        ("budget", "Budget", f"={ref(w, 'sens_budget_usd')}", budget_v, "USD", "0 = none given", None),
        ("headroom", "Budget headroom", f"={ref(w, 'budget_headroom_usd')}", r["budget_headroom_usd"], "USD",
         "budget - rent committed (Cost sheet; the budget check)", None),
        ("term", "Commitment of the price basis", "=INDEX({term_days},MATCH({basis},{bases},0))",
         float(TERM_DAYS.get(basis, 0)), "days", "the price assumes this term", None),
        ("term_rent", "Rent over the commitment, if longer than the run",
         "={gpus}*MAX({days},{target},{term})*c_hours_per_day*{price}",
         r["train_gpus_billed"] * max(r["train_days"], float(inp.get("training.target_days") or 0),
                                      TERM_DAYS.get(basis, 0)) * 24 * r["gpu_hour_usd"], "USD",
         "a shorter rental pays a higher (on-demand) price", None),
        ("buy", "Buying instead: owned TCO over the horizon", f"={ref(w, 'tco_total_usd')}", r["tco_total_usd"],
         "USD", "not asked for; see TCO", None),
    ]
    row = _figure_rows(w, ask, row, figures)
    row += 1
    w.text(SHEET, row, 0, FIX_LABEL, "label", "label")
    line(w, row, 1, write_parts(w, FIX_ROW, r, ask.cell), fix_text(r), "cover_fix", "decision")
    red_fix = w.wb.add_format({"font_color": styles.FAIL_FONT, "font_size": 11})
    w.ws[SHEET].conditional_format(row, 1, row, 1, {"type": "text", "criteria": "not containing",
                                                    "value": "none needed", "format": red_fix})
    row = _write_risks(w, ask, row + 2, r, inp)
    # the sentence, the decision and the light, now that the figures have cells
    sentence_v, sentence_f = _sentence(w, ask, r, inp, committed_v, budget_v, plan)
    line(w, 1, 0, sentence_f, sentence_v, "cover_sentence", "sentence")
    decision_f = (f'=IF({fails}>0,"{NO_DECISION}","Decision asked for: approve renting "&{ask.cell("gpus")}&" "'
                  f'&{ask.cell("gpu")}&" GPUs at the "&E{ask.rows["basis"] + 1}&" (not buying)")')
    decision_v = NO_DECISION if failed else (
        f"Decision asked for: approve renting {int(r['train_gpus_billed'])} {str(inp.get('gpu')).upper()} "
        f"GPUs at the {term_text(basis)} (not buying)")
    red = w.wb.add_format({"font_color": styles.FAIL_FONT})
    w.ws[SHEET].conditional_format(ask.rows["headroom"], 1, ask.rows["headroom"], 1,
                                   {"type": "cell", "criteria": "<", "value": 0, "format": red})
    line(w, 2, 0, decision_f, decision_v, "cover_decision", "decision")
    w.text(SHEET, 3, 0, "Traffic light", "label", "label")
    warn = ref(w, "warnings_count")
    risk_min = f"MIN(F{ask.rows['risk_first'] + 1}:F{ask.rows['risk_last'] + 1})"
    c = ask.cell
    longer = f"({c('term')}>MAX({c('days')},{c('target')}))"
    light_f = (f"=INDEX({_lights_table(w)},1+MIN(1,{warn}+({risk_min}<{ref(w, 'sens_step_frac')})+{longer})"
               f"+c_two*MIN(1,{fails}))")
    margins = [margin(t, s) for _, _, t, s, _, _ in _risks(r, inp)]
    longer_v = TERM_DAYS.get(basis, 0) > max(r["train_days"], float(inp.get("training.target_days") or 0))
    amber = min(1, r["warnings_count"] + (min(margins) < r["sens_step_frac"]) + longer_v)
    light_v = LIGHTS[int(amber + 2 * min(1, failed))]
    line(w, 3, 1, light_f, light_v, "cover_light", "light")
    _light_formats(w, 3, 1)
    row += 2
    w.text(SHEET, row, 0, "Version and date", "label", "label")
    date = (plan.data.get("request") or {}).get("date") or "undated"
    from workbook import __version__

    text = f"version {plan.version} of request {plan.request_id}, {date} (workbook {__version__})"
    text_line(w, row, 1, text)
    row = _flags_line(w, plan, row + 1)
    return write_cost_chart(w, row + 1, CHART_ROW, ask.cell, r)


def _flags_line(w: Writer, plan, row: int) -> int:
    """How many catalogue values the plan rests on are estimates or assumptions (the Assumptions sheet lists them)."""
    flags = getattr(plan, "flags", [])
    w.text(SHEET, row, 0, "Estimates and assumptions", "label", "label")
    where = list(dict.fromkeys(f"{f.record} ({f.status})" for f in flags))
    text = (f"{len(flags)} catalogue value(s) estimated or assumed, listed on Assumptions: " + "; ".join(where[:3])
            + (" ..." if len(where) > 3 else "")) if flags else \
        "none: the GPU, its step-time factors, the price and the model are published or measured"
    text_line(w, row, 1, text)
    return row


def _target(inp: dict, key: str) -> str:
    v = inp.get(key)
    return f"target {v:g} ms" if isinstance(v, (int, float)) else "target  ms"


def _price_note(plan, inp: dict) -> str:
    """The price's provenance in a few words: an estimate or an assumption says so (catalog.provenance)."""
    if inp.get("cost.gpu_hour_usd") is not None:
        return "given by the request"
    bad = [f for f in getattr(plan, "flags", []) if f.field.startswith("price_")]
    if bad:
        return f"{bad[0].status.upper()}: {bad[0].source}"[:90]
    return "catalogue price of the basis (Assumptions)"


def _status_text(w: Writer, results: list[dict]) -> str:
    from workbook.writer.status import status_texts

    return status_texts(results[:1], [value_col(0)])["scenario_status"][0]


def _ask_header(w: Writer, row: int) -> None:
    w.text(SHEET, row, 0, "The ask", "header", "header")
    for col, head in enumerate(("Value", "Unit", "", "Detail"), start=1):
        w.text(SHEET, row, col, head, "header", "header")


def _figure_rows(w: Writer, ask: Ask, row: int, figures: list) -> int:
    terms = _terms_table(w)
    for key, label, formula, cached, unit, detail, detail_v in figures:
        row += 1
        ask.rows[key] = row
        w.text(SHEET, row, 0, label, "label", "label")
        formula = formula.format(**{k: xl_rowcol_to_cell(v, 1) for k, v in ask.rows.items()}, bases=terms[0],
                                 term_days=terms[2])
        fmt = _fmt(unit, cached)
        w.formula(SHEET, row, 1, shown(formula), cached, "link", key=f"cover_{key}", num_format=fmt)
        w.text(SHEET, row, 2, unit if unit not in ("id", "choice") else "", "unit", "unit")
        if detail.startswith("="):
            detail = detail.format(terms=terms[1], bases=terms[0], b=xl_rowcol_to_cell(row, 1))
            w.formula(SHEET, row, 4, shown(detail), detail_v if detail_v is not None else "", "link",
                      key=f"cover_{key}_detail")
        elif detail:
            w.text(SHEET, row, 4, detail, "source", "source")
    return row


#: the risks' units beside the plan sheets' formats (planbook.plan_format): a share and a factor
_RISK_FORMATS = {"%": "0.0%", "x": "0.00"}


def _fmt(unit: str, v: Any) -> str | None:
    if isinstance(v, float) and unit in _RISK_FORMATS:
        return _RISK_FORMATS[unit]
    return plan_format(unit, v)


def _lights_table(w: Writer) -> str:
    """The traffic light's texts, below the printed page (the light formula picks one)."""
    row0 = LIGHTS_ROW
    w.text(SHEET, row0, 0, "Traffic light texts", "block", "label")
    for j, text in enumerate(LIGHTS, start=1):
        w.text(SHEET, row0 + j, 0, text, "text", "text")
    return f"$A${row0 + 2}:$A${row0 + 1 + len(LIGHTS)}"


def _terms_table(w: Writer) -> tuple[str, str]:
    """The price bases and their terms, below the printed page (the Detail formula looks the term up)."""
    row0 = TERMS_ROW
    w.text(SHEET, row0, 0, "Price bases and their commitment terms", "block", "label")
    for j, (basis, text) in enumerate(TERMS, start=1):
        w.text(SHEET, row0 + j, 0, basis, "text", "text")
        w.text(SHEET, row0 + j, 1, text, "text", "text")
        w.number(SHEET, row0 + j, 2, float(TERM_DAYS[basis]), "constant", "constant", key=f"term_days_{basis}")
        w.text(SHEET, row0 + j, 3, "days committed", "unit", "unit")
    a, b = row0 + 2, row0 + 1 + len(TERMS)
    return f"$A${a}:$A${b}", f"$B${a}:$B${b}", f"$C${a}:$C${b}"


def _write_risks(w: Writer, ask: Ask, row: int, r: dict, inp: dict) -> int:
    w.text(SHEET, row, 0, "Three largest risks", "header", "header")
    for col, head in enumerate(("Today", "Switching value", "Unit", "What flips", "Margin"), start=1):
        w.text(SHEET, row, col, head, "header", "header")
    ask.rows["risk_first"] = row + 1
    switch_f = {"train_mfu": f"={ref(w, 'sens_mfu_switch_deadline_frac')}", "training.overhead_factor": f"={ref(w, 'sens_overhead_switch_deadline_x')}",
                "gpu_hour_usd": f"={ref(w, 'sens_price_switch_budget_usd_per_gpu_hour')}"}
    for driver, key, today, switch, unit, flips in _risks(r, inp):
        row += 1
        fmt = _fmt(unit, float(today))
        w.text(SHEET, row, 0, driver, "label", "label")
        w.formula(SHEET, row, 1, shown(f"={ref(w, key)}"), float(today), "link", key=f"cover_risk_{key}",
                  num_format=fmt)
        w.formula(SHEET, row, 2, shown(switch_f[key]), float(switch), "link", key=f"cover_switch_{key}", num_format=fmt)
        w.text(SHEET, row, 3, "" if unit == "%" else unit, "unit", "unit")  # the value already reads 48.0%
        w.text(SHEET, row, 4, flips, "source", "source")
        b, c = xl_rowcol_to_cell(row, 1), xl_rowcol_to_cell(row, 2)
        w.formula(SHEET, row, 5, shown(f"=IF({b}=0,0,ABS({c}-{b})/{b})"), margin(float(today), float(switch)), "calc",
                  key=f"cover_margin_{key}", num_format="0.0%")
    ask.rows["risk_last"] = row
    return row


def _sentence(w: Writer, ask: Ask, r: dict, inp: dict, committed: float, budget: float, plan) -> tuple[str, str]:
    """The ask in one sentence; its money and deadline clauses are the Detail cells of those rows."""
    c = ask.cell
    start = (plan.data.get("request") or {}).get("start_date") or "approval"
    slack = float(inp.get("training.target_days") or 0) - r["train_days"]
    gpu = str(inp.get("gpu", "")).upper()
    money_v = f"${fixed(committed / 1e6, 2)}M" + (f" of a ${fixed(budget / 1e6, 2)}M budget" if budget > 0 else
                                                  " (no budget given)")
    money_f = (f'="$"&FIXED({c("committed")}/c_mega,c_two)&"M"&IF({c("budget")}>0," of a $"&FIXED({c("budget")}'
               f'/c_mega,c_two)&"M budget"," (no budget given)")')
    late_v = (f"finishes {fixed(slack, 1)} days before the deadline" if slack >= 0 else
              f"misses the deadline by {fixed(-slack, 1)} days")
    late_f = (f'=IF({c("slack")}>=0,"finishes "&FIXED({c("slack")},1)&" days before the deadline",'
              f'"misses the deadline by "&FIXED(-{c("slack")},1)&" days")')
    money, late = f"E{ask.rows['committed'] + 1}", f"E{ask.rows['slack'] + 1}"
    w.formula(SHEET, ask.rows["committed"], 4, shown(money_f), money_v, "link", key="cover_money")
    w.formula(SHEET, ask.rows["slack"], 4, shown(late_f), late_v, "link", key="cover_late")
    window = max(r["train_days"], float(inp.get("training.target_days") or 0))
    v = (f"Rent {int(r['train_gpus_billed'])} {gpu} GPUs ({int(r['plan_nodes'])} nodes) for {fixed(window, 1)}"
         f" days from {start} (the run takes {fixed(r['train_days'], 1)}): {money_v}; {late_v}")
    f = (f'="Rent "&{c("gpus")}&" "&{c("gpu")}&" GPUs ("&{ref(w, "plan_nodes")}&" nodes) for "'
         f'&FIXED(MAX({c("days")},{c("target")}),1)&" days from {start} (the run takes "&FIXED({c("days")},1)'
         f'&"): "&{money}&"; "&{late}')
    return v, f


def _light_formats(w: Writer, row: int, col: int) -> None:
    ws = w.ws[SHEET]
    for text, fill, font in (("GREEN", styles.PASS_FILL, styles.PASS_FONT), ("AMBER", styles.WARN_FILL,
                                                                             styles.WARN_FONT),
                             ("RED", styles.FAIL_FILL, styles.FAIL_FONT)):
        f = w.wb.add_format({"bg_color": fill, "font_color": font, "bold": True})
        ws.conditional_format(row, col, row, col, {"type": "text", "criteria": "begins with", "value": text,
                                                   "format": f})


def _write_serving_ask(w: Writer, names: list[str], results: list[dict], plan) -> int:
    """A serving-only plan's ask: the fleet, its monthly rent, its latency against the targets."""
    from workbook.writer.planbook_serving import serving_columns

    cols = serving_columns(names, plan) or [0]
    i = cols[0]
    r, inp = results[i], plan.inputs[i]
    ws = w.ws[SHEET]
    ws.set_column(0, 0, 36)
    ws.set_column(1, 1, 20)
    ws.set_column(2, 2, 16)
    ws.set_column(4, 4, 44)
    fails = ref(w, "hard_failures_count", i)
    failed = r["hard_failures_count"] > 0
    live_title(w, SHEET, results, plan, i, "srv_gpus_in_use", "srv_gpus_in_use")
    from workbook.planner.serving_search import HOURS_PER_MONTH

    month_v = r["infer_hourly_cost_usd"] * HOURS_PER_MONTH
    ask = Ask({})
    row = 4
    _ask_header(w, row)
    figures = [
        ("gpus", "GPUs rented", f"={ref(w, 'srv_gpus_in_use', i)}", r["srv_gpus_in_use"], "GPUs", "", None),
        ("gpu", "GPU", f"=UPPER({ref(w, 'gpu', i)})", str(inp.get("gpu", "")).upper(), "id",
         f"=INDEX(cat_gpu_name,MATCH({ref(w, 'gpu', i)},cat_gpu_id,0))", None),
        ("basis", "Price basis (term)", f"={ref(w, 'cost.price_basis', i)}", str(inp.get("cost.price_basis")),
         "choice", "=INDEX({terms},MATCH({b},{bases},0))", term_text(str(inp.get("cost.price_basis")))),
        ("price", "GPU-hour price", f"={ref(w, 'gpu_hour_usd', i)}", r["gpu_hour_usd"], "USD/GPU-h", "", None),
        ("month", "Rent per month (the ask)",
         f"={ref(w, 'infer_hourly_cost_usd', i)}*c_hours_per_year/c_cost_months_per_year", month_v, "USD", "", None),
        ("per_1m", "Cost per 1M output tokens", f"={ref(w, 'infer_usd_per_1M_tokens', i)}",
         r["infer_usd_per_1M_tokens"], "USD/1M tokens", "", None),
        ("ttft", "TTFT under the load (time to first token)", f"={ref(w, 'srv_ttft_ms_in_use', i)}",
         r["srv_ttft_ms_in_use"], "ms", f'="target "&{ref(w, "inference.ttft_target_ms", i)}&" ms"',
         _target(inp, "inference.ttft_target_ms")),
        ("tpot", "TPOT under the load (time per output token)", f"={ref(w, 'srv_tpot_ms_in_use', i)}",
         r["srv_tpot_ms_in_use"], "ms", f'="target "&{ref(w, "inference.tpot_target_ms", i)}&" ms"',
         _target(inp, "inference.tpot_target_ms")),
    ]
    row = _figure_rows(w, ask, row, figures)
    c = ask.cell
    sent_f = (f'="Rent "&{c("gpus")}&" "&{c("gpu")}&" GPUs for serving: $"&FIXED({c("month")},0)&" a month ($"'
              f'&FIXED({c("per_1m")},c_two)&" per 1M output tokens)"')
    sent_v = (f"Rent {int(r['srv_gpus_in_use'])} {str(inp.get('gpu')).upper()} GPUs for serving: ${fixed(month_v, 0)} "
              f"a month (${fixed(r['infer_usd_per_1M_tokens'], 2)} per 1M output tokens)")
    line(w, 1, 0, sent_f, sent_v, "cover_sentence", "sentence")
    text_line(w, 2, 0, "Decision asked for: approve renting the serving fleet (not buying)")
    w.text(SHEET, 3, 0, "Traffic light", "label", "label")
    light_v = LIGHTS[int(min(1, r["warnings_count"]) + 2 * min(1, failed))]
    line(w, 3, 1, f"=INDEX({_lights_table(w)},1+MIN(1,{ref(w, 'warnings_count', i)})+c_two*MIN(1,{fails}))",
         light_v, "cover_light", "light")
    _light_formats(w, 3, 1)
    row += 2
    date = (plan.data.get("request") or {}).get("date") or "undated"
    w.text(SHEET, row, 0, "Version and date", "label", "label")
    text = f"version {plan.version} of request {plan.request_id}, {date}"
    text_line(w, row, 1, text)
    return _flags_line(w, plan, row + 1)


__all__ = ["write_ask", "readable_name_formula", "readable_name", "FIRST_PAGE_ROWS", "HEADER_ROW"]
