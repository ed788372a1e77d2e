"""workbook.reference.cash_flow: months, fiscal years and quarters, the rent and buy paths by month, subtotals."""

from __future__ import annotations

import datetime as dt

import pytest

from workbook.reference import cash_flow as cf


def test_date_serial_is_excels():
    assert cf.date_serial(2027, 1) == 46388  # DATE(2027,1,1)
    assert cf.date_serial(2027, 13) == cf.date_serial(2028, 1)  # DATE carries month 13 into the next year
    assert cf.date_serial(2028, 3) - cf.date_serial(2028, 2) == 29  # a leap February


@pytest.mark.parametrize("year, month, start, fy", [
    (2027, 1, 1, 2027), (2027, 12, 1, 2027),  # calendar fiscal year
    (2026, 10, 10, 2027), (2026, 9, 10, 2026), (2027, 9, 10, 2027),  # US federal: FY2027 = Oct 2026 - Sep 2027
    (2026, 7, 7, 2027), (2027, 6, 7, 2027),  # July - June
    (2026, 2, 2, 2027), (2027, 1, 2, 2027),  # February - January
])
def test_fiscal_year_is_named_by_the_year_it_ends_in(year, month, start, fy):
    assert cf.fiscal_year(year, month, start) == fy


@pytest.mark.parametrize("month, start, q", [(1, 1, 1), (3, 1, 1), (4, 1, 2), (12, 1, 4), (10, 10, 1), (12, 10, 1),
                                             (1, 10, 2), (9, 10, 4), (6, 7, 4), (7, 7, 1)])
def test_fiscal_quarter(month, start, q):
    assert cf.fiscal_quarter(month, start) == q


def test_bad_months_are_refused():
    with pytest.raises(ValueError):
        cf.fiscal_year(2027, 13, 1)
    with pytest.raises(ValueError):
        cf.fiscal_quarter(1, 0)
    with pytest.raises(ValueError):
        cf.months(2027, 0, 1, 3)


def test_months_run_over_the_year_end():
    window = cf.months(2026, 11, 1, 4)
    firsts = [cf.EXCEL_EPOCH + dt.timedelta(days=m.start_serial) for m in window]
    assert firsts == [dt.date(2026, 11, 1), dt.date(2026, 12, 1), dt.date(2027, 1, 1), dt.date(2027, 2, 1)]
    assert [m.fiscal_year for m in window] == [2026, 2026, 2027, 2027]
    assert window[-1].next_serial - window[-1].start_serial == 28


def test_rent_spreads_by_calendar_days():
    """60 days from 1 January 2027: January's 31, February's 28 and 1 day of March, at $100 a day."""
    window = cf.months(2027, 1, 1, 4)
    rent = cf.rent_by_month_usd(window, rent_per_day_usd=100.0, rent_days=60.0)
    assert rent == [3100.0, 2800.0, 100.0, 0.0]
    part = cf.rent_by_month_usd(window, rent_per_day_usd=10.0, rent_days=31.5)
    assert part == pytest.approx([310.0, 5.0, 0.0, 0.0])


def test_rent_longer_than_the_window_stops_at_its_end():
    window = cf.months(2027, 1, 1, 2)
    assert sum(cf.rent_by_month_usd(window, rent_per_day_usd=1.0, rent_days=1000.0)) == 59.0


def test_buy_path_capex_first_opex_in_service_residual_at_the_horizon():
    buy = cf.buy_by_month_usd(6, capex_usd=1200.0, opex_per_year_usd=120.0, horizon_years=0.375,
                              residual_usd=300.0)  # 4.5 months
    assert buy["capex_usd"] == [1200.0, 0, 0, 0, 0, 0]
    assert buy["opex_usd"] == [10.0, 10.0, 10.0, 10.0, 5.0, 0.0]
    assert buy["residual_usd"] == [0, 0, 0, 0, 300.0, 0]
    assert buy["net_usd"] == [1210.0, 10.0, 10.0, 10.0, -295.0, 0.0]


def test_residual_after_the_window_is_not_in_it():
    buy = cf.buy_by_month_usd(36, capex_usd=1.0, opex_per_year_usd=12.0, horizon_years=4.0, residual_usd=0.5)
    assert sum(buy["residual_usd"]) == 0.0 and sum(buy["opex_usd"]) == 36.0


def test_horizon_ending_on_a_month_boundary_puts_the_residual_in_that_month():
    buy = cf.buy_by_month_usd(36, capex_usd=1.0, opex_per_year_usd=12.0, horizon_years=3.0, residual_usd=0.5)
    assert buy["residual_usd"][35] == 0.5 and sum(buy["residual_usd"]) == 0.5


def test_subtotals_and_buckets():
    window = cf.months(2027, 8, 10, 36)  # August 2027, fiscal years from October
    years = cf.fiscal_year_buckets(window, 4)
    assert years == [2027, 2028, 2029, 2030]
    keys = [m.fiscal_year for m in window]
    assert cf.subtotals([1.0] * 36, keys, years) == [2.0, 12.0, 12.0, 10.0]
    quarters = cf.quarter_buckets(window, 13)
    assert quarters[0] == (2027, 4) and quarters[1] == (2028, 1) and quarters[-1] == (2030, 4)
    qkeys = [(m.fiscal_year, m.fiscal_quarter) for m in window]
    sums = cf.subtotals([1.0] * 36, qkeys, quarters)
    assert sums[0] == 2.0 and sums[-1] == 1.0 and sum(sums) == 36.0
    assert cf.cumulative([1.0, 2.0, -0.5]) == [1.0, 3.0, 2.5]
