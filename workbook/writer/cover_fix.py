"""The cheapest change that fixes a failing plan (issue 23), live on the Cover of a training plan.

For each failing hard check the change that alone flips it, from the switching values the Sensitivity and Cost
sheets already compute: the budget check passes at a budget of the rent committed (rounded up to the dollar) or at
the GPU-hour price at the budget (rounded down to the cent); the deadline check passes at a deadline of the run's
days (rounded up to a tenth of a day), which commits the rent for those days; a memory or layout check has no
one-input fix: the layout is re-planned. The three parts are formulas below the printed page (one short formula
each, no nested IF); the printed line joins them. A plan that passes reads "none needed".
"""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_UP, Decimal

from xlsxwriter.utility import xl_rowcol_to_cell

from workbook.writer.input_guard import shown
from workbook.writer.planbook import _ref as ref
from workbook.writer.xlsx import Writer

SHEET = "Cover"
LABEL = "Cheapest change that fixes it"
NONE_NEEDED = "none needed: every check passes"
REPLAN = "re-plan the layout: a memory or layout check fails (Checks; no single input fixes it)"
#: the rows of the parts block (below the printed page): its title, then budget, deadline, other
PART_ROWS = 4


def round_away(x: float, digits: int, down: bool = False) -> float:
    """Python twin of Excel ROUNDUP(x, digits) (ROUNDDOWN with *down*): away from (towards) zero."""
    q = Decimal(1).scaleb(-digits)
    return float(Decimal(repr(float(x))).quantize(q, rounding=ROUND_DOWN if down else ROUND_UP))


def budget_fix(r: dict) -> tuple[float, float]:
    """(budget, GPU-hour price) at which the budget check passes: the rent committed rounded up to the dollar, the
    price at the budget rounded down to the cent."""
    committed = max(r["train_cost_usd"], r["train_cost_target_usd"])
    return round_away(committed, 0), round_away(r["sens_price_switch_budget_usd_per_gpu_hour"], 2, down=True)


def deadline_fix(r: dict) -> tuple[float, float]:
    """(deadline in days, the rent committed at it) at which the deadline check passes."""
    days = round_away(r["train_days"], 1)
    return days, r["train_gpus_billed"] * days * 24.0 * r["gpu_hour_usd"]


def fix_texts(r: dict) -> tuple[str, str, str]:
    """Python twin of the three part formulas: budget, deadline, other (empty when that check passes)."""
    from workbook.writer.cover_ask import fixed

    b_fail, d_fail = r["check_within_budget"] > 0, r["check_meets_target_days"] > 0
    budget = deadline = other = ""
    if b_fail:
        b, p = budget_fix(r)
        budget = f"raise the budget to ${fixed(b, 0)}, or get a GPU-hour price of ${fixed(p, 2)} or less"
    if d_fail:
        d, rent = deadline_fix(r)
        deadline = "; " * int(b_fail) + f"extend the deadline to {fixed(d, 1)} days (rent committed ${fixed(rent, 0)})"
    if r["hard_failures_count"] - int(b_fail) - int(d_fail) > 0:
        other = "; " * min(1, int(b_fail) + int(d_fail)) + REPLAN
    return budget, deadline, other


def fix_text(r: dict) -> str:
    """The printed line's value: the joined parts, or NONE_NEEDED."""
    return NONE_NEEDED if r["hard_failures_count"] <= 0 else "".join(fix_texts(r))


def write_parts(w: Writer, row0: int, r: dict, cell) -> str:
    """The three part formulas from ``row0`` (title) down, column B; *cell*: the Cover cell of an ask figure
    (cover_ask.Ask.cell: committed, days, gpus, price). Returns the printed line's formula."""
    w.text(SHEET, row0, 0, f"{LABEL}: the parts (the line on the page joins them)", "block", "label")
    b_fail, d_fail = ref(w, "check_within_budget"), ref(w, "check_meets_target_days")
    fails = ref(w, "hard_failures_count")
    committed, gpus, price = cell("committed"), cell("gpus"), cell("price")
    days = f"ROUNDUP({cell('days')},1)"
    formulas = (
        f'=IF({b_fail}>0,"raise the budget to $"&FIXED(ROUNDUP({committed},0),0)&", or get a GPU-hour price of $"'
        f'&FIXED(ROUNDDOWN({ref(w, "sens_price_switch_budget_usd_per_gpu_hour")},c_two),c_two)&" or less","")',
        f'=IF({d_fail}>0,REPT("; ",{b_fail})&"extend the deadline to "&FIXED({days},1)&" days (rent committed $"'
        f'&FIXED({gpus}*{days}*c_hours_per_day*{price},0)&")","")',
        f'=IF({fails}-{b_fail}-{d_fail}>0,REPT("; ",MIN(1,{b_fail}+{d_fail}))&"{REPLAN}","")',
    )
    cells = []
    for k, (name, formula, cached) in enumerate(zip(("budget", "deadline", "other"), formulas, fix_texts(r)), 1):
        w.text(SHEET, row0 + k, 0, f"If the {name} check fails" if name != "other" else
               "If a memory or layout check fails", "label", "label")
        w.formula(SHEET, row0 + k, 1, shown(formula), cached, "calc", key=f"cover_fix_{name}")
        cells.append(xl_rowcol_to_cell(row0 + k, 1))
    return f'=IF({fails}>0,{"&".join(cells)},"{NONE_NEEDED}")'
