"""workbook.reference.serving_sensitivity: the serving cost per month, the replicas that carry a moved load, how
each driver moves the cost per month and per 1M output tokens, and the span of a driver's bars."""

from __future__ import annotations

import pytest

from workbook.reference import serving_sensitivity as ss


def test_month_is_the_hourly_rent_over_8760_hours_a_year_in_12_months():
    # 28 GPUs at $2.00/GPU-h: $56/h -> $40,880 a month
    assert ss.monthly_cost_usd(hourly_cost_usd=28 * 2.0) == pytest.approx(40_880.0, rel=1e-15)


@pytest.mark.parametrize("frac, replicas", [(-0.2, 6), (0.0, 7), (0.2, 9)])
def test_replicas_for_the_moved_load_round_up(frac, replicas):
    # 20 requests/s on groups carrying at most 2.92 each: 16 -> 5.5 -> 6, 20 -> 6.8 -> 7, 24 -> 8.2 -> 9
    assert ss.replicas_for_load(arrival_rate_rps=20.0, frac=frac, max_load_rps_per_replica=2.92) == replicas


def test_a_load_that_fills_whole_replicas_needs_no_extra_one():
    assert ss.replicas_for_load(arrival_rate_rps=7.0, frac=0.0, max_load_rps_per_replica=1.0) == 7  # not 8
    with pytest.raises(ValueError):
        ss.replicas_for_load(arrival_rate_rps=7.0, frac=0.0, max_load_rps_per_replica=0.0)


def test_load_moves_the_month_with_the_replicas_and_the_per_1M_with_replicas_over_tokens():
    assert ss.load_scaled_month(700.0, 7, 9) == pytest.approx(900.0, rel=1e-15)
    # 9 replicas for 1.2 x the tokens: 9/7/1.2 of the cost per 1M tokens
    assert ss.load_scaled_per_1M(1.2, 7, 9, 0.2) == pytest.approx(1.2 * 9 / 7 / 1.2, rel=1e-15)
    # the same replicas for the same load: no change
    assert ss.load_scaled_per_1M(1.5, 7, 7, 0.0) == 1.5 and ss.load_scaled_month(700.0, 7, 7) == 700.0


def test_power_change_is_linear_in_the_price_step():
    # a power bill of $22,369.536 a year: +20 % = 0.2 x 22,369.536 / 12 a month
    up = ss.power_change_per_month_usd(power_per_year_usd=22369.536, frac=0.2)
    assert up == pytest.approx(0.2 * 22369.536 / 12, rel=1e-12)
    assert ss.power_change_per_month_usd(power_per_year_usd=22369.536, frac=-0.2) == -up


@pytest.mark.parametrize("low, high, span", [(-2.0, 3.0, 5.0), (1.0, 3.0, 3.0), (-4.0, -1.0, 4.0), (0.0, 0.0, 0.0)])
def test_span_counts_from_zero(low, high, span):
    assert ss.span(low, high) == span
