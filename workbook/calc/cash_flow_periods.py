"""Cash Flow sheet, second block: the months of calc.cash_flow summed over the window, by fiscal quarter and by
fiscal year (issue 23 item 4). The quarters and years are consecutive from the first month's: CF_MONTHS months
touch at most QUARTERS fiscal quarters and YEARS fiscal years (a window that starts inside a quarter or a year ends
inside one); a bucket no month falls in sums to 0. Each subtotal is a SUMIF (SUMIFS for a quarter) over the months'
fiscal year (and quarter) rows; the sums of the subtotals reconcile with the months' (Checks sheet).
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.cash_flow import CF_MONTHS, MONTHS, window_of
from workbook.calc.cash_flow import key as month_key
from workbook.calc.checks import CHECK_REL_TOL
from workbook.reference import cash_flow as cf

#: fiscal quarters and fiscal years the window can touch
QUARTERS = range(1, CF_MONTHS // cf.MONTHS_PER_QUARTER + 2)
YEARS = range(1, CF_MONTHS // cf.MONTHS_PER_YEAR + 2)
_S = "issue 23"

#: money series summed: (series of calc.cash_flow, label)
MONEY = [("rent_usd", "rent path"), ("capex_usd", "buy path capex"), ("opex_usd", "buy path opex"),
         ("residual_usd", "buy path residual value (an inflow)"), ("buy_usd", "buy path net cash out")]
#: quarter series: (series, unit, label); the quarter runs first (each fiscal year reads its quarter)
QUARTER_SERIES = [("quarter", "quarter", "fiscal quarter"), ("fiscal_year", "year", "its fiscal year"),
                  *[(s, "USD", label) for s, label in MONEY]]
YEAR_SERIES = [("fiscal_year", "year", "fiscal year"), ("months", "months", "months of the window in it"),
               *[(s, "USD", label) for s, label in MONEY]]


def qkey(j: int, series: str) -> str:
    """Quantity name of fiscal quarter bucket *j*: cf_q<j>_<series>."""
    return f"cf_q{j}_{series}"


def ykey(j: int, series: str) -> str:
    """Quantity name of fiscal year bucket *j*: cf_fy<j>_<series>."""
    return f"cf_fy{j}_{series}"


#: window totals: (name, series of calc.cash_flow, label)
TOTALS = [("cf_rent_total_usd", "rent_usd", "Rent path over the window: sum of the months"),
          ("cf_capex_total_usd", "capex_usd", "Buy path capex over the window: sum of the months"),
          ("cf_opex_total_usd", "opex_usd", "Buy path opex over the window: sum of the months"),
          ("cf_residual_total_usd", "residual_usd", "Buy path residual value in the window: sum of the months"),
          ("cf_buy_total_usd", "buy_usd", "Buy path net cash out over the window: sum of the months")]

QUANTITIES = [
    *[Q(name, "USD", label, _S) for name, _, label in TOTALS],
    *[Q(qkey(j, s), unit, f"Fiscal quarter {j}: {label}", _S) for s, unit, label in QUARTER_SERIES for j in QUARTERS],
    *[Q(ykey(j, s), unit, f"Fiscal year {j}: {label}", _S) for s, unit, label in YEAR_SERIES for j in YEARS],
    Q("cf_fy_rent_total_usd", "USD", "Rent path: sum of the fiscal years", _S),
    Q("cf_fy_buy_total_usd", "USD", "Buy path net cash out: sum of the fiscal years", _S),
    Q("cf_q_rent_total_usd", "USD", "Rent path: sum of the fiscal quarters", _S),
    Q("cf_q_buy_total_usd", "USD", "Buy path net cash out: sum of the fiscal quarters", _S),
    Q("cf_periods_off_flag", "0/1", "1 = the fiscal years or quarters do not add up to the months (rent or buy; "
      "relative tolerance of the checks)", _S),
]


def compute(ctx: Context) -> dict[str, float]:
    """Fiscal quarter and fiscal year subtotals of one scenario."""
    q = ctx.q
    window = window_of(ctx)
    money = {s: [q[month_key(k, s)] for k in MONTHS] for s, _ in MONEY}
    out: dict[str, float] = {name: sum(money[s]) for name, s, _ in TOTALS}
    quarters = cf.quarter_buckets(window, len(QUARTERS))
    keys_q = [(m.fiscal_year, m.fiscal_quarter) for m in window]
    for j, (fy, fq) in zip(QUARTERS, quarters):
        out[qkey(j, "quarter")], out[qkey(j, "fiscal_year")] = float(fq), float(fy)
    for s, _ in MONEY:
        for j, total in zip(QUARTERS, cf.subtotals(money[s], keys_q, quarters)):
            out[qkey(j, s)] = total
    years = cf.fiscal_year_buckets(window, len(YEARS))
    keys_y = [m.fiscal_year for m in window]
    for j, fy in zip(YEARS, years):
        out[ykey(j, "fiscal_year")] = float(fy)
        out[ykey(j, "months")] = float(keys_y.count(fy))
    for s, _ in MONEY:
        for j, total in zip(YEARS, cf.subtotals(money[s], keys_y, years)):
            out[ykey(j, s)] = total
    out["cf_fy_rent_total_usd"] = sum(out[ykey(j, "rent_usd")] for j in YEARS)
    out["cf_fy_buy_total_usd"] = sum(out[ykey(j, "buy_usd")] for j in YEARS)
    out["cf_q_rent_total_usd"] = sum(out[qkey(j, "rent_usd")] for j in QUARTERS)
    out["cf_q_buy_total_usd"] = sum(out[qkey(j, "buy_usd")] for j in QUARTERS)
    rent, buy = out["cf_rent_total_usd"], out["cf_buy_total_usd"]
    pairs = [(rent, out["cf_fy_rent_total_usd"]), (buy, out["cf_fy_buy_total_usd"]),
             (rent, out["cf_q_rent_total_usd"]), (buy, out["cf_q_buy_total_usd"])]
    out["cf_periods_off_flag"] = 1.0 if any(abs(a - b) > CHECK_REL_TOL * abs(a) for a, b in pairs) else 0.0
    return out
