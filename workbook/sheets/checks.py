"""Line items of the Checks sheet (0 = pass, 1 = fail). A check that cannot be computed (an input
in error upstream) shows 1, never an error value; a check that does not apply to the scenario's
purpose shows 0."""

from workbook.calc.checks import CHECK_REL_TOL, HARD, TCO_LAST_CUMULATIVE, WARNINGS

CONSTANTS = [
    ("check_rel_tol", CHECK_REL_TOL, "fraction", "Relative tolerance of reconciliation checks", "workbook-rules §11"),
]

_EXPR = {
    "check_layout_gpus": "IF(AND(MOD({training.num_gpus},{training.tp}*{training.cp}*{training.pp})=0,"
    "MOD({training.num_gpus},{plan_etp}*{training.ep}*{training.pp})=0,"
    "MOD({model_moe}*{model_n_routed_experts},{training.ep})=0),0,1)",
    "check_tp_in_node": "1-{plan_tp_in_node_flag}",
    "check_pp_divides_layers": "1-{plan_pp_divides_layers_flag}",
    "check_train_memory_fits": "1-{zero_fits_hbm_flag}",
    "check_zero_monotonic": "IF(AND({zero0_static_per_gpu_GB}>={zero1_static_per_gpu_GB},"
    "{zero1_static_per_gpu_GB}>={zero2_static_per_gpu_GB},{zero2_static_per_gpu_GB}>={zero3_static_per_gpu_GB}),0,1)",
    "check_meets_target_days": "1-{train_meets_target_flag}",
    "check_within_budget": "1-{within_budget_flag}",
    "check_gpu_count": "IF(AND({train_gpus_billed}={plan_gpus_to_buy},{plan_gpus_to_buy}>={training.num_gpus},"
    "MOD({plan_gpus_to_buy},{gpu_gpus_per_node})=0),0,1)",
    "check_cost_reconciles": "IF(ABS({train_cost_usd}-{train_gpu_hours}*{gpu_hour_usd})"
    ">c_check_rel_tol*ABS({train_cost_usd}),1,0)",
    "check_tco_reconciles": "IF(ABS({tco_total_usd}-{" + TCO_LAST_CUMULATIVE + "})"
    ">c_check_rel_tol*ABS({tco_total_usd}),1,0)",
    "check_cf_rent_ask": "IF(ABS({cf_rent_in_window_usd}-{cf_rent_total_usd})"
    ">c_check_rel_tol*ABS({cf_rent_in_window_usd}),1,0)",
    "check_cf_capex": "IF(ABS({tco_capex_usd}-{cf_capex_total_usd})>c_check_rel_tol*ABS({tco_capex_usd}),1,0)",
    "check_cf_periods": "{cf_periods_off_flag}",
    "check_infer_memory_fits": "1-{srv_fits_in_use_flag}",
    "check_decode_is_max": "IF(ABS({tpot_ms}-MAX({decode_compute_ms},{decode_memory_ms}))>c_check_rel_tol*ABS({tpot_ms}),1,0)",
    "check_serving_load_stable": "{srv_load_unstable_flag}",
    "check_ttft_target": "{srv_ttft_target_miss_flag}",
    "check_tpot_target": "{srv_tpot_target_miss_flag}",
    "warn_comm_share": "{comm_over_limit_flag}",
    "warn_ckpt_interval": "1-{ckpt_interval_ok_flag}",
    "warn_mfu_band": "1-{train_mfu_in_band_flag}",
    "warn_pipeline_fill": "1-{plan_ga_efficient_flag}",
    "warn_global_batch": "1-{plan_global_batch_ok_flag}",
}
_FLAG = {"training": "{purpose_training_flag}", "serving": "{purpose_serving_flag}", "all": "1"}  # Plan sheet
_HARD, _WARN = [h[0] for h in HARD], [w[0] for w in WARNINGS]

ITEMS = {
    # the outer IFERROR: a purpose flag reads "input error" while an input of the column is in error
    **{n: f"=IFERROR(IFERROR({_EXPR[n]},1)*{_FLAG[scope]},1)" for n, _, _, scope in HARD + WARNINGS},
    "hard_failures_count": f"=SUM({{{_HARD[0]}}}:{{{_HARD[-1]}}})",
    "warnings_count": f"=SUM({{{_WARN[0]}}}:{{{_WARN[-1]}}})",
}
