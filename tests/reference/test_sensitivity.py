"""workbook.reference.sensitivity: the closed forms, checked by putting the switching value back in."""

from __future__ import annotations

import pytest

from workbook.reference import sensitivity as sv


def test_switching_values_solve_their_equations():
    hours, budget = 921_600.0, 2e6
    p = sv.price_switch_usd_per_gpu_hour(budget_usd=budget, gpu_hours=hours)
    assert hours * p == pytest.approx(budget, rel=1e-15)
    d = sv.proportional_switch(value=3e12, limit=60, measure=55.0)
    assert 55.0 * d / 3e12 == pytest.approx(60, rel=1e-15)
    x = sv.inverse_switch(value=1000.0, limit=60, measure=66.0)
    assert 66.0 * 1000.0 / x == pytest.approx(60, rel=1e-15)
    s = sv.seq_switch(seq_len=4096, attn_share_frac=0.08, limit=60, measure=50.0)
    assert 50.0 * (1 + 0.08 * (s / 4096 - 1)) == pytest.approx(60, rel=1e-14)
    assert sv.seq_switch(seq_len=4096, attn_share_frac=0, limit=60, measure=50) == 0
    e = sv.power_switch_usd_per_kWh(electricity_usd_per_kWh=0.1, power_usd=1e5, depreciation_usd=4e5, budget_usd=1e6)
    assert sv.tco_at_power(1e5, 4e5, e / 0.1 - 1) == pytest.approx(1e6, rel=1e-14)


def test_moves():
    assert sv.scaled(10.0, -0.2) == pytest.approx(8.0)
    assert sv.inverse_scaled(10.0, 0.25) == pytest.approx(8.0)
    assert sv.seq_scaled(10.0, 0.5, 0.1) == pytest.approx(10.5)


def test_owned_hardware_by_year():
    from workbook.reference import ownership as own

    power = own.power_per_year_usd(num_gpus=8, power_usd_per_gpu_hour=0.1)
    assert power == pytest.approx(8 * 0.1 * 8760)
    assert own.depreciation_per_year_usd(capex_usd=3e5, years=3) == pytest.approx(1e5)
    assert own.tco_usd(capex_usd=3e5, power_per_year_usd=power, years=3) == pytest.approx(3e5 + 3 * power)
