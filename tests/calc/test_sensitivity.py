"""Sensitivity and switching values (workbook.calc.sensitivity) checked by recomputation: set the driver to
its switching value, compute the whole scenario again, and the plan is exactly at its budget or deadline."""

from __future__ import annotations

import pytest

from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.scenario.load import load_scenario

CATALOG = load_catalog()
BOOK = load_scenario("catalog/scenarios/17.9.4-70b-plan-h800.yaml")  # mfu time model, budget $2M, 60 days


def _with(sc, section: str, **kw):
    return sc.model_copy(update={section: getattr(sc, section).model_copy(update=kw)})


STEP = _with(BOOK, "training", time_model="step", memory_model="tensors", zero_stage=1)


@pytest.mark.parametrize("sc", [BOOK, STEP], ids=["mfu", "step"])
def test_exact_drivers_scale_as_stated(sc):
    q = compute(sc, CATALOG)
    s, cost, days = q["sens_step_frac"], q["sens_cost_usd"], q["sens_days"]
    assert s == 0.2
    assert q["sens_price_dcost_high_usd"] == pytest.approx(0.2 * cost, rel=1e-12)
    assert q["sens_thr_days_low"] == pytest.approx(days / 0.8, rel=1e-12)
    # tokens: the whole calculation at +20 % tokens gives +20 % days and cost
    hi = compute(_with(sc, "training", tokens=sc.training.tokens * 1.2), CATALOG)
    assert hi["train_days_actual"] == pytest.approx(q["sens_tokens_days_high"], rel=1e-9)
    assert hi["train_cost_usd"] == pytest.approx(cost + q["sens_tokens_dcost_high_usd"], rel=1e-9)
    # power: the owned cost of the run moves by the power part only; rent and days do not
    e = q["cost_electricity_usd_per_kWh"]
    p = compute(_with(sc, "cost", electricity_usd_per_kWh=e * 0.8), CATALOG)
    assert p["self_build_total_usd"] == pytest.approx(q["sens_tco_usd"] + q["sens_power_dcost_low_usd"], rel=1e-12)
    assert p["train_cost_usd"] == cost


@pytest.mark.parametrize("sc", [BOOK, STEP], ids=["mfu", "step"])
def test_switching_values_put_the_plan_exactly_at_its_limits(sc):
    q = compute(sc, CATALOG)
    budget, target = sc.cost.budget_usd, sc.training.target_days
    # the price at the budget check: the larger of the run's and the target window's cost meets the budget
    at = compute(_with(sc, "cost", gpu_hour_usd=q["sens_price_switch_budget_usd_per_gpu_hour"]), CATALOG)
    assert max(at["train_cost_usd"], at["train_cost_target_usd"]) == pytest.approx(budget, rel=1e-12)
    assert at["budget_headroom_usd"] == pytest.approx(0, abs=budget * 1e-12)
    if q["sens_overhead_switch_deadline_x"] >= 1:  # below 1: late even without overhead (the factor starts at 1)
        at = compute(_with(sc, "training", overhead_factor=q["sens_overhead_switch_deadline_x"]), CATALOG)
        assert at["train_days_actual"] == pytest.approx(target, rel=1e-9)
    at = compute(_with(sc, "training", tokens=q["sens_tokens_switch_deadline"]), CATALOG)
    assert at["train_days_actual"] == pytest.approx(target, rel=1e-9)
    at = compute(_with(sc, "training", tokens=q["sens_tokens_switch_budget"]), CATALOG)
    assert at["train_cost_usd"] == pytest.approx(budget, rel=1e-9)
    e = q["sens_power_switch_budget_usd_per_kWh"]
    if e > 0:
        at = compute(_with(sc, "cost", electricity_usd_per_kWh=e), CATALOG)
        assert at["self_build_total_usd"] == pytest.approx(budget, rel=1e-9)
    else:  # below 0 = no power price: the depreciation of the run alone exceeds the budget
        assert q["self_build_depreciation_usd"] > budget
    # throughput: days = target at the switching throughput (days x throughput is fixed by the tokens)
    assert q["train_days_actual"] * q["train_tokens_per_s_per_gpu"] == pytest.approx(
        target * q["sens_thr_switch_deadline_tokens_per_s_per_gpu"], rel=1e-12)


def test_mfu_switching_value_recomputed_with_the_mfu_time_model():
    q = compute(BOOK, CATALOG)
    at = compute(_with(BOOK, "training", mfu=q["sens_mfu_switch_deadline_frac"]), CATALOG)
    assert at["train_days_actual"] == pytest.approx(BOOK.training.target_days, rel=1e-12)


def test_sequence_length_is_an_approximation_through_the_attention_share():
    q = compute(BOOK, CATALOG)
    assert q["sens_seq_share_frac"] == 0 and q["sens_seq_swing_days"] == 0  # 6PD has no attention term
    assert q["sens_seq_switch_deadline_tokens"] == 0
    s = compute(STEP, CATALOG)
    a = s["sens_seq_share_frac"]
    assert 0 < a < 0.2
    # the step model at S x 1.2 against the approximation days x (1 + 0.2 a): close, not exact
    hi = compute(_with(STEP, "training", seq_len=int(STEP.training.seq_len * 1.2)), CATALOG)
    assert hi["train_days_actual"] == pytest.approx(s["sens_seq_days_high"], rel=0.05)


def test_contingency_is_separate():
    q = compute(_with(BOOK, "cost", contingency_frac=0.1), CATALOG)
    assert q["sens_contingency_usd"] == pytest.approx(0.1 * q["train_cost_usd"], rel=1e-12)
    assert q["sens_cost_with_contingency_usd"] == pytest.approx(1.1 * q["train_cost_usd"], rel=1e-12)
    assert q["train_cost_usd"] == compute(BOOK, CATALOG)["train_cost_usd"]


def test_owned_by_year_matches_the_cost_sheet_over_a_year():
    q = compute(BOOK, CATALOG)
    # power per year = the run's power scaled to 365 days; depreciation per year x years = capex
    assert q["own_power_per_year_usd"] == pytest.approx(q["self_build_power_usd"] * 365 / q["train_days_actual"],
                                                        rel=1e-12)
    assert q["own_depreciation_per_year_usd"] * q["cost_depreciation_years"] == pytest.approx(q["train_capex_usd"])
    assert q["own_tco_usd"] == pytest.approx(q["train_capex_usd"] + q["own_power_per_year_usd"]
                                             * q["cost_depreciation_years"], rel=1e-12)


@pytest.mark.parametrize("sc", [BOOK, STEP], ids=["mfu", "step"])
def test_switching_values_flip_their_checks(sc):
    """At the switching value -/+ 0.5 % the check passes, then fails (price: budget; overhead: deadline)."""
    q = compute(sc, CATALOG)
    price, over = q["sens_price_switch_budget_usd_per_gpu_hour"], q["sens_overhead_switch_deadline_x"]
    for f, ok in ((0.995, 1.0), (1.005, 0.0)):
        assert compute(_with(sc, "cost", gpu_hour_usd=price * f), CATALOG)["within_budget_flag"] == ok
        if over * f >= 1:  # the factor's range starts at 1
            assert compute(_with(sc, "training", overhead_factor=over * f), CATALOG)["train_meets_target_flag"] == ok
