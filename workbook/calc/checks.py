"""Checks (workbook-rules.md rule 11): each is 0 when it passes, 1 when it fails.

Hard checks are failures: the plan cannot run as stated (layout, memory, deadline, budget,
reconciliations); the master check counts them and the input errors. Warnings flag a plan that
runs but against a planning guideline (communication share, checkpoint interval against MTBF,
MFU band, pipeline fill, batch floor); they are shown, not counted in the master check.
Training checks apply when the scenario's purpose is training or both, serving checks when it is
serving or both; a check that does not apply is 0.
"""

from __future__ import annotations

from workbook.calc.base import Context, Q
from workbook.calc.tco_years import YEARS, key

#: the TCO table's last cumulative cash out (calc.tco_years), reconciled with the TCO total
TCO_LAST_CUMULATIVE = key(YEARS[-1], "cumulative")

#: relative tolerance of the reconciliation checks (also the workbook constant c_check_rel_tol)
CHECK_REL_TOL = 1e-9

#: (name, label, section, applies to: "training" / "serving" / "all")
HARD = [
    ("check_layout_gpus", "Layout: TP x CP x PP x DP and ETP x EP x PP divide the GPU count, EP the experts",
     "17.5.8", "training"),
    ("check_tp_in_node", "Layout: TP fits inside one NVLink node", "17.5.8", "training"),
    ("check_pp_divides_layers", "Layout: PP divides the layer count", "17.5.8", "training"),
    ("check_train_memory_fits", "Training memory per GPU fits the HBM at the chosen ZeRO stage", "17.4.8", "training"),
    ("check_zero_monotonic", "ZeRO: each stage needs no more memory per GPU than the one before", "17.4.8", "training"),
    ("check_meets_target_days", "Training finishes within the target days on the job's GPUs (time model in use)",
     "17.5.4", "training"),
    ("check_within_budget", "Training cost within the budget (no budget = pass)", "17.9.4", "training"),
    ("check_gpu_count", "GPU count: cost priced on the GPUs procured (whole nodes, at least the job's)", "17.5.4",
     "training"),
    ("check_cost_reconciles", "Training cost = GPU-hours x price per GPU-hour", "17.5.9", "training"),
    ("check_tco_reconciles", "Owned TCO by year adds up: cash out over the years = capex + opex x years",
     "17.9.3", "training"),
    ("check_cf_rent_ask", "Cash flow: the rent path's months add up to the rent asked for in the window",
     "issue 23", "all"),
    ("check_cf_capex", "Cash flow: the buy path's capex by month adds up to the TCO sheet's hardware capex",
     "issue 23", "all"),
    ("check_cf_periods", "Cash flow: the fiscal years and the fiscal quarters add up to the months (rent and buy)",
     "issue 23", "all"),
    ("check_infer_memory_fits", "Serving memory per GPU fits the HBM (serving model in use)", "17.4.11", "serving"),
    ("check_decode_is_max", "Decode step time is the larger of its compute and memory times", "17.8.3", "serving"),
    ("check_serving_load_stable", "Serving: the arrival rate is below what the group sustains (engine model)",
     "docs/serving.md", "serving"),
    ("check_ttft_target", "Serving: time to first token meets the target (no target = pass)", "docs/serving.md",
     "serving"),
    ("check_tpot_target", "Serving: time per output token meets the target (no target = pass)", "docs/serving.md",
     "serving"),
]
WARNINGS = [
    ("warn_comm_share", "Communication share above the planning limit", "17.9.5", "training"),
    ("warn_ckpt_interval", "Checkpoint interval longer than the MTBF rule allows", "17.7.4", "training"),
    ("warn_mfu_band", "MFU in use outside the plausible 20-60 % band", "17.5.2", "training"),
    ("warn_pipeline_fill", "Pipeline under-filled: GA below 4 x PP", "17.5.7", "training"),
    ("warn_global_batch", "Global batch below the 256K-token floor", "17.5.7", "training"),
]

QUANTITIES = [
    *[Q(n, "0/1", label, sec, note="hard") for n, label, sec, _ in HARD],
    *[Q(n, "0/1", label, sec, note="warning") for n, label, sec, _ in WARNINGS],
    Q("hard_failures_count", "count", "Hard checks failed", "rules §11"),
    Q("warnings_count", "count", "Warnings", "rules §11"),
]


def _off(a: float, b: float) -> float:
    return 1.0 if abs(a - b) > CHECK_REL_TOL * abs(a) else 0.0


def _layout_fails(t, model, etp: float) -> float:
    """1 unless N = TP·CP·PP·DP = ETP·EP·PP·EDP in whole numbers and EP splits the routed experts."""
    experts = int(model.n_routed_experts or 0) if model.moe else 0
    ok = (t.num_gpus % (t.tp * t.cp * t.pp) == 0 and t.num_gpus % (int(etp) * t.ep * t.pp) == 0
          and experts % t.ep == 0)
    return 0.0 if ok else 1.0


def _raw(ctx: Context) -> dict[str, float]:
    q, t = ctx.q, ctx.s.training
    zero = [q["zero0_static_per_gpu_GB"], q["zero1_static_per_gpu_GB"], q["zero2_static_per_gpu_GB"],
            q["zero3_static_per_gpu_GB"]]
    monotonic = zero[0] >= zero[1] >= zero[2] >= zero[3]
    buy, gpn = q["plan_gpus_to_buy"], int(ctx.gpu.gpus_per_node)
    return {
        "check_layout_gpus": _layout_fails(t, ctx.model, q["plan_etp"]),
        "check_tp_in_node": 1.0 - q["plan_tp_in_node_flag"],
        "check_pp_divides_layers": 1.0 - q["plan_pp_divides_layers_flag"],
        "check_train_memory_fits": 1.0 - q["zero_fits_hbm_flag"],
        "check_zero_monotonic": 0.0 if monotonic else 1.0,
        "check_meets_target_days": 1.0 - q["train_meets_target_flag"],
        "check_within_budget": 1.0 - q["within_budget_flag"],
        "check_gpu_count": 0.0 if (q["train_gpus_billed"] == buy and buy >= t.num_gpus and buy % gpn == 0) else 1.0,
        "check_cost_reconciles": _off(q["train_cost_usd"], q["train_gpu_hours"] * q["gpu_hour_usd"]),
        "check_tco_reconciles": _off(q["tco_total_usd"], q[TCO_LAST_CUMULATIVE]),
        "check_cf_rent_ask": _off(q["cf_rent_in_window_usd"], q["cf_rent_total_usd"]),
        "check_cf_capex": _off(q["tco_capex_usd"], q["cf_capex_total_usd"]),
        "check_cf_periods": q["cf_periods_off_flag"],
        "check_infer_memory_fits": 1.0 - q["srv_fits_in_use_flag"],
        "check_decode_is_max": _off(q["tpot_ms"], max(q["decode_compute_ms"], q["decode_memory_ms"])),
        "check_serving_load_stable": q["srv_load_unstable_flag"],
        "check_ttft_target": q["srv_ttft_target_miss_flag"],
        "check_tpot_target": q["srv_tpot_target_miss_flag"],
        "warn_comm_share": q["comm_over_limit_flag"],
        "warn_ckpt_interval": 1.0 - q["ckpt_interval_ok_flag"],
        "warn_mfu_band": 1.0 - q["train_mfu_in_band_flag"],
        "warn_pipeline_fill": 1.0 - q["plan_ga_efficient_flag"],
        "warn_global_batch": 1.0 - q["plan_global_batch_ok_flag"],
    }


def compute(ctx: Context) -> dict[str, float]:
    applies = {"training": ctx.q["purpose_training_flag"], "serving": ctx.q["purpose_serving_flag"],
               "all": 1.0}  # Plan sheet
    raw = _raw(ctx)
    out = {}
    for name, _, _, scope in HARD + WARNINGS:
        out[name] = raw[name] * applies[scope]
    hard = sum(out[n] for n, *_ in HARD)
    out["hard_failures_count"] = hard
    out["warnings_count"] = sum(out[n] for n, *_ in WARNINGS)
    return out
