"""Plan sheet against hand calculations (spec 17.5)."""

from __future__ import annotations

import math

import pytest

from tests.calc._ctx import PEAK, P, run
from workbook.calc import plan


def test_quantities_complete_and_finite():
    q = run(plan)
    names = [x.name for x in plan.QUANTITIES]
    assert len(names) == len(set(names)) and 10 <= len(names) <= 40
    assert len({x.label for x in plan.QUANTITIES}) == len(names)
    out = plan.compute(__import__("tests.calc._ctx", fromlist=["make_ctx"]).make_ctx())
    assert set(out) == set(names)
    assert all(math.isfinite(float(v)) for v in out.values())
    assert q["plan_dp"] == 64


def test_throughput_time_and_step():
    q = run(plan)
    tok_s = 64 * PEAK * 1e12 * 0.4 / (6 * P)  # 626,390 tok/s
    assert q["plan_tokens_per_s"] == pytest.approx(tok_s)
    assert q["plan_train_days"] == pytest.approx(6 * P * 1e12 / (64 * PEAK * 1e12 * 0.4) / 86400)  # 18.48 d
    assert q["plan_train_days"] == pytest.approx(18.477, rel=1e-4)
    assert q["plan_tokens_per_step"] == 1 * 8 * 64 * 4096
    assert q["plan_step_time_s"] == pytest.approx(2_097_152 / tok_s)  # 3.35 s
    assert q["plan_meets_target_flag"] == 1.0


def test_gpu_backsolve_and_rounding():
    q = run(plan, target_days=10, tp=8, pp=2, num_gpus=64, spare_fraction=0.05)
    raw = 6 * P * 1e12 / (10 * 86400 * PEAK * 1e12 * 0.4)  # 118.2
    assert q["plan_gpus_time_raw"] == pytest.approx(raw)
    assert q["plan_gpus_needed"] == 128 and q["plan_gpus_needed_dp"] == 8
    # procurement follows the job (N = 64) plus 5 % spares, in whole 8-GPU nodes: ceil(67.2 / 8) = 9 nodes
    assert q["plan_nodes_to_buy"] == 9 and q["plan_gpus_to_buy"] == 72
    assert q["plan_gpus_memory_floor"] == 2  # ceil(6.74e9 * 16 / 60e9)
    assert q["plan_meets_target_flag"] == 0.0


def test_overhead_bubble_flags():
    q = run(plan, overhead_factor=1.1, pp=4, num_gpus=64, grad_accum=8)
    assert q["plan_train_days_with_overhead"] == pytest.approx(1.1 * q["plan_train_days"])
    assert q["plan_bubble_frac"] == pytest.approx(3 / 8)
    assert q["plan_bubble_share_frac"] == pytest.approx(3 / 11)
    assert q["plan_ga_covers_pp_flag"] == 1 and q["plan_ga_efficient_flag"] == 0
    assert q["plan_global_batch_ok_flag"] == 1  # 8 x 16 x 4096 = 524K tokens
    assert q["plan_pp_divides_layers_flag"] == 1 and q["plan_tp_in_node_flag"] == 1
