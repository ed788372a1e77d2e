"""Line items of the Plan block (Plan sheet): training throughput, time, GPU count and layout
(spec 17.5.2-17.5.10 and the numeric steps of the 17.9.4 planning procedure).

Counts are rounded up as ROUNDUP(ROUND(x, c_count_ceil_digits), 0): the ROUND drops float noise
(1120/7 = 160.00000000000003) before the ceiling, exactly as workbook.calc.plan.ceil_count_xl does.
"""

from __future__ import annotations

from workbook.calc.plan import COUNT_CEIL_DIGITS
from workbook.reference import layout as lay
from workbook.reference import training as tr

CONSTANTS = [
    ("count_ceil_digits", COUNT_CEIL_DIGITS, "digits",
     "Decimals kept before a count is rounded up (drops float noise)", "workbook convention (calc.plan)"),
    ("plan_state_bytes_per_param", lay.TRAIN_STATE_BYTES_PER_PARAM, "B/param",
     "Training state per parameter: BF16 W 2 + G 2, FP32 master 4 + m 4 + v 4", "spec 17.5.10 step 1"),
    ("plan_ga_per_pp_efficient", 4, "x", "Micro-batches per pipeline stage for an efficient pipeline (GA >= 4·PP)",
     "spec 17.5.7"),
    ("plan_min_batch_tokens", tr.MIN_GLOBAL_BATCH_TOKENS, "tokens", "Convergence floor of the global batch (256K)",
     "spec 17.5.7"),
    ("plan_mfu_band_low", tr.MFU_WARN_LOW_FRAC, "fraction", "Plausible MFU band, lower edge", "spec 17.5.2"),
    ("plan_mfu_band_high", tr.MFU_WARN_HIGH_FRAC, "fraction", "Plausible MFU band, upper edge", "spec 17.5.2"),
    ("plan_tp_max", lay.TP_MAX, "GPUs", "Largest TP degree (one NVLink domain)", "spec 17.5.8 table 17-62"),
]

#: cluster model FLOP/s at the scenario MFU: N · peak · MFU
_CLUSTER_FLOPS = "{training.num_gpus}*{mfu_peak_TFLOPS}*c_tera*{training.mfu}"

ITEMS = {
    "purpose_training_flag": '=IF(OR({purpose}="training",{purpose}="both"),1,0)',
    "purpose_serving_flag": '=IF(OR({purpose}="serving",{purpose}="both"),1,0)',
    "plan_train_FLOP": "={train_total_FLOPs}",
    "plan_dp": "={training.num_gpus}/({training.tp}*{training.cp}*{training.pp})",
    "plan_dp_cp": "={plan_dp}*{training.cp}",
    "plan_etp": "=IF(ISBLANK({training.etp}),{training.tp},{training.etp})",
    "plan_edp": "={training.num_gpus}/({plan_etp}*{training.ep}*{training.pp})",
    "plan_layers_per_stage": "={model_layers}/{training.pp}",
    "plan_nodes": "=ROUNDUP(ROUND({training.num_gpus}/{gpu_gpus_per_node},c_count_ceil_digits),0)",
    "plan_global_batch_seqs": "={training.micro_batch}*{training.grad_accum}*{plan_dp}",
    "plan_tokens_per_step": "={plan_global_batch_seqs}*{training.seq_len}",
    "plan_steps_total": "={training.tokens}/{plan_tokens_per_step}",
    "plan_tokens_per_s": f"={_CLUSTER_FLOPS}/{{train_FLOP_per_token}}",
    "plan_tokens_per_day": "={plan_tokens_per_s}*c_s_per_day",
    "plan_tokens_per_s_per_gpu": "={plan_tokens_per_s}/{training.num_gpus}",
    "plan_cluster_PFLOPS": "={training.num_gpus}*{mfu_peak_TFLOPS}*{training.mfu}/c_kilo",
    "plan_step_time_s": "={plan_tokens_per_step}/{plan_tokens_per_s}",
    "plan_micro_batch_time_ms": "={plan_step_time_s}/{training.grad_accum}*c_ms_per_s",
    "plan_train_time_s": f"={{plan_train_FLOP}}/({_CLUSTER_FLOPS})",
    "plan_train_days": "={plan_train_time_s}/c_s_per_day",
    "plan_train_days_with_overhead": "={plan_train_time_s}*{training.overhead_factor}/c_s_per_day",
    "plan_gpu_hours": "={training.num_gpus}*{plan_train_days_with_overhead}*c_hours_per_day",
    "plan_meets_target_flag": "=IF({plan_train_days_with_overhead}<={training.target_days},1,0)",
    "plan_train_state_TB": "={params_total}*c_plan_state_bytes_per_param/c_TB",
    "plan_gpus_memory_floor": "=ROUNDUP(ROUND({params_total}*c_plan_state_bytes_per_param"
    "/({gpu_hbm_GB}*{training.usable_hbm_frac}*c_GB),c_count_ceil_digits),0)",
    "plan_gpus_time_raw": "={plan_train_FLOP}*{training.overhead_factor}"
    "/({training.target_days}*c_s_per_day*{mfu_peak_TFLOPS}*c_tera*{training.mfu})",
    "plan_gpus_needed": "=ROUNDUP(ROUND(MAX({plan_gpus_time_raw},{plan_gpus_memory_floor})"
    "/({training.tp}*{training.cp}*{training.pp}),c_count_ceil_digits),0)*{training.tp}*{training.cp}*{training.pp}",
    "plan_gpus_needed_dp": "={plan_gpus_needed}/({training.tp}*{training.cp}*{training.pp})",
    "plan_nodes_to_buy": "=ROUNDUP(ROUND({training.num_gpus}*(1+{training.spare_fraction})/{gpu_gpus_per_node},"
    "c_count_ceil_digits),0)",
    "plan_gpus_to_buy": "={plan_nodes_to_buy}*{gpu_gpus_per_node}",
    "plan_days_at_needed_gpus": "={plan_train_FLOP}/({plan_gpus_needed}*{mfu_peak_TFLOPS}*c_tera*{training.mfu})"
    "*{training.overhead_factor}/c_s_per_day",
    "plan_bubble_frac": "=({training.pp}-1)/{training.grad_accum}",
    "plan_bubble_share_frac": "=({training.pp}-1)/({training.grad_accum}+{training.pp}-1)",
    "plan_ga_covers_pp_flag": "=IF({training.grad_accum}>={training.pp},1,0)",
    "plan_ga_efficient_flag": "=IF({training.grad_accum}>=c_plan_ga_per_pp_efficient*{training.pp},1,0)",
    "plan_global_batch_ok_flag": "=IF({plan_tokens_per_step}>=c_plan_min_batch_tokens,1,0)",
    "plan_mfu_in_band_flag": "=IF(AND({training.mfu}>=c_plan_mfu_band_low,{training.mfu}<=c_plan_mfu_band_high),1,0)",
    "plan_tp_in_node_flag": "=IF({training.tp}<=MIN({gpu_gpus_per_node},c_plan_tp_max),1,0)",
    "plan_pp_divides_layers_flag": "=IF(MOD({model_layers},{training.pp})=0,1,0)",
}
