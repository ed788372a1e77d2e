"""calc.cost on a SimpleNamespace context (LLaMA-7B on H800), checked by hand (spec 17.5.9, 17.8.11, T8)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from tests.calc.part_a_context import H800, make_context, run
from workbook.calc import cost, inference
from workbook.reference import training as tr
from workbook.scenario.model import CostInputs, InferenceInputs, TrainingInputs

GPU = SimpleNamespace(**vars(H800), price_on_demand_usd_per_gpu_hour=4.0, price_reserved_usd_per_gpu_hour=2.0,
                      price_spot_usd_per_gpu_hour=1.0)
GPU.price_usd_per_gpu_hour = lambda basis: getattr(GPU, f"price_{basis}_usd_per_gpu_hour")
COST = dict(gpu_hour_usd=2.0, electricity_usd_per_kWh=0.10, pue=1.4, server_capex_usd=300000.0, depreciation_years=3.0,
            infra_usd_per_1M_tokens=0.5)


def _ctx(cost_kw=None, **training):
    ctx = make_context(training=TrainingInputs(**training), inference=InferenceInputs(tp=1, batch=32),
                       cost=CostInputs(**{**COST, **(cost_kw or {})}))
    ctx.gpu = GPU
    run(ctx, "kv_cache")
    ctx.q.update(inference.compute(ctx))
    ctx.q["plan_gpus_to_buy"] = float(ctx.s.training.num_gpus)  # whole nodes: the plan's count is N
    # the serving figures in use (Inference sheet's in-use block) under the book model, no measured throughput
    ctx.q["srv_gpus_in_use"] = ctx.q["infer_num_gpus"]
    ctx.q["srv_tokens_per_s_total_in_use"] = ctx.q["decode_tokens_per_s_total"]
    t = ctx.s.training  # the training days in use (Step Time sheet) at the MFU given
    ctx.q["train_days"] = tr.train_time_days(total_FLOP=ctx.q["train_total_FLOPs"], num_gpus=t.num_gpus,
                                             peak_TFLOPS=ctx.q["train_peak_TFLOPS"], mfu=t.mfu,
                                             overhead_factor=t.overhead_factor)
    return ctx


def test_declares_every_quantity_finite():
    ctx = _ctx()
    out = cost.compute(ctx)
    assert set(out) == {q.name for q in cost.QUANTITIES}
    assert 10 <= len(cost.QUANTITIES) <= 40
    assert len({q.label for q in cost.QUANTITIES}) == len(cost.QUANTITIES)
    assert all(math.isfinite(float(v)) for v in out.values())


def test_training_cost_and_budget():
    ctx = _ctx(cost_kw={"budget_usd": 1e6}, num_gpus=256, mfu=0.38, tokens=2e12, target_days=10)
    out = cost.compute(ctx)
    days = ctx.q["train_total_FLOPs"] / (256 * 989.5e12 * 0.38) / 86400
    assert out["train_days_actual"] == pytest.approx(days, rel=1e-12)
    assert out["train_cost_usd"] == pytest.approx(256 * days * 24 * 2.0, rel=1e-12)
    assert out["train_cost_target_usd"] == pytest.approx(256 * 10 * 24 * 2.0)  # 17.9.1: $122,880
    assert out["budget_headroom_usd"] == pytest.approx(1e6 - max(out["train_cost_usd"], 122880.0))
    assert out["within_budget_flag"] == 1.0
    assert out["spot_saving_frac"] == pytest.approx(0.75)


def test_owned_hardware_and_inference_cost():
    ctx = _ctx(num_gpus=8)
    out = cost.compute(ctx)
    assert out["capex_per_gpu_usd"] == 37500.0
    power = 0.7 * 1.4 * 0.10  # kW x PUE x $/kWh
    assert out["power_usd_per_gpu_hour"] == pytest.approx(power)
    assert out["tco_usd_per_gpu_hour"] == pytest.approx(37500 / (3 * 8760) + power)
    assert out["break_even_gpu_hours"] == pytest.approx(37500 / (2.0 - power))
    thr = ctx.q["decode_tokens_per_s_total"]
    assert out["infer_usd_per_1M_tokens"] == pytest.approx(2.0 / (thr * 3600 / 1e6))
    assert out["infer_breakeven_M_tokens_per_day"] == pytest.approx(2.0 * 24 / (10.0 - 0.5))
    assert out["budget_given_flag"] == 0.0 and out["budget_headroom_usd"] == 0.0
