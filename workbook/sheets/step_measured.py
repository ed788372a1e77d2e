"""Line items of the Step Time sheet, fifth block: the training time at a measured hardware TFLOP/s
per GPU (hardware FLOPs per step / (N x rate); blank rate = the step model's hardware TFLOP/s)."""

from __future__ import annotations

_N = "{training.num_gpus}"

ITEMS = {
    "meas_TFLOPS_per_gpu": "=IF(ISBLANK({training.measured_TFLOPS_per_gpu}),{st_hardware_TFLOPS_per_gpu},"
    "{training.measured_TFLOPS_per_gpu})",
    "meas_step_s": f"={{st_hardware_FLOPs_per_step}}/({_N}*{{meas_TFLOPS_per_gpu}}*c_tera)",
    "meas_tokens_per_s": "={st_tokens_per_step}/{meas_step_s}",
    "meas_model_TFLOPS_per_gpu": f"={{st_model_FLOPs_per_step}}/({_N}*{{meas_step_s}})/c_tera",
    "meas_mfu": "={meas_model_TFLOPS_per_gpu}/{mfu_peak_TFLOPS}",
    "meas_hfu": "={meas_TFLOPS_per_gpu}/{mfu_peak_TFLOPS}",
    "meas_train_days": "={training.tokens}/{meas_tokens_per_s}/c_s_per_day",
    "meas_train_days_with_overhead": "={meas_train_days}*{training.overhead_factor}",
    "meas_gpus_time_raw": f"={_N}*{{meas_train_days_with_overhead}}/{{training.target_days}}",
    "meas_gpus_needed": "=ROUNDUP(ROUND(MAX({meas_gpus_time_raw},{plan_gpus_memory_floor})/{st_gpu_step},"
    "c_count_ceil_digits),0)*{st_gpu_step}",
    "meas_days_at_needed_gpus": f"={{meas_train_days_with_overhead}}*{_N}/{{meas_gpus_needed}}",
}
