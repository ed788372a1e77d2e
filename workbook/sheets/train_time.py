"""Line items of the Step Time sheet, last block: the training time in use, chosen by the scenario's
time model (``step``: this sheet's step model; ``mfu``: the Plan sheet's figures at the MFU given)."""

from __future__ import annotations

_STEP = "{train_time_step_flag}=1"

ITEMS = {
    "train_time_step_flag": "=IF({training.time_model}=\"step\",1,0)",
    "train_step_time_s": f"=IF({_STEP},{{st_step_s}},{{plan_step_time_s}})",
    "train_tokens_per_s": f"=IF({_STEP},{{st_tokens_per_s}},{{plan_tokens_per_s}})",
    "train_tokens_per_s_per_gpu": "={train_tokens_per_s}/{training.num_gpus}",
    "train_tokens_per_day": "={train_tokens_per_s}*c_s_per_day",
    "train_mfu": f"=IF({_STEP},{{st_mfu}},{{training.mfu}})",
    "train_days": f"=IF({_STEP},{{st_train_days_with_overhead}},{{plan_train_days_with_overhead}})",
    "train_job_gpu_hours": "={training.num_gpus}*{train_days}*c_hours_per_day",
    "train_meets_target_flag": "=IF({train_days}<={training.target_days},1,0)",
    "train_gpus_needed": f"=IF({_STEP},{{st_gpus_needed}},{{plan_gpus_needed}})",
    "train_days_at_needed_gpus": f"=IF({_STEP},{{st_days_at_needed_gpus}},{{plan_days_at_needed_gpus}})",
    "train_mfu_in_band_flag": "=IF(AND({train_mfu}>=c_plan_mfu_band_low,{train_mfu}<=c_plan_mfu_band_high),1,0)",
    "train_step_vs_mfu_days_x": "={st_train_days_with_overhead}/{plan_train_days_with_overhead}",
}
