"""Line items of the Step Time sheet, last block: the training time in use, chosen by the scenario's
time model at its position in the list (1 ``step``: this sheet's step model; 2 ``mfu``: the Plan
sheet's figures at the MFU given; 3 ``measured``: the measured-rate block)."""

from __future__ import annotations


def _pick(step: str, mfu: str, measured: str) -> str:
    return f"=CHOOSE({{train_time_model_position}},{{{step}}},{{{mfu}}},{{{measured}}})"


ITEMS = {
    "train_time_model_position": "=INDEX(t_ch_training_time_model_position,MATCH({training.time_model},"
    "t_ch_training_time_model_choice,0))",
    "train_step_time_s": _pick("st_step_s", "plan_step_time_s", "meas_step_s"),
    "train_tokens_per_s": _pick("st_tokens_per_s", "plan_tokens_per_s", "meas_tokens_per_s"),
    "train_tokens_per_s_per_gpu": "={train_tokens_per_s}/{training.num_gpus}",
    "train_tokens_per_day": "={train_tokens_per_s}*c_s_per_day",
    "train_mfu": _pick("st_mfu", "training.mfu", "meas_mfu"),
    "train_days": _pick("st_train_days_with_overhead", "plan_train_days_with_overhead",
                        "meas_train_days_with_overhead"),
    "train_job_gpu_hours": "={training.num_gpus}*{train_days}*c_hours_per_day",
    "train_meets_target_flag": "=IF({train_days}<={training.target_days},1,0)",
    "train_gpus_needed": _pick("st_gpus_needed", "plan_gpus_needed", "meas_gpus_needed"),
    "train_days_at_needed_gpus": _pick("st_days_at_needed_gpus", "plan_days_at_needed_gpus", "meas_days_at_needed_gpus"),
    "train_mfu_in_band_flag": "=IF(AND({train_mfu}>=c_plan_mfu_band_low,{train_mfu}<=c_plan_mfu_band_high),1,0)",
    "train_step_vs_mfu_days_x": "={st_train_days_with_overhead}/{plan_train_days_with_overhead}",
}
