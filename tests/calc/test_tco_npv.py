"""calc.tco_npv on the shipped scenarios: rent vs buy like for like (issue 23). Every row equals
workbook.reference.tco_npv called on the per-year table; the discount rate and the residual move the NPVs the
right way; the new cost inputs each move the bill."""

from __future__ import annotations

import pytest

from workbook.calc import compute, tco_npv as npv_calc
from workbook.calc import tco_years
from workbook.catalog import load_catalog
from workbook.reference import tco_npv
from workbook.scenario.load import load_scenario

CATALOG = load_catalog()
D = CATALOG.defaults.as_dict()
PLAN = load_scenario("catalog/scenarios/17.9.4-70b-plan-h800.yaml")  # 640 H800, 3 years
SERVE = load_scenario("catalog/scenarios/17.9.6-70b-inference-h800.yaml")


def _cost(sc, **kw):
    return sc.model_copy(update={"cost": sc.cost.model_copy(update=kw)})


@pytest.mark.parametrize("sc", [PLAN, SERVE], ids=["17.9.4", "17.9.6"])
def test_npvs_equal_the_reference(sc):
    q = compute(sc, CATALOG)
    rate, years = D["discount_rate_frac"], q["tco_years"]
    opex = [q[tco_years.key(k, "opex")] for k in tco_years.YEARS]
    rent = [q[tco_years.key(k, "rent")] for k in tco_years.YEARS]
    residual = q["tco_capex_usd"] * tco_npv.residual_frac(age_years=years, life_years=D["residual_life_years"],
                                                          floor_frac=D["residual_floor_frac"])
    assert q["tco_residual_usd"] == residual and q["tco_residual_frac"] == pytest.approx(1 - 3 / 5)
    owned = tco_npv.npv_owned_usd(capex_usd=q["tco_capex_usd"], opex_by_year_usd=opex, residual_usd=residual,
                                  years=years, rate=rate)
    assert q["tco_npv_owned_usd"] == pytest.approx(owned, rel=1e-14)
    assert q["tco_npv_rent_usd"] == pytest.approx(tco_npv.npv_rent_usd(rent_by_year_usd=rent, rate=rate), rel=1e-14)
    assert q["tco_npv_buy_saving_usd"] == q["tco_npv_rent_usd"] - q["tco_npv_owned_usd"]
    assert q["tco_buy_cheaper_flag"] == float(q["tco_npv_owned_usd"] < q["tco_npv_rent_usd"])
    # discounting: both NPVs below their undiscounted totals (the owned one also nets the residual)
    assert q["tco_npv_rent_usd"] < q["tco_rent_total_usd"] and q["tco_npv_owned_usd"] < q["tco_total_usd"]
    assert q[npv_calc.key(3, "discount")] == pytest.approx((1 + rate) ** -3, rel=1e-15)


def test_the_discount_rate_moves_the_npvs_the_right_way():
    """A higher rate lowers both NPVs, the rent's more (it is paid later): the saving from buying falls."""
    low, high = compute(_cost(PLAN, discount_rate_frac=0.03), CATALOG), compute(_cost(PLAN, discount_rate_frac=0.15),
                                                                              CATALOG)
    assert high["tco_npv_owned_usd"] < low["tco_npv_owned_usd"] and high["tco_npv_rent_usd"] < low["tco_npv_rent_usd"]
    assert high["tco_npv_buy_saving_usd"] < low["tco_npv_buy_saving_usd"]
    zero = compute(_cost(PLAN, discount_rate_frac=0.0, residual_floor_frac=0.0, residual_life_years=3), CATALOG)
    assert zero["tco_npv_owned_usd"] == pytest.approx(zero["tco_total_usd"], rel=1e-12)  # undiscounted, no residual
    assert zero["tco_npv_rent_usd"] == pytest.approx(zero["tco_rent_total_usd"], rel=1e-12)


def test_the_residual_inputs_move_the_owned_npv_only():
    base = compute(PLAN, CATALOG)
    longer = compute(_cost(PLAN, residual_life_years=10), CATALOG)  # 1 - 3/10 = 0.7 of capex kept
    assert longer["tco_residual_frac"] == pytest.approx(0.7)
    assert longer["tco_npv_owned_usd"] < base["tco_npv_owned_usd"]
    assert longer["tco_npv_rent_usd"] == base["tco_npv_rent_usd"] and longer["tco_total_usd"] == base["tco_total_usd"]
    floored = compute(_cost(PLAN, residual_life_years=2, residual_floor_frac=0.25), CATALOG)
    assert floored["tco_residual_frac"] == 0.25


@pytest.mark.parametrize("field, value, line", [
    ("optics_usd_per_link", 5000.0, "tco_optics_capex_usd"),
    ("host_power_W_per_server", 9200.0, "tco_host_power_kW"),
    ("space_usd_per_kW_month", 368.12, "tco_space_per_year_usd"),
    ("support_frac_of_capex_per_year", 0.16, "tco_support_per_year_usd"),
])
def test_each_bill_input_doubles_its_line_and_raises_the_owned_npv(field, value, line):
    assert value == pytest.approx(2 * D[field])
    base, q = compute(PLAN, CATALOG), compute(_cost(PLAN, **{field: value}), CATALOG)
    assert q[line] == pytest.approx(2 * base[line], rel=1e-12)
    assert q["tco_total_usd"] > base["tco_total_usd"] and q["tco_npv_owned_usd"] > base["tco_npv_owned_usd"]


def test_staff_default_is_people_times_cost_and_a_typed_figure_wins():
    q = compute(PLAN, CATALOG)
    assert q["tco_staff_fte"] == 1 and q["tco_staff_per_year_usd"] == D["staff_usd_per_fte_year"]
    assert compute(_cost(PLAN, staff_usd_per_year=0.0), CATALOG)["tco_staff_per_year_usd"] == 0
