"""Line items of the Cash Flow sheet, second block: fiscal quarter and fiscal year subtotals
(workbook.calc.cash_flow_periods). The first bucket is the first month's fiscal quarter (year); each next one is the
one after it. A quarter sums with SUMIFS over the months' fiscal year and quarter rows, a year with SUMIF over the
fiscal year rows."""

from __future__ import annotations

from workbook.calc.cash_flow import MONTHS
from workbook.calc.cash_flow import key as month_key
from workbook.calc.cash_flow_periods import MONEY, QUARTERS, TOTALS, YEARS, qkey, ykey

CONSTANTS = [
    ("quarters_per_year", 4.0, "count", "Fiscal quarters per year", "definition"),
]


def _months(series: str) -> str:
    """The range of one series of the months."""
    return f"{{{month_key(MONTHS[0], series)}}}:{{{month_key(MONTHS[-1], series)}}}"


def _items() -> dict[str, str]:
    items = {name: f"=SUM({_months(s)})" for name, s, _ in TOTALS}
    for j in QUARTERS:
        items[qkey(j, "quarter")] = (f"={{{month_key(1, 'fiscal_quarter')}}}" if j == 1 else
                                     f"=MOD({{{qkey(j - 1, 'quarter')}}},c_quarters_per_year)+1")
    for j in QUARTERS:  # a new fiscal year starts with quarter 1
        items[qkey(j, "fiscal_year")] = (f"={{{month_key(1, 'fiscal_year')}}}" if j == 1 else
                                         f"={{{qkey(j - 1, 'fiscal_year')}}}+IF({{{qkey(j, 'quarter')}}}=1,1,0)")
    fy, fq = _months("fiscal_year"), _months("fiscal_quarter")
    for s, _ in MONEY:
        for j in QUARTERS:
            items[qkey(j, s)] = (f"=SUMIFS({_months(s)},{fy},{{{qkey(j, 'fiscal_year')}}},{fq},"
                                 f"{{{qkey(j, 'quarter')}}})")
    for j in YEARS:
        items[ykey(j, "fiscal_year")] = (f"={{{month_key(1, 'fiscal_year')}}}" if j == 1 else
                                         f"={{{ykey(j - 1, 'fiscal_year')}}}+1")
    for j in YEARS:
        items[ykey(j, "months")] = f"=COUNTIF({fy},{{{ykey(j, 'fiscal_year')}}})"
    for s, _ in MONEY:
        for j in YEARS:
            items[ykey(j, s)] = f"=SUMIF({fy},{{{ykey(j, 'fiscal_year')}}},{_months(s)})"
    for name, bucket, s, buckets in (("cf_fy_rent_total_usd", ykey, "rent_usd", YEARS),
                                     ("cf_fy_buy_total_usd", ykey, "buy_usd", YEARS),
                                     ("cf_q_rent_total_usd", qkey, "rent_usd", QUARTERS),
                                     ("cf_q_buy_total_usd", qkey, "buy_usd", QUARTERS)):
        items[name] = f"=SUM({{{bucket(buckets[0], s)}}}:{{{bucket(buckets[-1], s)}}})"
    pairs = [("cf_rent_total_usd", "cf_fy_rent_total_usd"), ("cf_buy_total_usd", "cf_fy_buy_total_usd"),
             ("cf_rent_total_usd", "cf_q_rent_total_usd"), ("cf_buy_total_usd", "cf_q_buy_total_usd")]
    off = ",".join(f"ABS({{{a}}}-{{{b}}})>c_check_rel_tol*ABS({{{a}}})" for a, b in pairs)
    items["cf_periods_off_flag"] = f"=IF(OR({off}),1,0)"
    return items


ITEMS = _items()
