"""Cash Flow sheet, first block: the plan's money month by month over CF_MONTHS calendar months from a start month
(issue 23 item 4), the rent path and the buy path side by side, capex and opex apart.

Rent path: the rent the Cover asks for (training or both: the larger of the run and the target window, the Cost
sheet's rows; serving only: the serving fleet 24/7) paid per day of the rental from the window's first day.
Buy path: the TCO sheet's hardware capex in month 1, its opex (power, storage, space, staff, support) per month in
service, the residual value as an inflow in the month the ownership horizon ends (workbook.reference.cash_flow).
Each month also carries its first day (a date), fiscal year and fiscal quarter; calc.cash_flow_periods sums the
months over the window and by fiscal quarter and fiscal year.

One series at a time, months in order (rows cf_m<k>_<series>), so a cumulative is the SUM of its series' rows.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.reference import cash_flow as cf
from workbook.units import HOURS_PER_DAY

#: months of the Cash Flow sheet (three years)
CF_MONTHS = 36
MONTHS = range(1, CF_MONTHS + 1)
_S = "issue 23"

#: (series, unit, label) in the sheet's order
SERIES = [("date", "date", "first day"),
          ("fiscal_year", "year", "fiscal year (named by the calendar year it ends in)"),
          ("fiscal_quarter", "quarter", "fiscal quarter"),
          ("rent_usd", "USD", "rent path: rent of the rental days in the month"),
          ("capex_usd", "USD", "buy path: hardware capex (capital expenditure, month 1)"),
          ("opex_usd", "USD", "buy path: opex (power, storage, space, staff, support) in service"),
          ("residual_usd", "USD", "buy path: residual value at the end of the horizon (an inflow)"),
          ("buy_usd", "USD", "buy path: net cash out (capex + opex - residual)"),
          ("rent_cumulative_usd", "USD", "rent path, cumulative"),
          ("buy_cumulative_usd", "USD", "buy path, cumulative")]


def key(month: int, series: str) -> str:
    """Quantity name of one month's cell: cf_m<month>_<series>."""
    return f"cf_m{month}_{series}"


QUANTITIES = [
    Q("cf_start_year", "year", "Calendar year of the first month (scenario, else default)", _S),
    Q("cf_start_month", "month", "Calendar month of the first month, 1-12 (scenario, else default)", _S),
    Q("cf_fiscal_year_start_month", "month", "First calendar month of the fiscal year, 1-12 (scenario, else "
      "default)", _S),
    Q("cf_start_date", "date", "First day of the window (the rental and the purchase start on it)", _S),
    Q("cf_end_date", "date", "First day after the window's last month", _S),
    Q("cf_window_days", "days", "Days in the window", _S),
    Q("cf_rent_per_day_usd", "USD/day", "Rent per day: training or both the GPUs billed, serving only the serving "
      "GPUs in use, 24 h x price", "17.5.9"),
    Q("cf_rent_days", "days", "Days rented: training or both the larger of the run and the target window, serving "
      "only the whole window", "17.9.4"),
    Q("cf_rent_ask_usd", "USD", "Rent asked for: training or both the larger of the run's and the target window's "
      "cost (Cover), serving only the rent over the window", "17.9.4"),
    Q("cf_rent_in_window_usd", "USD", "Rent asked for that falls in the window: ask x MIN(1, window days / days "
      "rented)", _S),
    Q("cf_opex_per_month_usd", "USD/month", "Buy path: opex per month in service (TCO opex per year / 12)", "17.9.3"),
    Q("cf_horizon_months", "months", "Buy path: ownership horizon in months (TCO years x 12)", "17.9.3"),
    *[Q(key(k, s), unit, f"Month {k}: {label}", _S) for s, unit, label in SERIES for k in MONTHS],
]


def window_of(ctx: Context) -> list[cf.Month]:
    """The months of the window of one scenario."""
    c = ctx.s.cost
    return cf.months(int(c.cash_start_year), int(c.cash_start_month), int(c.fiscal_year_start_month), CF_MONTHS)


def _rent(ctx: Context, window_days: float) -> dict[str, float]:
    """Rent per day, days rented, the ask and its part in the window."""
    q = ctx.q
    if q["purpose_training_flag"] == 1:
        per_day = q["train_gpus_billed"] * q["gpu_hour_usd"] * HOURS_PER_DAY
        days = max(q["train_days_actual"], float(ctx.s.training.target_days))
        ask = max(q["train_cost_usd"], q["train_cost_target_usd"])
    else:
        per_day = q["infer_hourly_cost_usd"] * HOURS_PER_DAY
        days = window_days
        ask = per_day * window_days
    return {"cf_rent_per_day_usd": per_day, "cf_rent_days": days, "cf_rent_ask_usd": ask,
            "cf_rent_in_window_usd": ask * min(1.0, window_days / days) if days > 0 else 0.0}


def compute(ctx: Context) -> dict[str, float]:
    """The months of one scenario."""
    c, q = ctx.s.cost, ctx.q
    window = window_of(ctx)
    window_days = float(window[-1].next_serial - window[0].start_serial)
    out = {"cf_start_year": float(c.cash_start_year), "cf_start_month": float(c.cash_start_month),
           "cf_fiscal_year_start_month": float(c.fiscal_year_start_month),
           "cf_start_date": float(window[0].start_serial), "cf_end_date": float(window[-1].next_serial),
           "cf_window_days": window_days}
    out.update(_rent(ctx, window_days))
    out["cf_opex_per_month_usd"] = q["tco_opex_per_year_usd"] / cf.MONTHS_PER_YEAR
    out["cf_horizon_months"] = q["tco_years"] * cf.MONTHS_PER_YEAR
    rent = cf.rent_by_month_usd(window, out["cf_rent_per_day_usd"], out["cf_rent_days"])
    buy = cf.buy_by_month_usd(CF_MONTHS, q["tco_capex_usd"], q["tco_opex_per_year_usd"], q["tco_years"],
                              q["tco_residual_usd"])
    series = {"date": [float(m.start_serial) for m in window],
              "fiscal_year": [float(m.fiscal_year) for m in window],
              "fiscal_quarter": [float(m.fiscal_quarter) for m in window],
              "rent_usd": rent, "capex_usd": buy["capex_usd"], "opex_usd": buy["opex_usd"],
              "residual_usd": buy["residual_usd"], "buy_usd": buy["net_usd"],
              "rent_cumulative_usd": cf.cumulative(rent), "buy_cumulative_usd": cf.cumulative(buy["net_usd"])}
    for s, _, _ in SERIES:
        for k in MONTHS:
            out[key(k, s)] = series[s][k - 1]
    return out
