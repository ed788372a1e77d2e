"""Line items of the Checks sheet (0 = pass, 1 = fail)."""

from workbook.calc.checks import CHECK_REL_TOL

CONSTANTS = [
    ("check_rel_tol", CHECK_REL_TOL, "-", "Relative tolerance of reconciliation checks", "workbook-rules §11"),
]

ITEMS = {
    "check_layout_gpus": "={training.num_gpus}-{training.tp}*{training.pp}*{plan_dp}",
    "check_tp_in_node": "=1-{plan_tp_in_node_flag}",
    "check_pp_divides_layers": "=1-{plan_pp_divides_layers_flag}",
    "check_train_memory_fits": "=1-{zero_fits_hbm_flag}",
    "check_zero_monotonic": "=IF(AND({zero0_static_per_gpu_GB}>={zero1_static_per_gpu_GB},"
    "{zero1_static_per_gpu_GB}>={zero2_static_per_gpu_GB},{zero2_static_per_gpu_GB}>={zero3_static_per_gpu_GB}),0,1)",
    "check_infer_memory_fits": "=1-{infer_fits_flag}",
    "check_decode_is_max": "=IF(ABS({tpot_ms}-MAX({decode_compute_ms},{decode_memory_ms}))>c_check_rel_tol*ABS({tpot_ms}),1,0)",
    "check_cost_reconciles": "=IF(ABS({train_cost_usd}-{train_gpu_hours}*{gpu_hour_usd})>c_check_rel_tol*ABS({train_cost_usd}),1,0)",
    "check_within_budget": "=1-{within_budget_flag}",
}
