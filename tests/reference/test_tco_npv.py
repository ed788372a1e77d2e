"""workbook.reference.tco_npv: discounting (year-end), residual value, NPV of buying and of renting (issue 23)."""

from __future__ import annotations

import pytest

from workbook.reference import tco_npv


def test_discount_factor_and_residual_share():
    assert tco_npv.discount_factor(rate=0.1, years=2) == pytest.approx(1 / 1.21, rel=1e-15)
    assert tco_npv.discount_factor(rate=0.0, years=7) == 1
    assert tco_npv.residual_frac(age_years=3, life_years=5, floor_frac=0.1) == pytest.approx(0.4)
    assert tco_npv.residual_frac(age_years=6, life_years=5, floor_frac=0.1) == 0.1  # the floor
    with pytest.raises(ValueError):
        tco_npv.residual_frac(age_years=3, life_years=0, floor_frac=0.1)


def test_npv_by_hand():
    """Capex 100 now, opex 10 at the end of years 1 and 2, residual 40 at 2 years, 10 %: 100 + 10/1.1 + 10/1.21
    - 40/1.21 = 84.2975...; renting 60 a year: 60/1.1 + 60/1.21 = 104.13...; buying is cheaper."""
    owned = tco_npv.npv_owned_usd(capex_usd=100, opex_by_year_usd=[10, 10, 0], residual_usd=40, years=2, rate=0.1)
    rent = tco_npv.npv_rent_usd(rent_by_year_usd=[60, 60, 0], rate=0.1)
    assert owned == pytest.approx(100 + 10 / 1.1 + 10 / 1.21 - 40 / 1.21, rel=1e-15)
    assert rent == pytest.approx(60 / 1.1 + 60 / 1.21, rel=1e-15)
    assert owned < rent


def test_a_higher_rate_favours_renting_and_a_residual_favours_buying():
    """Buying pays up front: discounting the later years more shrinks the rent's PV more than the owned one's."""
    def gap(rate, residual):
        return (tco_npv.npv_rent_usd(rent_by_year_usd=[50, 50, 50], rate=rate)
                - tco_npv.npv_owned_usd(capex_usd=100, opex_by_year_usd=[10, 10, 10], residual_usd=residual, years=3,
                                        rate=rate))
    assert gap(0.15, 0) < gap(0.05, 0)
    assert gap(0.05, 30) > gap(0.05, 0)
