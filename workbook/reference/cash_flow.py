"""Cash flow by month, fiscal quarter and fiscal year (issue 23 item 4): the rent path and the buy path of a plan
over a window of whole calendar months from a start month.

Rent path: the rental is paid per day of use, from the first day of the window for the rental's days, so each
month carries the rent of the rental days that fall in it (calendar days). Buy path: the hardware capex in the
first month, the opex of each month in service (a year's opex / 12, a part month at the end of the horizon), and
the residual value as an inflow in the month the ownership horizon ends (none when it ends after the window).

Dates are Excel date serials (days since 1899-12-30, as DATE() gives them for any date after February 1900).
A fiscal year is named by the calendar year it ends in: with a fiscal year starting in October, October 2026 is
in fiscal 2027; with one starting in January, the fiscal year is the calendar year.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from workbook.units import MONTHS_PER_YEAR

#: months per fiscal quarter
MONTHS_PER_QUARTER = 3
#: day 0 of Excel's date serials (the 1900 system, for dates from March 1900 on)
EXCEL_EPOCH = dt.date(1899, 12, 30)


def month_start(year: int, month: int) -> tuple[int, int]:
    """(year, month) of calendar month *month* of *year*, where *month* may run past 12 (as DATE() allows)."""
    if month < 1:
        raise ValueError(f"month {month} before January")
    return year + (month - 1) // MONTHS_PER_YEAR, (month - 1) % MONTHS_PER_YEAR + 1


def date_serial(year: int, month: int, day: int = 1) -> int:
    """Excel's DATE(year, month, day) as a serial; *month* may run past 12."""
    y, m = month_start(year, month)
    return (dt.date(y, m, day) - EXCEL_EPOCH).days


def fiscal_year(year: int, month: int, fiscal_start_month: int) -> int:
    """Fiscal year of a calendar month, named by the calendar year the fiscal year ends in."""
    _month_ok(month)
    _month_ok(fiscal_start_month)
    return year + (1 if fiscal_start_month > 1 and month >= fiscal_start_month else 0)


def fiscal_quarter(month: int, fiscal_start_month: int) -> int:
    """Fiscal quarter (1-4) of a calendar month."""
    _month_ok(month)
    _month_ok(fiscal_start_month)
    return (month - fiscal_start_month) % MONTHS_PER_YEAR // MONTHS_PER_QUARTER + 1


def _month_ok(month: int) -> None:
    if not 1 <= month <= MONTHS_PER_YEAR:
        raise ValueError(f"month {month} is not 1-12")


@dataclass(frozen=True)
class Month:
    """One month of the window: its first day and the first day of the next (serials), its fiscal year and quarter."""

    start_serial: int
    next_serial: int
    fiscal_year: int
    fiscal_quarter: int


def months(start_year: int, start_month: int, fiscal_start_month: int, count: int) -> list[Month]:
    """The *count* calendar months from (start_year, start_month)."""
    _month_ok(start_month)
    out = []
    for k in range(count):
        y, m = month_start(start_year, start_month + k)
        out.append(Month(date_serial(y, m), date_serial(y, m + 1), fiscal_year(y, m, fiscal_start_month),
                         fiscal_quarter(m, fiscal_start_month)))
    return out


def rent_by_month_usd(window: list[Month], rent_per_day_usd: float, rent_days: float) -> list[float]:
    """Rent of each month: the rent per day x the days of the rental (from the window's first day) in the month."""
    if rent_days < 0 or rent_per_day_usd < 0:
        raise ValueError("rent days and rent per day must be >= 0")
    first = window[0].start_serial
    return [rent_per_day_usd * max(0.0, min(rent_days, m.next_serial - first) - (m.start_serial - first))
            for m in window]


def service_frac(month_index: int, horizon_months: float) -> float:
    """Share of month *month_index* (1-based) inside an ownership horizon of *horizon_months*."""
    return max(0.0, min(1.0, horizon_months - (month_index - 1)))


def buy_by_month_usd(count: int, capex_usd: float, opex_per_year_usd: float, horizon_years: float,
                     residual_usd: float) -> dict[str, list[float]]:
    """The buy path by month: capex (month 1), opex (a year's / 12 x the month's share in service), the residual
    value as an inflow in the month the horizon ends (0 if it ends after the window), and the net cash out."""
    horizon_months = horizon_years * MONTHS_PER_YEAR
    capex = [capex_usd if k == 1 else 0.0 for k in range(1, count + 1)]
    opex = [opex_per_year_usd / MONTHS_PER_YEAR * service_frac(k, horizon_months) for k in range(1, count + 1)]
    residual = [residual_usd if k - 1 < horizon_months <= k else 0.0 for k in range(1, count + 1)]
    net = [c + o - r for c, o, r in zip(capex, opex, residual)]
    return {"capex_usd": capex, "opex_usd": opex, "residual_usd": residual, "net_usd": net}


def cumulative(values: list[float]) -> list[float]:
    """Running sums."""
    out, total = [], 0.0
    for v in values:
        total += v
        out.append(total)
    return out


def subtotals(values: list[float], keys: list, buckets: list) -> list[float]:
    """Sum of *values* whose key equals each bucket (SUMIF / SUMIFS)."""
    return [sum(v for v, k in zip(values, keys) if k == b) for b in buckets]


def fiscal_year_buckets(window: list[Month], count: int) -> list[int]:
    """*count* consecutive fiscal years from the window's first month's."""
    return [window[0].fiscal_year + j for j in range(count)]


def quarter_buckets(window: list[Month], count: int) -> list[tuple[int, int]]:
    """*count* consecutive (fiscal year, quarter) from the window's first month's."""
    fy, q = window[0].fiscal_year, window[0].fiscal_quarter
    out = [(fy, q)]
    for _ in range(count - 1):
        q = q % (MONTHS_PER_YEAR // MONTHS_PER_QUARTER) + 1
        fy += 1 if q == 1 else 0
        out.append((fy, q))
    return out
