"""Behaviour tests of rent vs buy on the TCO sheet (issue 23 item 3): edit the default workbook as a person would
(the discount rate typed for one scenario, the Defaults sheet's rate set to 0 for every scenario that leaves it
blank, a longer residual life typed, a space price typed), recalculate with LibreOffice and check that the NPVs
move the right way and by the right amount. Expectations are differences and ratios against the recalculated
unedited copy, never the cached values."""

from __future__ import annotations

import pytest

from tests.writer.edits import Layout, Recalc, close, recalc_edited
from workbook.calc.tco_years import YEARS, key
from workbook.engines.libreoffice import find_soffice

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_soffice() is None, reason="LibreOffice (soffice) is not installed")]

N = 6  # scenarios of the default workbook

EDITS = {
    "roundtrip": lambda b: None,
    "rate_15": lambda b: b.plan("cost.discount_rate_frac", 0, 0.15),
    "rate_0_default": lambda b: b.default("discount_rate_frac", 0),
    "life_10": lambda b: b.plan("cost.residual_life_years", 3, 10),
    "space_x2": lambda b: b.plan("cost.space_usd_per_kW_month", 1, 2 * 184.06),
}


@pytest.fixture(scope="module")
def rc(built, tmp_path_factory) -> dict[str, Recalc]:
    steps = {name: [fn] for name, fn in EDITS.items()}
    return recalc_edited(built[0], tmp_path_factory.mktemp("behaviour_tco_npv"), steps, Layout(built[0]))


def test_roundtrip_has_no_error_values_and_discounting_lowers_both_costs(rc):
    base = rc["roundtrip"]
    assert base.errors("TCO") == {}
    for i in range(N):
        assert base.get("TCO", "tco_npv_rent_usd", i) < base.get("TCO", "tco_rent_total_usd", i)
        assert base.get("TCO", "tco_npv_owned_usd", i) < base.get("TCO", "tco_total_usd", i)
        cheaper = base.get("TCO", "tco_npv_owned_usd", i) < base.get("TCO", "tco_npv_rent_usd", i)
        assert base.get("TCO", "tco_buy_cheaper_flag", i) == float(cheaper)


def test_a_higher_discount_rate_lowers_both_npvs_and_the_saving_from_buying(rc):
    base, r = rc["roundtrip"], rc["rate_15"]
    assert r.get("TCO", "tco_discount_rate_frac", 0) == 0.15
    assert close(r.get("TCO", "tco_y2_discount", 0), 1.15 ** -2)
    for name in ("tco_npv_owned_usd", "tco_npv_rent_usd", "tco_npv_buy_saving_usd"):
        assert r.get("TCO", name, 0) < base.get("TCO", name, 0), name
    assert r.get("TCO", "tco_total_usd", 0) == base.get("TCO", "tco_total_usd", 0)  # the undiscounted TCO stays
    for i in range(1, N):  # the other scenarios keep the default rate
        assert r.get("TCO", "tco_npv_owned_usd", i) == base.get("TCO", "tco_npv_owned_usd", i)


def test_a_zero_rate_on_defaults_makes_the_rent_npv_the_undiscounted_rent(rc):
    r = rc["rate_0_default"]
    for i in range(N):
        assert close(r.get("TCO", "tco_npv_rent_usd", i), r.get("TCO", "tco_rent_total_usd", i))
        residual = r.get("TCO", "tco_residual_usd", i)
        assert close(r.get("TCO", "tco_npv_owned_usd", i), r.get("TCO", "tco_total_usd", i) - residual)


def test_a_longer_residual_life_lowers_the_owned_npv_by_the_discounted_residual(rc):
    base, r, i = rc["roundtrip"], rc["life_10"], 3
    capex, years = base.get("TCO", "tco_capex_usd", i), base.get("TCO", "tco_years", i)
    assert close(r.get("TCO", "tco_residual_frac", i), 1 - years / 10)
    gained = (r.get("TCO", "tco_residual_frac", i) - base.get("TCO", "tco_residual_frac", i)) * capex
    discount = base.get("TCO", "tco_residual_discount", i)
    assert close(base.get("TCO", "tco_npv_owned_usd", i) - r.get("TCO", "tco_npv_owned_usd", i), gained * discount)
    assert r.get("TCO", "tco_npv_rent_usd", i) == base.get("TCO", "tco_npv_rent_usd", i)


def test_a_space_price_doubles_the_space_line_and_raises_the_owned_npv_by_its_pv(rc):
    base, r, i = rc["roundtrip"], rc["space_x2"], 1
    line0 = base.get("TCO", "tco_space_per_year_usd", i)
    assert line0 > 0 and close(r.get("TCO", "tco_space_per_year_usd", i), 2 * line0)
    pv = sum(base.get("TCO", key(k, "space"), i) * base.get("TCO", f"tco_y{k}_discount", i) for k in YEARS)
    assert close(r.get("TCO", "tco_npv_owned_usd", i) - base.get("TCO", "tco_npv_owned_usd", i), pv)
