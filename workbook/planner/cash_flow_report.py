"""The cash flow of a recommended plan by fiscal year, as the plan's data (``Outcome.data["cash_flow"]``) and the
Markdown's table: the Cash Flow sheet's window (workbook.calc.cash_flow) and its fiscal-year subtotals
(workbook.calc.cash_flow_periods), rent path and buy path apart. Every value is the calculation's own; names are
the quantity names (row keys)."""

from __future__ import annotations

from typing import Any

from workbook.calc.cash_flow import CF_MONTHS, MONTHS, key
from workbook.calc.cash_flow_periods import MONEY, TOTALS, YEARS, ykey
from workbook.planner.report import usd
from workbook.reference.cash_flow import EXCEL_EPOCH

#: the window's keys of ``cash_flow`` (the by-fiscal-year table apart)
KEYS = ("cf_start_year", "cf_start_month", "cf_fiscal_year_start_month", "cf_rent_ask_usd", "cf_rent_days",
        *(name for name, _, _ in TOTALS))
#: the Markdown's columns: heading, series of calc.cash_flow_periods
COLUMNS = (("Rent", "rent_usd"), ("Buy: capex", "capex_usd"), ("Buy: opex", "opex_usd"),
           ("Buy: residual value (in)", "residual_usd"), ("Buy: net cash out", "buy_usd"))
assert {s for _, s in COLUMNS} == {s for s, _ in MONEY}


def cash_flow_data(scenario: str, q: dict[str, float]) -> dict[str, Any]:
    """``{"scenario", "months", <KEYS>: value, "by_fiscal_year": [{"fiscal_year", "months", <series>: value}, ...],
    "by_month": [{"month", "first_day" (ISO), <series>: value}, ...]}`` (the fiscal years the window touches)."""
    years = [{"fiscal_year": int(q[ykey(j, "fiscal_year")]), "months": int(q[ykey(j, "months")]),
              **{s: q[ykey(j, s)] for s, _ in MONEY}} for j in YEARS if q[ykey(j, "months")] > 0]
    by_month = [{"month": k, "first_day": _iso(q[key(k, "date")]), **{s: q[key(k, s)] for s, _ in MONEY}}
                for k in MONTHS]
    return {"scenario": scenario, "months": CF_MONTHS, **{k: q[k] for k in KEYS}, "by_fiscal_year": years,
            "by_month": by_month}


def _iso(serial: float) -> str:
    """An Excel date serial as an ISO date."""
    import datetime as dt

    return (EXCEL_EPOCH + dt.timedelta(days=int(serial))).isoformat()


def start_text(cf: dict[str, Any]) -> str:
    """The window's first month as text: "January 2027"."""
    import datetime as dt

    return dt.date(int(cf["cf_start_year"]), int(cf["cf_start_month"]), 1).strftime("%B %Y")


def markdown_years(cf: dict[str, Any]) -> list[dict[str, Any]]:
    """``{"fiscal_year", "months", "cells": [whole dollars per COLUMNS]}`` per fiscal year, then the total row."""
    rows = [{"fiscal_year": f"FY{y['fiscal_year']}", "months": y["months"],
             "cells": [usd(y[s]) for _, s in COLUMNS]} for y in cf["by_fiscal_year"]]
    totals = {s: name for name, s, _ in TOTALS}
    rows.append({"fiscal_year": "Total", "months": sum(y["months"] for y in cf["by_fiscal_year"]),
                 "cells": [usd(cf[totals[s]]) for _, s in COLUMNS]})
    return rows


__all__ = ["KEYS", "COLUMNS", "cash_flow_data", "usd", "start_text", "markdown_years"]
