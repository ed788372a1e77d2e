"""Line items of the Cash Flow sheet, first block: the months (workbook.calc.cash_flow). Each month's first day is
DATE(year, month + 1, 1) of the month above (DATE carries month 13 into the next year); its fiscal year and
quarter come from its MONTH() and the fiscal year's first month. The rent of a month is the rent per day x the
days of the rental inside it, counted from the window's first day; the buy path's months in service before month
k are ROWS of the date rows above it. Inputs left blank take the Defaults sheet's value (d_<key>)."""

from __future__ import annotations

from workbook.calc.cash_flow import CF_MONTHS, MONTHS, SERIES, key
from workbook.reference.cash_flow import MONTHS_PER_QUARTER
from workbook.sheets.tco import _blank_default

CONSTANTS = [
    ("cf_months", float(CF_MONTHS), "months", "Months of the Cash Flow sheet", "issue 23"),
    ("months_per_quarter", float(MONTHS_PER_QUARTER), "month/quarter", "Months per quarter", "definition"),
]


def _month(k: int) -> dict[str, str]:
    """The cells of month *k* that depend on the month alone: first day, fiscal year and quarter."""
    d = f"{{{key(k, 'date')}}}"
    fy_start = "{cf_fiscal_year_start_month}"
    return {
        key(k, "date"): "={cf_start_date}" if k == 1 else
        f"=DATE(YEAR({{{key(k - 1, 'date')}}}),MONTH({{{key(k - 1, 'date')}}})+1,1)",
        key(k, "fiscal_year"): f"=YEAR({d})+IF(AND({fy_start}>1,MONTH({d})>={fy_start}),1,0)",
        key(k, "fiscal_quarter"): f"=INT(MOD(MONTH({d})-{fy_start},c_cost_months_per_year)/c_months_per_quarter)+1",
    }


def _items() -> dict[str, str]:
    items = {
        "cf_start_year": _blank_default("cost.cash_start_year"),
        "cf_start_month": _blank_default("cost.cash_start_month"),
        "cf_fiscal_year_start_month": _blank_default("cost.fiscal_year_start_month"),
        "cf_start_date": "=DATE({cf_start_year},{cf_start_month},1)",
        "cf_end_date": "=DATE({cf_start_year},{cf_start_month}+c_cf_months,1)",
        "cf_window_days": "={cf_end_date}-{cf_start_date}",
        # training (or both): the GPUs billed for the run; serving only: the serving fleet, 24 h a day
        "cf_rent_per_day_usd": "=IF({purpose_training_flag}=1,{train_gpus_billed}*{gpu_hour_usd},"
        "{infer_hourly_cost_usd})*c_hours_per_day",
        "cf_rent_days": "=IF({purpose_training_flag}=1,MAX({train_days_actual},{training.target_days}),"
        "{cf_window_days})",
        "cf_rent_ask_usd": "=IF({purpose_training_flag}=1,MAX({train_cost_usd},{train_cost_target_usd}),"
        "{cf_rent_per_day_usd}*{cf_window_days})",
        "cf_rent_in_window_usd": "=IF({cf_rent_days}>0,{cf_rent_ask_usd}*MIN(1,{cf_window_days}/{cf_rent_days}),0)",
        "cf_opex_per_month_usd": "={tco_opex_per_year_usd}/c_cost_months_per_year",
        "cf_horizon_months": "={tco_years}*c_cost_months_per_year",
    }
    for series in ("date", "fiscal_year", "fiscal_quarter"):
        for k in MONTHS:
            items[key(k, series)] = _month(k)[key(k, series)]
    for k in MONTHS:  # the rental's days inside month k, counted from the window's first day
        d = f"{{{key(k, 'date')}}}"
        items[key(k, "rent_usd")] = (f"={{cf_rent_per_day_usd}}*MAX(0,MIN({{cf_rent_days}},DATE(YEAR({d}),"
                                     f"MONTH({d})+1,1)-{{cf_start_date}})-({d}-{{cf_start_date}}))")
    for k in MONTHS:
        items[key(k, "capex_usd")] = f"=IF({{{key(k, 'date')}}}={{cf_start_date}},{{tco_capex_usd}},0)"
    for k in MONTHS:  # months before k: ROWS of the date rows above
        before = f"ROWS({{{key(1, 'date')}}}:{{{key(k - 1, 'date')}}})" if k > 1 else "0"
        items[key(k, "opex_usd")] = f"={{cf_opex_per_month_usd}}*MAX(0,MIN(1,{{cf_horizon_months}}-{before}))"
    for k in MONTHS:  # the month the horizon ends in: before < horizon <= before + 1
        before = f"ROWS({{{key(1, 'date')}}}:{{{key(k - 1, 'date')}}})" if k > 1 else "0"
        items[key(k, "residual_usd")] = (f"=IF(AND({{cf_horizon_months}}>{before},{{cf_horizon_months}}<={before}"
                                         "+1),{tco_residual_usd},0)")
    for k in MONTHS:
        items[key(k, "buy_usd")] = (f"={{{key(k, 'capex_usd')}}}+{{{key(k, 'opex_usd')}}}"
                                    f"-{{{key(k, 'residual_usd')}}}")
    for s, total in (("rent", "rent_usd"), ("buy", "buy_usd")):
        for k in MONTHS:
            items[key(k, f"{s}_cumulative_usd")] = f"=SUM({{{key(1, total)}}}:{{{key(k, total)}}})"
    assert {s for s, _, _ in SERIES} == {k.split("_", 2)[2] for k in items if k.startswith("cf_m1_")}
    return items


ITEMS = _items()
