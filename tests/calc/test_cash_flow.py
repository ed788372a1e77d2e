"""calc.cash_flow and calc.cash_flow_periods on the shipped scenarios (issue 23 item 4): the rent path adds up to the
Cover's ask, the buy path to the TCO sheet's bill, the fiscal years and quarters to the months; each new input moves
what it should."""

from __future__ import annotations

import pytest

from workbook.calc import compute, registry
from workbook.calc.cash_flow import CF_MONTHS, MONTHS, key
from workbook.calc.cash_flow_periods import QUARTERS, YEARS, qkey, ykey
from workbook.catalog import load_catalog
from workbook.reference import cash_flow as cf
from workbook.scenario.load import load_scenario
from workbook.units import UNITS

CATALOG = load_catalog()
PLAN = load_scenario("catalog/scenarios/17.9.4-70b-plan-h800.yaml")  # training, 3 years
SERVE = load_scenario("catalog/scenarios/17.9.6-70b-inference-h800.yaml")  # serving only


def _cost(sc, **kw):
    return sc.model_copy(update={"cost": sc.cost.model_copy(update=kw)})


def _series(q, series):
    return [q[key(k, series)] for k in MONTHS]


def test_every_quantity_has_a_unit_of_the_vocabulary_and_a_cash_flow_sheet():
    entries = [e for e in registry().values() if e.module in ("cash_flow", "cash_flow_periods")]
    assert len(entries) > 10 * CF_MONTHS
    assert all(e.q.unit in UNITS and e.sheet == "Cash Flow" for e in entries)


def test_training_rent_path_is_the_ask_spread_by_rental_days():
    q = compute(PLAN, CATALOG)
    ask = max(q["train_cost_usd"], q["train_cost_target_usd"])
    assert q["cf_rent_ask_usd"] == ask
    assert q["cf_rent_days"] == max(q["train_days_actual"], PLAN.training.target_days)
    assert sum(_series(q, "rent_usd")) == pytest.approx(ask, rel=1e-12)
    assert q["cf_rent_total_usd"] == pytest.approx(q["cf_rent_in_window_usd"], rel=1e-12)
    per_day = q["cf_rent_per_day_usd"]
    assert q[key(1, "rent_usd")] == pytest.approx(per_day * 31)  # January 2027, the default start
    assert q[key(CF_MONTHS, "rent_usd")] == 0.0
    assert q[key(CF_MONTHS, "rent_cumulative_usd")] == pytest.approx(q["cf_rent_total_usd"], rel=1e-12)


def test_buy_path_is_the_tco_bill():
    q = compute(PLAN, CATALOG)
    assert q[key(1, "capex_usd")] == q["tco_capex_usd"] == q["cf_capex_total_usd"]
    assert all(q[key(k, "capex_usd")] == 0.0 for k in MONTHS if k > 1)
    assert q["tco_years"] == 3  # the default horizon: the window holds it whole
    assert q["cf_opex_total_usd"] == pytest.approx(q["tco_opex_per_year_usd"] * 3, rel=1e-12)
    assert q[key(CF_MONTHS, "residual_usd")] == q["tco_residual_usd"] == q["cf_residual_total_usd"]
    assert q["cf_buy_total_usd"] == pytest.approx(q["tco_total_usd"] - q["tco_residual_usd"], rel=1e-12)


def test_serving_rent_runs_every_day_of_the_window():
    q = compute(SERVE, CATALOG)
    assert q["purpose_training_flag"] == 0
    assert q["cf_rent_days"] == q["cf_window_days"] == 1096  # 2027-2029 holds 29 February 2028
    assert q["cf_rent_total_usd"] == pytest.approx(q["infer_daily_cost_usd"] * 1096, rel=1e-12)
    assert all(q[key(k, "rent_usd")] > 0 for k in MONTHS)


@pytest.mark.parametrize("sc", [PLAN, SERVE], ids=["17.9.4", "17.9.6"])
def test_checks_pass_and_the_periods_add_up(sc):
    q = compute(sc, CATALOG)
    assert q["check_cf_rent_ask"] == q["check_cf_capex"] == q["check_cf_periods"] == 0.0
    for s in ("rent_usd", "capex_usd", "opex_usd", "residual_usd", "buy_usd"):
        months = sum(_series(q, s))
        assert sum(q[ykey(j, s)] for j in YEARS) == pytest.approx(months, rel=1e-12, abs=1e-6)
        assert sum(q[qkey(j, s)] for j in QUARTERS) == pytest.approx(months, rel=1e-12, abs=1e-6)
    assert sum(q[ykey(j, "months")] for j in YEARS) == CF_MONTHS


def test_fiscal_year_start_moves_the_split_not_the_total():
    cal = compute(PLAN, CATALOG)
    fed = compute(_cost(PLAN, fiscal_year_start_month=10), CATALOG)
    assert [cal[ykey(j, "months")] for j in YEARS] == [12, 12, 12, 0]
    assert [fed[ykey(j, "months")] for j in YEARS] == [9, 12, 12, 3]  # Jan-Sep 2027 is fiscal 2027
    assert fed[ykey(1, "fiscal_year")] == 2027 and fed[key(10, "fiscal_year")] == 2028
    assert fed[key(10, "fiscal_quarter")] == 1 and fed[key(1, "fiscal_quarter")] == 2
    assert fed[ykey(1, "opex_usd")] != cal[ykey(1, "opex_usd")]
    assert fed["cf_buy_total_usd"] == pytest.approx(cal["cf_buy_total_usd"], rel=1e-12)


def test_start_month_moves_the_dates_and_the_split():
    base = compute(PLAN, CATALOG)
    july = compute(_cost(PLAN, cash_start_month=7), CATALOG)
    assert july["cf_start_date"] == cf.date_serial(2027, 7)
    assert [july[ykey(j, "months")] for j in YEARS] == [6, 12, 12, 6]
    assert july[ykey(1, "rent_usd")] == pytest.approx(july["cf_rent_total_usd"])  # 60 days from July: all in 2027
    assert july[key(1, "rent_usd")] == pytest.approx(july["cf_rent_per_day_usd"] * 31)
    later = compute(_cost(PLAN, cash_start_year=2030), CATALOG)
    assert later[ykey(1, "fiscal_year")] == 2030 and later["cf_start_date"] > base["cf_start_date"]


def test_gpu_hour_price_moves_the_rent_path_not_the_buy_path():
    base = compute(PLAN, CATALOG)
    dear = compute(_cost(PLAN, gpu_hour_usd=base["gpu_hour_usd"] * 2), CATALOG)
    assert dear["cf_rent_total_usd"] == pytest.approx(2 * base["cf_rent_total_usd"], rel=1e-12)
    assert dear["cf_buy_total_usd"] == base["cf_buy_total_usd"]


def test_a_horizon_inside_the_window_ends_opex_and_brings_the_residual_in():
    q = compute(_cost(PLAN, depreciation_years=2.5), CATALOG)
    assert q[key(30, "opex_usd")] > 0 and q[key(31, "opex_usd")] == 0.0
    assert q[key(30, "residual_usd")] == q["tco_residual_usd"] and q[key(30, "buy_usd")] < 0
    longer = compute(_cost(PLAN, depreciation_years=5), CATALOG)
    assert longer["cf_residual_total_usd"] == 0.0  # it ends after the window
