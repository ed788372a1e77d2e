"""Unit and property tests of workbook.reference.train_cost (spec 17.5.9)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from workbook.reference import train_cost as tc


def test_ex1_cloud_vs_self():
    h = tc.gpu_hours(num_gpus=256, days=10)
    assert h == 61440
    assert tc.cloud_cost_usd(gpu_hours=h, gpu_hour_usd=3) == 184320
    s = tc.self_build_cost_usd(num_gpus=256, days=10, tdp_W=700, electricity_usd_per_kWh=0.1,
                               capex_usd_per_gpu=25000, years=3)
    assert s["power_usd"] == pytest.approx(4300.8)
    assert s["depreciation_usd"] == pytest.approx(58447.49, rel=1e-6)
    # cooling via PUE scales only the power term
    s2 = tc.self_build_cost_usd(num_gpus=256, days=10, tdp_W=700, electricity_usd_per_kWh=0.1,
                                capex_usd_per_gpu=25000, years=3, pue=1.4)
    assert s2["power_usd"] == pytest.approx(1.4 * 4300.8)


def test_break_even_and_mfu_lever():
    assert tc.break_even_count(cost_big_usd=122880, cost_small_usd=480) == 256
    assert tc.mfu_saving_frac(mfu_old=0.3, mfu_new=0.45) == pytest.approx(1 / 3)
    assert tc.budget_margin_frac(cost_usd=2.1e6, budget_usd=2e6) < 0
    with pytest.raises(ValueError):
        tc.break_even_count(cost_big_usd=1, cost_small_usd=0)


def test_price_table_ranges_ordered():
    for row in tc.PRICE_TABLE.values():
        assert row["on_demand_low"] <= row["on_demand_high"] and row["reserved_low"] <= row["reserved_high"]
        assert row["reserved_high"] <= row["on_demand_high"]


@given(n=st.integers(0, 10**6), d=st.floats(min_value=0, max_value=3650), p=st.floats(min_value=0, max_value=100))
def test_cost_finite_nonneg(n, d, p):
    c = tc.cloud_cost_usd(gpu_hours=tc.gpu_hours(num_gpus=n, days=d), gpu_hour_usd=p)
    assert math.isfinite(c) and c >= 0
