"""The early estimate (spec 17.9.4 §5 quick path, steps 1, 2, 4, 5 and 10) from a parameter count.

:func:`workbook.reference.planning.plan_10_step` does the arithmetic (FLOPs 6·P·D, the memory and
time floors, the factorisation that raises PP until 16·P/(TP·PP) + M_act + M_overhead fits, the
cost of the target days). The rounding of N is the request's: whole nodes, a multiple of TP·PP, and
DP a multiple of ``early_estimate.dp_multiple`` ("a convenient DP": the book rounds 615 to 640,
DP 40 = 5 x 8; a multiple of TP·PP alone would give 624).
"""

from __future__ import annotations

import math

from workbook.planner.request import ModelByCount, PlanRequest
from workbook.reference import planning as pl

#: the estimate's figures the report and --json show, in order
KEYS = ("P_total", "P_active", "D_tokens", "C_total_FLOPs", "MFU", "M_total_GB", "N_mem", "N_time_raw", "N_time",
        "N", "N_chosen", "nodes", "TP", "PP", "DP", "GA", "M_per_GPU_GB", "memory_fits", "V_DP_GB",
        "t_DP_amortised_ms", "ckpt_GB", "t_save_s", "T_actual_days", "cost_target_USD", "cost_actual_USD",
        "within_budget")


def params_of(req: PlanRequest, model) -> tuple[float, float, bool]:
    """(P_total, P_active, MoE) of the estimate: early_estimate, else the count, else the catalogue model."""
    ee = req.early_estimate
    if isinstance(req.model, ModelByCount):
        total, active, moe = req.model.params_total, req.model.params_active, req.model.moe
    else:
        total, moe = float(model.published_params_total), bool(model.moe)
        active = float(model.published_params_active) if moe and model.published_params_active else None
    total = ee.params_total or total
    active = ee.params_active or active or total
    return total, active, moe


def early_estimate(req: PlanRequest, gpu, model=None) -> dict[str, float]:
    """The quick-path plan on one GPU (requires tokens and target days)."""
    ee = req.early_estimate
    total, active, moe = params_of(req, model)
    price = req.gpu_hour_usd or gpu.price_usd_per_gpu_hour(req.price_basis)
    gpn = int(gpu.gpus_per_node)
    kw = dict(params_total=total, params_active=active, tokens=req.tokens, target_days=req.target_days,
              budget_usd=req.budget_usd if req.budget_usd is not None else math.inf,
              peak_TFLOPS=float(gpu.bf16_dense_TFLOPS), hbm_GB=float(gpu.hbm_GB), gpu_hour_usd=float(price),
              mfu=ee.mfu, moe=moe, act_GB=ee.act_GB, overhead_GB=ee.overhead_GB, tp=min(ee.tp, gpn),
              grad_accum=ee.grad_accum, fs_write_GBps=ee.fs_write_GBps, gpus_per_node=gpn)
    first = pl.plan_10_step(**kw)
    group = math.lcm(int(first["TP"] * first["PP"] * ee.dp_multiple), gpn)
    n = int(math.ceil(first["N"] / group - 1e-12) * group)
    out = pl.plan_10_step(**kw, num_gpus=n)
    res = {k: float(out[k]) for k in KEYS}
    res["gpu_hour_usd"] = float(price)
    res["budget_headroom_USD"] = float(out["budget_headroom_USD"]) if req.budget_usd is not None else None
    return res
