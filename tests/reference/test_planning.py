"""Unit tests for workbook.reference.planning (spec 17.9.4-17.9.6)."""

import pytest

from workbook.reference import planning as pl


def test_plan_10_step_worked_example():
    r = pl.plan_10_step(params_total=70e9, tokens=3e12, target_days=60, budget_usd=2e6, peak_TFLOPS=989.5, hbm_GB=80,
                        gpu_hour_usd=2.0, mfu=0.4, act_GB=3, overhead_GB=2, tp=8, pp=2, num_gpus=640, grad_accum=16)
    assert (r["N_mem"], r["N_time"], r["N"], r["N_rounded"]) == (15, 615, 615, 624)
    assert r["DP"] == 40 and r["M_per_GPU_GB"] == 75.0
    assert r["V_DP_GB"] == pytest.approx(17.0625)
    assert r["t_DP_amortised_ms"] == pytest.approx(21.33, rel=1e-3)
    assert r["cost_target_USD"] == 1843200 and r["within_budget"] == 1.0
    assert r["T_actual_days"] == pytest.approx(57.5706, rel=1e-5)
    assert r["ckpt_GB"] == 700 and r["t_save_s"] == 7


def test_plan_raises_pp_until_fit():
    r = pl.plan_10_step(params_total=70e9, target_days=60, budget_usd=1e9, peak_TFLOPS=989.5, hbm_GB=80,
                        gpu_hour_usd=2.0, tp=8, pp=1)
    assert r["memory_fits"] == 1.0 and r["PP"] >= 2 and r["D_tokens"] == 1.4e12


def test_rules_and_tables():
    assert pl.quick_param_count(layers=32, d_model=4096, d_ff=11008) == 6476005376
    assert pl.cluster_failure_interval_min(mtbf_gpu_hours=500, num_gpus=1000) == pytest.approx(30)
    assert pl.mfu_rule9(80) == pytest.approx(0.43) and pl.mfu_rule9(1e6) == 0.33
    assert pl.gpu_ridges()["H20"] == pytest.approx(37.0)
    assert pl.h20_advantage(h800=0.91, h20=0.30, kind="x_cheaper") == pytest.approx(3.0333, rel=1e-4)
    assert pl.mfu_lookup(moe=True, num_gpus=2048) == pytest.approx(0.25)
    checks = pl.rules_of_thumb_checks(tp=8, ep=8, gpus_per_node=8, t_comm_s=0.34, grad_accum=16, t_compute_s=1.0)
    assert checks == {"tp_within_nvlink": True, "ep_within_nvlink": False, "dp_hidden_by_ga": True}
