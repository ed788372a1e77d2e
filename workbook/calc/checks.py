"""Checks (workbook-rules.md rule 11): each is 0 when it passes, 1 when it fails.

Structural checks (layout, reconciliations) hold for every valid scenario; plan checks (memory
fits, budget) must pass for every shipped scenario and flag a plan that needs rework.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q

#: relative tolerance of the reconciliation checks (also the workbook constant c_check_rel_tol)
CHECK_REL_TOL = 1e-9

QUANTITIES = [
    Q("check_layout_gpus", "0/1", "Layout: TP x PP x DP equals the GPU count", "17.5.8"),
    Q("check_tp_in_node", "0/1", "Layout: TP fits inside one NVLink node", "17.5.8"),
    Q("check_pp_divides_layers", "0/1", "Layout: PP divides the layer count", "17.5.8"),
    Q("check_train_memory_fits", "0/1", "Training memory per GPU fits the HBM at the chosen ZeRO stage", "17.4.8"),
    Q("check_zero_monotonic", "0/1", "ZeRO: each stage needs no more memory per GPU than the one before", "17.4.8"),
    Q("check_infer_memory_fits", "0/1", "Serving memory per GPU fits the HBM", "17.4.11"),
    Q("check_decode_is_max", "0/1", "Decode step time is the larger of its compute and memory times", "17.8.3"),
    Q("check_cost_reconciles", "0/1", "Training cost = GPU-hours x price per GPU-hour", "17.5.9"),
    Q("check_within_budget", "0/1", "Training cost within the budget (no budget = pass)", "17.9.4"),
]


def _off(a: float, b: float) -> float:
    return 1.0 if abs(a - b) > CHECK_REL_TOL * abs(a) else 0.0


def compute(ctx: Context) -> dict[str, float]:
    q, t = ctx.q, ctx.s.training
    zero = [q["zero0_static_per_gpu_GB"], q["zero1_static_per_gpu_GB"], q["zero2_static_per_gpu_GB"],
            q["zero3_static_per_gpu_GB"]]
    monotonic = zero[0] >= zero[1] and zero[1] >= zero[2] and zero[2] >= zero[3]
    return {
        "check_layout_gpus": float(t.num_gpus - t.tp * t.pp * q["plan_dp"]),
        "check_tp_in_node": 1.0 - q["plan_tp_in_node_flag"],
        "check_pp_divides_layers": 1.0 - q["plan_pp_divides_layers_flag"],
        "check_train_memory_fits": 1.0 - q["zero_fits_hbm_flag"],
        "check_zero_monotonic": 0.0 if monotonic else 1.0,
        "check_infer_memory_fits": 1.0 - q["infer_fits_flag"],
        "check_decode_is_max": _off(q["tpot_ms"], max(q["decode_compute_ms"], q["decode_memory_ms"])),
        "check_cost_reconciles": _off(q["train_cost_usd"], q["train_gpu_hours"] * q["gpu_hour_usd"]),
        "check_within_budget": 1.0 - q["within_budget_flag"],
    }
