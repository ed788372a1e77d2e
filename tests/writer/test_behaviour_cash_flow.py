"""Behaviour tests of the Cash Flow sheet (issue 23 item 4): edit the default workbook as a person would (the start
month or year typed for one scenario, the Defaults sheet's fiscal year start set to October for every scenario that
leaves it blank, a GPU-hour price typed), recalculate with LibreOffice and check what moves: the fiscal-year split,
the calendar days of the rent, the rent path against the buy path. Expectations are differences and ratios against
the recalculated unedited copy, never the cached values."""

from __future__ import annotations

import pytest

from tests.writer.edits import Layout, Recalc, close, recalc_edited
from workbook.calc.cash_flow import MONTHS, key
from workbook.calc.cash_flow_periods import YEARS, ykey
from workbook.engines.libreoffice import find_soffice
from workbook.reference.cash_flow import date_serial

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

SHEET = "Cash Flow"
PLAN = "llama-3-70b-plan-h800x640"  # 640 H800 at $2.00 reserved, 60 days: the rental ends in month 3


@pytest.fixture(scope="module")
def layout(built) -> Layout:
    return Layout(built[0])


@pytest.fixture(scope="module")
def i(layout) -> int:
    return layout.names.index(PLAN)


@pytest.fixture(scope="module")
def rc(built, layout, i, tmp_path_factory) -> dict[str, Recalc]:
    edits = {
        "roundtrip": lambda b: None,
        "july": lambda b: b.plan("cost.cash_start_month", i, 7),
        "leap_2028": lambda b: b.plan("cost.cash_start_year", i, 2028),
        "fiscal_october": lambda b: b.default("fiscal_year_start_month", 10),
        "price_x2": lambda b: b.plan("cost.gpu_hour_usd", i, 4.0),
    }
    steps = {name: [fn] for name, fn in edits.items()}
    return recalc_edited(built[0], tmp_path_factory.mktemp("behaviour_cash_flow"), steps, layout)


def _months(r: Recalc, series: str, i: int) -> list:
    return [r.get(SHEET, key(k, series), i) for k in MONTHS]


def _fy_months(r: Recalc, i: int) -> list:
    return [r.get(SHEET, ykey(j, "months"), i) for j in YEARS]


def test_roundtrip_has_no_error_values_and_the_checks_pass(rc, layout):
    base = rc["roundtrip"]
    assert base.errors(SHEET) == {}
    for j in range(len(layout.names)):
        for check in ("check_cf_rent_ask", "check_cf_capex", "check_cf_periods"):
            assert base.get("Checks", check, j) == 0, (check, j)
        assert _fy_months(base, j) == [12, 12, 12, 0]  # January 2027 on, calendar fiscal years


def test_start_month_shifts_the_fiscal_year_split(rc, i):
    base, r = rc["roundtrip"], rc["july"]
    assert r.get(SHEET, "cf_start_date", i) == date_serial(2027, 7)
    assert _fy_months(r, i) == [6, 12, 12, 6]
    assert close(r.get(SHEET, ykey(1, "rent_usd"), i), base.get(SHEET, "cf_rent_total_usd", i))  # all in 2027
    assert r.get(SHEET, ykey(1, "opex_usd"), i) < base.get(SHEET, ykey(1, "opex_usd"), i)  # half a year of opex
    assert close(r.get(SHEET, "cf_buy_total_usd", i), base.get(SHEET, "cf_buy_total_usd", i))
    assert r.get("Checks", "check_cf_periods", i) == 0


def test_a_leap_february_carries_one_more_day_of_rent(rc, i):
    base, r = rc["roundtrip"], rc["leap_2028"]
    per_day = base.get(SHEET, "cf_rent_per_day_usd", i)
    assert close(base.get(SHEET, key(2, "rent_usd"), i), 28 * per_day)
    assert close(r.get(SHEET, key(2, "rent_usd"), i), 29 * per_day)
    assert close(r.get(SHEET, key(3, "rent_usd"), i), 0.0)  # 31 + 29 = the 60 days
    assert r.get(SHEET, ykey(1, "fiscal_year"), i) == 2028


def test_an_october_fiscal_year_on_defaults_moves_every_scenario(rc, layout):
    base, r = rc["roundtrip"], rc["fiscal_october"]
    for j in range(len(layout.names)):
        assert _fy_months(r, j) == [9, 12, 12, 3]
        assert r.get(SHEET, key(10, "fiscal_quarter"), j) == 1 and r.get(SHEET, key(10, "fiscal_year"), j) == 2028
        assert close(r.get(SHEET, "cf_fy_buy_total_usd", j), base.get(SHEET, "cf_buy_total_usd", j))


def test_the_gpu_hour_price_moves_the_rent_path_only(rc, i, layout):
    base, r = rc["roundtrip"], rc["price_x2"]
    assert close(r.get(SHEET, "cf_rent_total_usd", i), 2 * base.get(SHEET, "cf_rent_total_usd", i))
    assert all(close(a, 2 * b) for a, b in zip(_months(r, "rent_usd", i), _months(base, "rent_usd", i)))
    assert r.get(SHEET, "cf_buy_total_usd", i) == base.get(SHEET, "cf_buy_total_usd", i)
    others = [j for j in range(len(layout.names)) if j != i]
    assert all(r.get(SHEET, "cf_rent_total_usd", j) == base.get(SHEET, "cf_rent_total_usd", j) for j in others)
