"""Serving sensitivity (workbook.calc.serving_sensitivity) checked by recomputation: move the driver in the scenario
(the GPU-hour price, the arrival rate with the replicas the sheet says carry it, the output tokens, the power price),
compute the whole scenario again, and the serving cost lands where the -/+ step row says; and the TCO's storage
follows the purpose (calc.tco)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbook.calc import compute
from workbook.catalog import load_catalog
from workbook.planner.plan import plan_request
from workbook.planner.request import load_request
from workbook.reference import serving_sensitivity as ss
from workbook.scenario.load import load_scenario

CATALOG = load_catalog()
SERVE = load_scenario("catalog/scenarios/17.9.6-70b-inference-h800.yaml")  # book model, no arrival rate
PLAN = load_scenario("catalog/scenarios/17.9.4-70b-plan-h800.yaml")  # purpose both


def _with(sc, section: str, **kw):
    return sc.model_copy(update={section: getattr(sc, section).model_copy(update=kw)})


@pytest.fixture(scope="module")
def chat():
    """The serve-70b-chat request's recommended serving column: 8 replicas of H800 TP 4 at 20 requests/s."""
    out = plan_request(load_request(Path("catalog/requests/serve-70b-chat.yaml"), CATALOG), CATALOG)
    name = out.data["serving"]["recommended"]["scenario"]
    return next(s for s in out.scenarios if s.name == name)


def _month(q: dict) -> float:
    return ss.monthly_cost_usd(hourly_cost_usd=q["infer_hourly_cost_usd"])


def test_price_scales_both_measures_exactly():
    q = compute(SERVE, CATALOG)
    hi = compute(_with(SERVE, "cost", gpu_hour_usd=SERVE.cost.gpu_hour_usd * 1.2), CATALOG)
    assert q["srv_sens_month_usd"] == pytest.approx(_month(q), rel=1e-15)
    assert _month(hi) == pytest.approx(q["srv_sens_month_usd"] + q["srv_sens_price_dmonth_high_usd"], rel=1e-12)
    assert hi["infer_usd_per_1M_tokens"] == pytest.approx(q["srv_sens_1M_usd"] + q["srv_sens_price_d1M_high_usd"],
                                                          rel=1e-12)


def test_power_moves_the_owned_fleets_power_per_month():
    q = compute(SERVE, CATALOG)
    lo = compute(_with(SERVE, "cost", electricity_usd_per_kWh=q["cost_electricity_usd_per_kWh"] * 0.8), CATALOG)
    moved = (lo["tco_power_per_year_usd"] - q["tco_power_per_year_usd"]) / 12
    assert moved == pytest.approx(q["srv_sens_power_dmonth_low_usd"], rel=1e-12) and moved < 0
    assert lo["infer_usd_per_1M_tokens"] == q["infer_usd_per_1M_tokens"]  # the rent does not move


def test_a_fleet_not_sized_by_the_load_holds_its_replicas():
    q = compute(SERVE, CATALOG)  # the book model, no arrival rate
    assert q["srv_sens_sized_flag"] == 0
    assert q["srv_sens_replicas_low"] == q["srv_sens_replicas_high"] == SERVE.inference.replicas
    for k in ("load_dmonth_low", "load_dmonth_high", "load_d1M_low", "load_d1M_high", "output_d1M_high"):
        assert q[f"srv_sens_{k}_usd"] == 0, k


@pytest.mark.parametrize("tag, frac", [("low", -0.2), ("high", 0.2)])
def test_the_load_re_sizes_the_replicas_and_the_moved_fleet_meets_the_targets(chat, tag, frac):
    q = compute(chat, CATALOG)
    assert q["srv_sens_sized_flag"] == 1 and chat.inference.replicas == 8
    reps = q[f"srv_sens_replicas_{tag}"]
    assert reps == ss.replicas_for_load(arrival_rate_rps=20.0, frac=frac, max_load_rps_per_replica=q["srv_max_load_rps"])
    assert (q["srv_sens_replicas_low"], q["srv_sens_replicas_high"]) == (6, 9)
    moved = compute(_with(chat, "inference", arrival_rate_rps=20.0 * (1 + frac), replicas=int(reps)), CATALOG)
    assert moved["srv_tpot_target_miss_flag"] == moved["srv_ttft_target_miss_flag"] == 0
    assert moved["srv_load_saturated_flag"] == 0
    assert _month(moved) == pytest.approx(q["srv_sens_month_usd"] + q[f"srv_sens_load_dmonth_{tag}_usd"], rel=1e-12)
    assert moved["infer_usd_per_1M_tokens"] == pytest.approx(
        q["srv_sens_1M_usd"] + q[f"srv_sens_load_d1M_{tag}_usd"], rel=1e-9)


def test_output_tokens_move_the_cost_per_1M_on_the_fleet_held(chat):
    """U ~ 1/O on the fleet held (the step's 614.4 tokens are not a whole count: 1.25 x 512 = 640 checks the law)."""
    q = compute(chat, CATALOG)
    hi = compute(_with(chat, "inference", output_tokens=640), CATALOG)
    assert chat.inference.output_tokens == 512 and hi["infer_hourly_cost_usd"] == q["infer_hourly_cost_usd"]
    assert hi["infer_usd_per_1M_tokens"] == pytest.approx(q["srv_sens_1M_usd"] / 1.25, rel=1e-9)
    assert q["srv_sens_output_d1M_high_usd"] == pytest.approx(q["srv_sens_1M_usd"] / 1.2 - q["srv_sens_1M_usd"],
                                                              rel=1e-12)


def test_swings_are_the_span_of_the_bars(chat):
    q = compute(chat, CATALOG)
    # both loads round the replicas so that the cost per 1M moves up either way: the span is the larger bar
    lo, hi = q["srv_sens_load_d1M_low_usd"], q["srv_sens_load_d1M_high_usd"]
    assert q["srv_sens_load_swing_1M_usd"] == ss.span(lo, hi)
    assert q["srv_sens_price_swing_month_usd"] == pytest.approx(0.4 * q["srv_sens_month_usd"], rel=1e-12)


def test_tco_storage_follows_the_purpose():
    s, p = compute(SERVE, CATALOG), compute(PLAN, CATALOG)
    assert s["tco_storage_TB"] == s["tco_serving_storage_TB"] == pytest.approx(s["infer_weights_GB"] / 1000, rel=1e-15)
    assert s["tco_storage_TB"] < 1 < s["storage_total_TB"]  # 0.14 TB of weights, not the training's 20+ TB
    assert p["tco_storage_TB"] == p["storage_total_TB"]  # both: the training storage
    trained = compute(SERVE.model_copy(update={"purpose": "training"}), CATALOG)
    assert trained["tco_storage_TB"] == trained["storage_total_TB"]
